/**
 * Websocket pushes at scale: sockets subscribed to the extobjs collection while records are created
 * over HTTP. Latency runs from the commit (the record's `ext.lwt`, stamped by the server as the
 * write begins, read from the create's answer) to the frame read by the bench's bare client
 * (bench/ws-client.ts, in this process, on the same cores: its cost is in the figure). One clock:
 * same machine; `lwt` has millisecond precision and precedes the commit by the transaction's wait
 * and work, so a figure is high by up to a millisecond plus that wait and work. The server's CPU per pushed frame
 * is its /proc CPU time over the writes divided by the frames delivered (the writes' own cost
 * included).
 *
 * `bun bench/ws-push.ts [N ...]` (default 1000 10000) runs N sockets on plain Bun.serve publishing to
 * one topic (bench/raw-ws-server.ts: the floor), then on one process's direct listener (GATEWAY=off), 5,000
 * through the public port (GATEWAY=on: the gateway's front serves them) after their floor
 * (bench/raw-listen-ws-server.ts: Bun.listen, a JS write per socket, as the front does), and the
 * cross-process case: APP_PROCESSES=2 on the machine's Redis (BENCH_REDIS_URL), sockets through the
 * public port on both processes, creates at BENCH_WS_RATE a second (default 1000) for
 * BENCH_WS_SECONDS (default 3) after BENCH_WS_WARMUP seconds (default 1) left out, latency split by
 * whether the socket is on the process that took the write. BENCH_WS_WRITES sets the fan-out cases' writes (default 20, a quarter second apart);
 * BENCH_WS_ONLY=direct|gateway|cross runs one kind. BENCH_CPU_PROF=<dir> profiles the service (each
 * app process: they inherit the runtime's flags).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pinnedConnections, processOf } from './http-pinned'
import {
  create,
  createBody,
  createPath,
  cpuTicks,
  created,
  frameReader,
  openSockets,
  perFrame,
  SUBSCRIBE,
  startRawServer,
} from './push-measure'
import { type BenchService, percentile, rssKb, startBenchService } from './service-process'
import { type BareSocket, connectBare } from './ws-client'

const COUNTS = process.argv.slice(2).map(Number).filter(Boolean)
const WRITES = Number(process.env.BENCH_WS_WRITES ?? 20)
const WRITE_GAP_MS = 250
const GATEWAY_SOCKETS = 5000
const CROSS_SOCKETS = 20
const MAX_IN_FLIGHT = 32
const RATE = Number(process.env.BENCH_WS_RATE ?? 1000)
const SECONDS = Number(process.env.BENCH_WS_SECONDS ?? 3)
/** Seconds of creates at the rate before the measured ones: a process's first second (compiling) is not its pace. */
const WARMUP = Number(process.env.BENCH_WS_WARMUP ?? 1)
const ONLY = process.env.BENCH_WS_ONLY
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const PROFILE = process.env.BENCH_CPU_PROF
const profile = PROFILE ? ['--cpu-prof-md', `--cpu-prof-dir=${PROFILE}`] : []

const NAMES = {
  raw: 'raw Bun.serve publish',
  listen: 'raw Bun.listen, a write per socket',
  off: 'direct',
  on: 'through the public port',
}

const ms = (sorted: number[], p: number) => (sorted.length ? percentile(sorted, p).toFixed(1) : '-')

/** N sockets, WRITES creates a quarter second apart: every socket takes every event. */
async function fanout(count: number, target: 'on' | 'off' | 'raw' | 'listen'): Promise<void> {
  const service =
    target === 'raw' || target === 'listen'
      ? await startRawServer(target === 'raw' ? 'raw-ws-server.ts' : 'raw-listen-ws-server.ts')
      : // every bench socket comes from 127.0.0.1: the per-address cap would refuse most of them
        await startBenchService({ GATEWAY: target, GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: '0' }, profile)
  const { url: base, token, pid } = service
  const arrivals: number[][] = Array.from({ length: WRITES }, () => [])
  const { state, onFrameOf } = frameReader((w, at) => arrivals[w]?.push(at))
  const onFrame = onFrameOf(0)
  let sockets: BareSocket[] = []
  try {
    const before = await rssKb(pid)
    const fds = readdirSync(`/proc/${pid}/fd`).length
    sockets = await openSockets(`${base.replace('http', 'ws')}/ws?token=${token}`, count, onFrame, () => state.acks)
    const after = await rssKb(pid)
    const fdsPerSocket = (readdirSync(`/proc/${pid}/fd`).length - fds) / count
    const cpu0 = await cpuTicks(pid)
    const client0 = process.cpuUsage()
    const commits: number[] = []
    for (let w = 0; w < WRITES; w++) {
      commits.push((await create(base, token, w)).commit)
      await Bun.sleep(WRITE_GAP_MS)
    }
    const expected = count * WRITES
    const until = Date.now() + 10_000
    while (state.events < expected && Date.now() < until) await Bun.sleep(20)
    const server = perFrame(await cpuTicks(pid), cpu0, state.events)
    const client = process.cpuUsage(client0)
    const all = arrivals.flatMap((list, w) => list.map((at) => at - commits[w]!)).sort((a, b) => a - b)
    const first = arrivals.map((list, w) => Math.min(...list) - commits[w]!).sort((a, b) => a - b)
    const last = arrivals.map((list, w) => Math.max(...list) - commits[w]!).sort((a, b) => a - b)
    const clientUs = (n: number) => (n / Math.max(1, state.events)).toFixed(1)
    console.log(
      `| ${count} ${NAMES[target]} | ${ms(all, 0.5)} | ${ms(all, 0.99)} | ${ms(first, 0.5)} | ${ms(last, 0.5)} / ${ms(last, 1)} | ${state.events}/${expected} | ${server} | ${clientUs(client.user)} + ${clientUs(client.system)} µs | ${(((after - before) * 1024) / count / 1024).toFixed(1)} KiB | ${fdsPerSocket.toFixed(2)} |`,
    )
  } finally {
    for (const ws of sockets) ws.close()
    await service.stop()
  }
}

/**
 * The floor across processes: two bench/raw-cross-server.ts on one port, a SQLite file and Redis
 * shared; its CPU is both processes'.
 */
async function startRawCluster(): Promise<BenchService & { cpu(): Promise<[number, number]> }> {
  const work = mkdtempSync(join(tmpdir(), 'platform-bench-'))
  const env = { DB: join(work, 'floor.db'), REDIS_URL: REDIS, CHANNEL: `bench:ws:${process.pid}:floor` }
  const started: BenchService[] = []
  try {
    // the first on a port of the system's choosing (not a PORT of the bench's environment), the second on it
    started.push(await startRawServer('raw-cross-server.ts', { ...env, INDEX: '0', PORT: '0' }))
    const port = new URL(started[0]!.url).port
    started.push(await startRawServer('raw-cross-server.ts', { ...env, INDEX: '1', PORT: port }))
  } catch (err) {
    await Promise.all(started.map((s) => s.stop()))
    rmSync(work, { recursive: true, force: true })
    throw err
  }
  const [first, second] = started as [BenchService, BenchService]
  const stop = async () => {
    await Promise.all([first.stop(), second.stop()])
    rmSync(work, { recursive: true, force: true })
  }
  const cpu = async () => {
    const [a, b] = await Promise.all([cpuTicks(first.pid), cpuTicks(second.pid)])
    return [a[0] + b[0], a[1] + b[1]] as [number, number]
  }
  return { ...first, stop, cpu }
}

/** Two processes on Redis (the floor's, or the service's app processes), creates at RATE a second; latency split by the socket's process. */
async function crossProcess(target: 'raw' | 'on'): Promise<void> {
  const service: BenchService & { cpu?(): Promise<[number, number]> } =
    target === 'raw'
      ? await startRawCluster()
      : await startBenchService(
          {
            GATEWAY: 'on',
            APP_PROCESSES: '2',
            GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: '0',
            REDIS_URL: REDIS,
            KV_PREFIX: `bench:ws:${process.pid}:`,
          },
          profile,
        )
  const { url: base, token, pid } = service
  const cpu = service.cpu ?? (() => cpuTicks(pid))
  const warm = RATE * WARMUP
  const total = warm + RATE * SECONDS
  const writes: ({ commit: number; process: string } | undefined)[] = new Array(total)
  // each frame's write, arrival and socket, in arrays made before (the bench's collections were in its figures)
  const capacity = total * CROSS_SOCKETS
  const frameW = new Int32Array(capacity)
  const frameAt = new Float64Array(capacity)
  const frameSocket = new Uint8Array(capacity)
  let frameCount = 0
  const socketProcess: string[] = []
  const { state, onFrameOf } = frameReader((w, at, socket) => {
    if (frameCount === capacity) return
    frameW[frameCount] = w
    frameAt[frameCount] = at
    frameSocket[frameCount++] = socket
  })
  const sockets: BareSocket[] = []
  let pool: Awaited<ReturnType<typeof pinnedConnections>> | undefined
  try {
    // the creates go to each process in turn (MAX_IN_FLIGHT in all), on keep-alive connections of its own
    pool = await pinnedConnections(base, 2, MAX_IN_FLIGHT / 2, '/healthz')
    const to = pool
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
    const createOn = async (n: number) => {
      const answer = await to.post(n % 2, createPath, headers, createBody(n))
      return created(n, answer.status, answer.body, answer.headers['x-request-id'])
    }
    const wsUrl = `${base.replace('http', 'ws')}/ws?token=${token}`
    for (let i = 0; i < CROSS_SOCKETS; i++) {
      const socket = await connectBare(wsUrl, onFrameOf(i))
      socketProcess[i] = processOf(/x-request-id: (\S+)/i.exec(socket.head)?.[1])
      socket.send(SUBSCRIBE)
      sockets.push(socket)
    }
    while (state.acks < CROSS_SOCKETS) await Bun.sleep(20)
    let cpu0 = await cpu()
    let started = performance.now()
    let measuring = warm === 0
    const inFlight: Promise<void>[] = []
    // a failed create ends the run once the loop is out (handled at once, so none goes unhandled meanwhile)
    let failure: unknown
    for (let w = 0; w < total && failure === undefined; ) {
      if (w === warm && !measuring) {
        measuring = true
        // the warm-up's writes are done: the measured ones start here, with the CPU count
        await Promise.all(inFlight.splice(0))
        ;[cpu0, started] = [await cpu(), performance.now() - (warm * 1000) / RATE]
      }
      const due = Math.min(total, Math.floor(((performance.now() - started) * RATE) / 1000))
      // one create at a time on a connection: a late write waits for one of its process's to be free
      for (; w < due && to.free(w % 2); w++) {
        const n = w
        inFlight.push(
          createOn(n).then(
            (r) => {
              writes[n] = r
            },
            (err) => {
              failure ??= err
            },
          ),
        )
      }
      await Bun.sleep(1)
    }
    await Promise.all(inFlight)
    if (failure !== undefined) throw failure
    const seconds = (performance.now() - started) / 1000 - WARMUP
    const expected = total * CROSS_SOCKETS
    const until = Date.now() + 10_000
    while (state.events < expected && Date.now() < until) await Bun.sleep(20)
    const server = perFrame(await cpu(), cpu0, state.events - warm * CROSS_SOCKETS)
    const same: number[] = []
    const other: number[] = []
    for (let f = 0; f < frameCount; f++) {
      const write = writes[frameW[f]!]
      if (write && frameW[f]! >= warm)
        (write.process === socketProcess[frameSocket[f]!] ? same : other).push(frameAt[f]! - write.commit)
    }
    same.sort((a, b) => a - b)
    other.sort((a, b) => a - b)
    const spread = new Set(socketProcess).size
    console.log(
      `| ${target === 'raw' ? 'floor: 2 Bun.serve, SQLite, Redis' : 'APP_PROCESSES=2'}, ${CROSS_SOCKETS} sockets on ${spread} processes, ${((total - warm) / seconds).toFixed(0)} creates/s | ${ms(same, 0.5)} / ${ms(same, 0.99)} ms (${same.length}) | ${ms(other, 0.5)} / ${ms(other, 0.99)} ms (${other.length}) | ${state.events}/${expected} | ${server} |`,
    )
  } finally {
    for (const ws of sockets) ws.close()
    pool?.close()
    await service.stop()
  }
}

if (!ONLY || ONLY === 'direct' || ONLY === 'gateway') {
  console.log(
    '\nwebsocket pushes (commit -> frame read by the bench client; server and bench client CPU per frame delivered):',
  )
  console.log(
    '| sockets | p50 ms | p99 ms | first socket p50 ms | last socket p50 / max ms | delivered / expected | server CPU per frame (user + sys) | client CPU per frame | RSS per socket | descriptors per socket |',
  )
  console.log('|---|---|---|---|---|---|---|---|---|---|')
  if (ONLY !== 'gateway')
    for (const n of COUNTS.length ? COUNTS : [1000, 10_000]) {
      await fanout(n, 'raw')
      await fanout(n, 'off')
    }
  if (ONLY !== 'direct') {
    await fanout(GATEWAY_SOCKETS, 'listen')
    await fanout(GATEWAY_SOCKETS, 'on')
  }
}
if (!ONLY || ONLY === 'cross') {
  console.log(
    '\nwebsocket pushes across processes (commit -> frame; same: the socket is on the process that took the write):',
  )
  console.log(
    '| case | same process p50 / p99 | other process p50 / p99 | delivered / expected | server CPU per frame |',
  )
  console.log('|---|---|---|---|---|')
  await crossProcess('raw')
  await crossProcess('on')
}
