/**
 * Script handlers: start-to-finish latency of a trivial script (POST start -> outcome readable), and
 * how many sleeping handlers one process holds, with the server's resident memory per handler.
 * `bun bench/scripts.ts [handlers]` (default 1000); `npm run bench` runs it last.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const root = join(import.meta.dir, '..')
const HANDLERS = Number(process.argv[2] ?? 1000)
const RUNS = 50

const rssKb = async (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(await Bun.file(`/proc/${pid}/status`).text())![1])
const percentile = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]!

const work = mkdtempSync(join(tmpdir(), 'platform-bench-scripts-'))
const env = {
  ...process.env,
  DATA_DIR: work,
  PORT: '0',
  GATEWAY: 'off',
  ADMIN_PASSWORD: 'bench-Pass1',
  LOG_LEVEL: 'info',
  SCRIPT_MAX_PER_DOMAIN: String(HANDLERS + 10),
}
const proc = Bun.spawn([process.execPath, 'server.ts'], { cwd: root, env, stdout: 'pipe', stderr: 'inherit' })
try {
  const reader = proc.stdout.getReader()
  let out = ''
  while (!/"url":"(http:[^"]+)"/.test(out)) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the service did not start:\n${out}`)
    out += new TextDecoder().decode(value)
  }
  const base = /"url":"(http:[^"]+)"/.exec(out)![1]!
  const login = await fetch(`${base}/rest/v1/iam/sessions`, {
    method: 'POST',
    body: JSON.stringify({ domain: 'master', login: 'admin', pwd: 'bench-Pass1', session_type: 'token' }),
  })
  const { session_token: token } = (await login.json()) as { session_token: string }
  const headers = { authorization: `Bearer ${token}` }
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

  const before = await rssKb(proc.pid)
  for (let i = 0; i < HANDLERS; i += 50)
    await Promise.all(
      Array.from({ length: Math.min(50, HANDLERS - i) }, () =>
        api('POST', '/service/svcscript_runtimes', { code: 'sleeper' }),
      ),
    )
  const listed = ((await api('GET', '/service/svcscript_runtimes?limit=100000')) as unknown as unknown[]).length
  const after = await rssKb(proc.pid)
  console.log('\nscript handlers (one process, SCRIPT_THREADS default):')
  console.log('| trivial script start -> outcome p50 | p99 | sleeping handlers listed | server RSS per handler |')
  console.log('|---|---|---|---|')
  console.log(
    `| ${percentile(latencies, 0.5).toFixed(1)} ms | ${percentile(latencies, 0.99).toFixed(1)} ms | ${listed} of ${HANDLERS} | ${((after - before) / HANDLERS).toFixed(1)} KiB (RSS ${(before / 1024).toFixed(0)} -> ${(after / 1024).toFixed(0)} MiB) |`,
  )
} finally {
  proc.kill()
  await proc.exited
  rmSync(work, { recursive: true, force: true })
}
