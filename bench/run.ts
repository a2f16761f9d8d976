/**
 * `bun run bench`: hot paths of the service measured next to the raw Bun.serve baseline, in one run,
 * on loopback, with wrk (-t2 -c64). Every case uses the same kind of wrk script (random paths from a
 * list), so the ratios compare like with like. BENCH_SECONDS sets the length of each measured round,
 * BENCH_ROUNDS how many interleaved rounds each case gets. Server CPU per request comes from /proc and
 * is the figure least disturbed by other load on the machine. BENCH_ONLY=<text> runs the baseline and
 * the cases whose name (or group) holds the text. The two floor cases show where a point read's time
 * goes: the gateway's front with no app behind it, and the app's least route.
 */
import { mkdtempSync, rmSync, truncateSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from 'redis'
import { type Case, hotPathCases, type Target } from './run-cases'
import { cpuSeconds } from './service-process'
import { ensureWrk, luaScript, wrk, type WrkResult } from './wrk'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const WARMUP_SECONDS = 2
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
const OBJECTS = 1000
const MODEL_RECORDS = 100_000
const root = join(import.meta.dir, '..')
const work = mkdtempSync(join(tmpdir(), 'platform-bench-'))
const children: ReturnType<typeof Bun.spawn>[] = []

/**
 * Starts a server with its stdout in a file of the work directory, and waits for `pattern` there.
 * A file, as a service's log usually ends in one: a pipe drained by this process (a JS stream over
 * a request line per request) took a share of the two cores the servers and wrk share, and a reader
 * that fell behind stalled the service on a full pipe. Each round empties it (a line per request
 * would fill gigabytes over a whole run).
 */
async function spawnUntil(cmd: string[], env: Record<string, string>, pattern: RegExp): Promise<Target> {
  const logFile = join(work, `stdout-${children.length}.log`)
  const proc = Bun.spawn(cmd, {
    cwd: root,
    env: { ...process.env, ...env },
    stdout: Bun.file(logFile),
    stderr: 'inherit',
  })
  children.push(proc)
  for (;;) {
    const out = await Bun.file(logFile)
      .text()
      .catch(() => '')
    const m = pattern.exec(out)
    if (m)
      return {
        url: m[1]!,
        pid: proc.pid,
        log: logFile,
        stop: async () => {
          proc.kill()
          await proc.exited
        },
      }
    if (proc.exitCode !== null || proc.signalCode)
      throw new Error(`${cmd.join(' ')} exited before it was ready:\n${out}`)
    await Bun.sleep(20)
  }
}

async function startService(name: string, gateway: 'on' | 'off', extra: Record<string, string> = {}): Promise<Target> {
  const env = {
    DATA_DIR: join(work, name),
    PORT: '0',
    GATEWAY: gateway,
    ADMIN_PASSWORD: 'bench-Pass1',
    LOG_LEVEL: 'info',
    ...extra,
  }
  const profile = process.env.BENCH_CPU_PROF
  const flags = profile ? ['--cpu-prof-md', `--cpu-prof-dir=${join(profile, name)}`] : []
  return spawnUntil([process.execPath, ...flags, 'server.ts'], env, /"url":"(http:[^"]+)"/)
}

async function signIn(base: string): Promise<Record<string, string>> {
  const login = await fetch(`${base}/rest/v1/iam/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ domain: 'master', login: 'admin', pwd: 'bench-Pass1', session_type: 'token' }),
  })
  const { session_token: token } = (await login.json()) as { session_token: string }
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
}

async function seed(base: string) {
  const headers = await signIn(base)
  const ids: string[] = []
  for (let i = 0; i < OBJECTS; i++) {
    const body = {
      type: `type${i % 20}`,
      value: { n: i, tags: ['a', 'b'], nested: { x: i * 2 } },
      opts: { title: `Object ${i}`, user_tags: ['bench'] },
    }
    const res = await fetch(`${base}/rest/v1/reference/extobjs`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    })
    ids.push(((await res.json()) as { id: string }).id)
  }
  return { headers, ids }
}

/** A process and all it started, from /proc. */
async function processTree(pid: number): Promise<number[]> {
  const text = await Bun.file(`/proc/${pid}/task/${pid}/children`)
    .text()
    .catch(() => '')
  const children = text.trim().split(/\s+/).filter(Boolean).map(Number)
  return [pid, ...(await Promise.all(children.map(processTree))).flat()]
}

/**
 * Pauses (SIGSTOP) every other server of the run, with the processes it started, while a case runs;
 * the answer resumes them. Idle, their schedules, compilers and checkpointers took 6-11 % of a core
 * from the case measured, and the figures are for one service on a machine.
 */
async function pauseOthers(target: Target): Promise<() => void> {
  const others = children.filter((c) => c.pid !== target.pid && c.exitCode === null)
  const pids = (await Promise.all(others.map((c) => processTree(c.pid)))).flat()
  const signal = (name: 'SIGSTOP' | 'SIGCONT') => {
    for (const pid of pids)
      try {
        process.kill(pid, name)
      } catch {} // it ended meanwhile
  }
  signal('SIGSTOP')
  return () => signal('SIGCONT')
}

async function round(c: Case): Promise<void> {
  const script = join(work, `${c.name.replace(/\W+/g, '-')}.lua`)
  await Bun.write(script, luaScript(c.paths, c.headers, c.post))
  truncateSync(c.target.log)
  const resume = await pauseOthers(c.target)
  let r: WrkResult
  let cpuUsPerReq: number
  try {
    await wrk(c.target.url, script, WARMUP_SECONDS)
    const cpu0 = await cpuSeconds(c.target.pid)
    r = await wrk(c.target.url, script, SECONDS)
    cpuUsPerReq = (((await cpuSeconds(c.target.pid)) - cpu0) * 1e6) / (r.rps * SECONDS)
  } finally {
    resume()
  }
  c.rounds.push({ ...r, cpuUsPerReq })
  console.log(
    `  ${c.name}: ${Math.round(r.rps)} req/s, p99 ${r.p99ms.toFixed(2)} ms, ${cpuUsPerReq.toFixed(1)} µs CPU/req${r.non2xx ? `, ${r.non2xx} non-2xx!` : ''}`,
  )
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length

try {
  await ensureWrk()
  console.log(
    `bench: wrk -t2 -c64, ${SECONDS}s rounds after ${WARMUP_SECONDS}s warm-up, ${OBJECTS} extobjs, bun ${Bun.version}`,
  )
  const raw = await spawnUntil([process.execPath, join(import.meta.dir, 'raw-server.ts')], {}, /listening (\d+)/)
  raw.url = `http://127.0.0.1:${raw.url}`
  const front = await spawnUntil([process.execPath, join(import.meta.dir, 'front-server.ts')], {}, /listening (\d+)/)
  front.url = `http://127.0.0.1:${front.url}`
  // the model list: a class of 100,000 records in the direct and the gateway service's data, seeded
  // through the repository while each service is down
  const klass = {
    classname: 'bench/records',
    properties: [
      { name: 'name', data_type: 'string' },
      { name: 'kind', data_type: 'string' },
      { name: 'n', data_type: 'int' },
      { name: 'at', data_type: 'datetime' },
    ],
    opts: { lookup_properties: ['kind'], indexes: [['kind', 'n']], max_limit: 1000 },
  }
  for (const [name, gateway] of [
    ['direct', 'off'],
    ['gateway', 'on'],
  ] as const) {
    const setup = await startService(name, gateway)
    await fetch(`${setup.url}/rest/v1/design/classes`, {
      method: 'POST',
      headers: await signIn(setup.url),
      body: JSON.stringify(klass),
    })
    await setup.stop()
    const seedArgs = [join(import.meta.dir, 'seed-model.ts'), join(work, name), 'bench/records', String(MODEL_RECORDS)]
    const seeding = Bun.spawnSync([process.execPath, ...seedArgs], { cwd: root })
    console.log(`  ${name}: ${seeding.stdout.toString().trim()}`)
  }
  const direct = await startService('direct', 'off')
  const gateway = await startService('gateway', 'on')
  // two app processes need a Redis: BENCH_REDIS_URL, or the machine's
  const redis = {
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    KV_PREFIX: `bench:${process.pid}:`,
  }
  const workers2 = await startService('workers2', 'on', { APP_PROCESSES: '2', ...redis })
  // the cluster's configuration on one process: sessions, bans and the bus on Redis
  const redis1 = await startService('redis1', 'on', { ...redis, KV_PREFIX: `bench:${process.pid}:r1:` })
  const seededDirect = await seed(direct.url)
  const seededGateway = await seed(gateway.url)
  const seededWorkers2 = await seed(workers2.url)
  const seededRedis1 = await seed(redis1.url)
  const all = hotPathCases(
    { raw, front, direct, gateway, workers2, redis1 },
    { direct: seededDirect, gateway: seededGateway, workers2: seededWorkers2, redis1: seededRedis1 },
    MODEL_RECORDS,
  )
  // BENCH_ONLY=<text>: the baseline and the cases whose name holds the text
  const only = process.env.BENCH_ONLY
  const cases = only ? all.filter((c, i) => i === 0 || c.name.includes(only) || c.group?.includes(only)) : all
  // rounds interleave the cases, so drift in the machine's load spreads over all of them
  for (let r = 1; r <= ROUNDS; r++) {
    console.log(`round ${r} of ${ROUNDS}:`)
    for (const c of cases) await round(c)
  }

  const baseline = cases[0]!.rounds
  const base = mean(baseline.map((r) => r.rps))
  console.log(
    `\n| case | req/s (mean of ${ROUNDS}) | p50 ms | p99 ms | server CPU µs/req | ratio to raw | each round's ratio to its raw |`,
  )
  console.log('|---|---|---|---|---|---|---|')
  for (const c of cases) {
    const rps = mean(c.rounds.map((r) => r.rps))
    const f = (k: 'p50ms' | 'p99ms' | 'cpuUsPerReq') => mean(c.rounds.map((r) => r[k])).toFixed(2)
    // the machine drifts between rounds: a round's figure against the baseline of the same round
    const byRound = c.rounds.map((r, i) => (r.rps / baseline[i]!.rps).toFixed(2)).join(', ')
    console.log(
      `| ${c.name} | ${Math.round(rps)} | ${f('p50ms')} | ${f('p99ms')} | ${f('cpuUsPerReq')} | ${(rps / base).toFixed(2)} | ${byRound} |`,
    )
  }
  const rpsOf = (c: Case) => mean(c.rounds.map((r) => r.rps))
  const ran = (name: string) => cases.find((c) => c.name === name)
  const [direct1, gateway1, twoWorkers] = [
    ran('GET extobj by id, direct (GATEWAY=off)'),
    ran('GET extobj by id, through the gateway'),
    ran('GET extobj by id, through the gateway, APP_PROCESSES=2'),
  ]
  if (direct1 && gateway1)
    console.log(`\ngateway on the point read: ${(rpsOf(gateway1) / rpsOf(direct1)).toFixed(2)} of direct throughput`)
  if (gateway1 && twoWorkers)
    console.log(
      `APP_PROCESSES=2 on the point read: ${(rpsOf(twoWorkers) / rpsOf(gateway1)).toFixed(2)} of APP_PROCESSES=1 throughput`,
    )
} finally {
  for (const c of children) c.kill()
  await Promise.all(children.map((c) => c.exited))
  rmSync(work, { recursive: true, force: true })
  await dropKeys(`bench:${process.pid}:`)
}

/** The services' keys in the Redis they shared (sessions, the bus's, the cluster's). */
async function dropKeys(prefix: string): Promise<void> {
  const client = createClient({ url: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379' })
  try {
    await client.connect()
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 }))
      if (keys.length) await client.del(keys)
  } catch (err) {
    console.error(`the bench's Redis keys (${prefix}*) were not removed: ${(err as Error).message}`)
  } finally {
    client.destroy()
  }
}
