/**
 * Script handlers: start-to-finish latency of a trivial script (POST start -> outcome readable), and
 * how many sleeping handlers one process holds, with the server's resident memory per handler.
 * `bun bench/scripts.ts [handlers]` (default 1000); `npm run bench` runs it last.
 */
import { percentile, rssKb, startBenchService } from './service-process'

const HANDLERS = Number(process.argv[2] ?? 1000)
const RUNS = 50

const service = await startBenchService({ SCRIPT_MAX_PER_DOMAIN: String(HANDLERS + 10) })
const { url: base, token, pid } = service
try {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const api = async (method: string, path: string, body?: unknown) =>
    (
      await fetch(`${base}/rest/v1${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      })
    ).json() as Promise<Record<string, unknown>>
  await api('POST', '/service/svcscripts', { code: 'noop', name: 'noop', scriptdata: 'return startparam(1)' })
  await api('POST', '/service/svcscripts', { code: 'sleeper', name: 'sleeper', scriptdata: 'await sleep(3600000)' })

  const latencies: number[] = []
  for (let i = 0; i < RUNS + 5; i++) {
    const started = performance.now()
    const { id } = await api('POST', '/service/svcscript_runtimes', { code: 'noop', startparam1: i })
    while ((await api('GET', `/service/svcscript_runtimes/${id}`)).status === 'running') await Bun.sleep(1)
    if (i >= 5) latencies.push(performance.now() - started) // the first runs warm the script threads
  }
  latencies.sort((a, b) => a - b)

  const before = await rssKb(pid)
  for (let i = 0; i < HANDLERS; i += 50)
    await Promise.all(
      Array.from({ length: Math.min(50, HANDLERS - i) }, () =>
        api('POST', '/service/svcscript_runtimes', { code: 'sleeper' }),
      ),
    )
  const listed = ((await api('GET', '/service/svcscript_runtimes?limit=100000')) as unknown as unknown[]).length
  const after = await rssKb(pid)
  console.log('\nscript handlers (one process, SCRIPT_THREADS default):')
  console.log('| trivial script start -> outcome p50 | p99 | sleeping handlers listed | server RSS per handler |')
  console.log('|---|---|---|---|')
  console.log(
    `| ${percentile(latencies, 0.5).toFixed(1)} ms | ${percentile(latencies, 0.99).toFixed(1)} ms | ${listed} of ${HANDLERS} | ${((after - before) / HANDLERS).toFixed(1)} KiB (RSS ${(before / 1024).toFixed(0)} -> ${(after / 1024).toFixed(0)} MiB) |`,
  )
} finally {
  await service.stop()
}
