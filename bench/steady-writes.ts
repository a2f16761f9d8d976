/**
 * What a create costs the service at a steady rate below saturation, where the hot-path benches
 * (wrk at full speed) hide it: each create comes alone, so its background passes (journal pump,
 * webhook enqueueing) and wake-ups are not shared with others. Creates go through the public port
 * at each rate of `bun bench/steady-writes.ts [rates...]` (default 300 1000 3000), to each app
 * process in turn over 32 keep-alive connections in all (./http-pinned.ts), for BENCH_STEADY_SECONDS (default 5) after as long a warm-up; it prints the service's
 * CPU per create (user + system, every thread of every process, from /proc) and the threads that
 * took the most. The cluster's configurations: one process on the machine's Redis (or
 * BENCH_REDIS_URL), two app processes on it, and one process without Redis; BENCH_STEADY_ONLY=<text>
 * runs the configurations whose name holds it. BENCH_CPU_PROF=<dir> profiles the service (each app
 * process: they inherit the runtime's flags).
 */
import { readdirSync } from 'node:fs'
import { pinnedConnections } from './http-pinned'
import { startBenchService } from './service-process'

const RATES = process.argv.slice(2).map(Number).filter(Boolean)
const SECONDS = Number(process.env.BENCH_STEADY_SECONDS ?? 5)
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const ONLY = process.env.BENCH_STEADY_ONLY
const PROFILE = process.env.BENCH_CPU_PROF
const profile = PROFILE ? ['--cpu-prof-md', `--cpu-prof-dir=${PROFILE}`] : []

const CONFIGS: { name: string; processes: number; env: Record<string, string> }[] = [
  { name: 'one process, REDIS_URL', processes: 1, env: { REDIS_URL: REDIS } },
  { name: 'APP_PROCESSES=2 on REDIS_URL', processes: 2, env: { REDIS_URL: REDIS, APP_PROCESSES: '2' } },
  { name: 'one process, no Redis', processes: 1, env: {} },
]
const CONNECTIONS = 32

type Pool = Awaited<ReturnType<typeof pinnedConnections>>

/** Clock ticks (USER_HZ = 100, user + system) of each thread name of the service's processes. */
async function threadTicks(pid: number): Promise<Map<string, number>> {
  const children = (await Bun.file(`/proc/${pid}/task/${pid}/children`).text()).trim().split(/\s+/).filter(Boolean)
  const ticks = new Map<string, number>()
  for (const p of [pid, ...children.map(Number)])
    for (const task of readdirSync(`/proc/${p}/task`)) {
      // a thread may end between the listing and the read
      const read = async () => {
        const name = (await Bun.file(`/proc/${p}/task/${task}/comm`).text()).trim()
        const fields = (await Bun.file(`/proc/${p}/task/${task}/stat`).text()).split(') ')[1]!.split(' ')
        const key = `${p === pid ? 'first process' : 'started process'} ${name}`
        ticks.set(key, (ticks.get(key) ?? 0) + Number(fields[11]) + Number(fields[12]))
      }
      await read().catch(() => {})
    }
  return ticks
}

/**
 * Creates at `rate` a second for `seconds`, to each process in turn, one at a time on a connection
 * (a late create waits for one of its process's to be free); how many were answered with an error.
 */
async function load(pool: Pool, token: string, rate: number, seconds: number): Promise<number> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const processes = pool.names.length
  const total = rate * seconds
  const started = performance.now()
  const answers: Promise<boolean>[] = []
  for (let w = 0; w < total; ) {
    const due = Math.min(total, Math.floor(((performance.now() - started) * rate) / 1000))
    for (; w < due && pool.free(w % processes); w++) {
      const body = JSON.stringify({ type: 'steady', value: { w } })
      // a request that failed (its connection closed, no answer) counts as a failed create
      answers.push(
        pool.post(w % processes, '/rest/v1/reference/extobjs', headers, body).then(
          (a) => a.status < 300,
          () => false,
        ),
      )
    }
    await Bun.sleep(1)
  }
  return (await Promise.all(answers)).filter((ok) => !ok).length
}

console.log(`\ncreates at a steady rate (${SECONDS} s after a warm-up as long; server CPU per create, every thread):`)
console.log('| configuration | creates/s asked | reached | CPU per create | busiest threads (µs a create) |')
console.log('|---|---|---|---|---|')
for (const config of CONFIGS.filter((c) => !ONLY || c.name.includes(ONLY)))
  for (const rate of RATES.length ? RATES : [300, 1000, 3000]) {
    const env = { GATEWAY: 'on', KV_PREFIX: `bench:steady:${process.pid}:`, ...config.env }
    const service = await startBenchService(env, profile)
    let pool: Pool | undefined
    try {
      pool = await pinnedConnections(service.url, config.processes, CONNECTIONS / config.processes, '/healthz')
      await load(pool, service.token, rate, SECONDS)
      const before = await threadTicks(service.pid)
      const started = performance.now()
      const failed = await load(pool, service.token, rate, SECONDS)
      const seconds = (performance.now() - started) / 1000
      const after = await threadTicks(service.pid)
      const creates = rate * SECONDS
      const us = (ticks: number) => (ticks * 10_000) / creates
      const spent = [...after].map(([name, t]) => [name, t - (before.get(name) ?? 0)] as const).filter(([, t]) => t > 0)
      const total = spent.reduce((sum, [, t]) => sum + t, 0)
      const busiest = spent
        .sort((a, b) => b[1] - a[1])
        .slice(0, 3)
        .map(([name, t]) => `${name} ${us(t).toFixed(0)}`)
        .join(', ')
      console.log(
        `| ${config.name} | ${rate} | ${(creates / seconds).toFixed(0)}${failed ? ` (${failed} failed!)` : ''} | ${us(total).toFixed(0)} µs | ${busiest} |`,
      )
    } finally {
      pool?.close()
      await service.stop()
    }
  }
