/**
 * `bun run bench`: hot paths of the service measured next to the raw Bun.serve baseline, in one run,
 * on loopback, with wrk (-t2 -c64). Every case uses the same kind of wrk script (random paths from a
 * list), so the ratios compare like with like. BENCH_SECONDS sets the length of each measured round.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ensureWrk, luaScript, wrk, type WrkResult } from './wrk'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const WARMUP_SECONDS = 2
const OBJECTS = 1000
const root = join(import.meta.dir, '..')
const work = mkdtempSync(join(tmpdir(), 'platform-bench-'))
const children: ReturnType<typeof Bun.spawn>[] = []

async function spawnUntil(cmd: string[], env: Record<string, string>, pattern: RegExp): Promise<string> {
  const proc = Bun.spawn(cmd, { cwd: root, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'inherit' })
  children.push(proc)
  const reader = proc.stdout.getReader()
  let out = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`${cmd.join(' ')} exited before it was ready:\n${out}`)
    out += new TextDecoder().decode(value)
    const m = pattern.exec(out)
    if (m) return m[1]!
  }
}

async function startService(name: string, gateway: 'on' | 'off'): Promise<string> {
  const env = { DATA_DIR: join(work, name), PORT: '0', GATEWAY: gateway, ADMIN_PASSWORD: 'bench-Pass1', LOG_LEVEL: 'info' }
  return spawnUntil([process.execPath, 'server.ts'], env, /"url":"(http:[^"]+)"/)
}

async function seed(base: string) {
  const login = await fetch(`${base}/rest/v1/iam/sessions`, {
    method: 'POST',
    body: JSON.stringify({ domain: 'master', login: 'admin', pwd: 'bench-Pass1', session_type: 'token' }),
  })
  const { session_token: token } = (await login.json()) as { session_token: string }
  const headers = { authorization: `Bearer ${token}` }
  const ids: string[] = []
  for (let i = 0; i < OBJECTS; i++) {
    const body = { type: `type${i % 20}`, value: { n: i, tags: ['a', 'b'], nested: { x: i * 2 } }, opts: { title: `Object ${i}`, user_tags: ['bench'] } }
    const res = await fetch(`${base}/rest/v1/reference/extobjs`, { method: 'POST', headers, body: JSON.stringify(body) })
    ids.push(((await res.json()) as { id: string }).id)
  }
  return { headers, ids }
}

async function measure(name: string, url: string, paths: string[], headers: Record<string, string>): Promise<[string, WrkResult]> {
  const script = join(work, `${name.replace(/\W+/g, '-')}.lua`)
  await Bun.write(script, luaScript(paths, headers))
  await wrk(url, script, WARMUP_SECONDS)
  const result = await wrk(url, script, SECONDS)
  console.log(`  ${name}: ${Math.round(result.rps)} req/s, p99 ${result.p99ms.toFixed(2)} ms${result.non2xx ? `, ${result.non2xx} non-2xx!` : ''}`)
  return [name, result]
}

try {
  await ensureWrk()
  console.log(`bench: wrk -t2 -c64, ${SECONDS}s rounds after ${WARMUP_SECONDS}s warm-up, ${OBJECTS} extobjs, bun ${Bun.version}`)
  const rawPort = await spawnUntil([process.execPath, join(import.meta.dir, 'raw-server.ts')], {}, /listening (\d+)/)
  const direct = await startService('direct', 'off')
  const gateway = await startService('gateway', 'on')
  const seededDirect = await seed(direct)
  const seededGateway = await seed(gateway)
  const point = (ids: string[]) => ids.map((id) => `/rest/v1/reference/extobjs/${id}`)
  const filtered = Array.from({ length: 20 }, (_, i) => `/rest/v1/reference/extobjs?filter=${encodeURIComponent(JSON.stringify({ type: `type${i}` }))}&limit=20`)

  const results: [string, WrkResult][] = []
  console.log('running:')
  results.push(await measure('raw Bun.serve JSON (baseline)', `http://127.0.0.1:${rawPort}`, point(seededDirect.ids), {}))
  results.push(await measure('GET extobj by id, direct (GATEWAY=off)', direct, point(seededDirect.ids), seededDirect.headers))
  results.push(await measure('GET extobj by id, through the gateway', gateway, point(seededGateway.ids), seededGateway.headers))
  results.push(await measure('GET extobjs filtered by type, limit 20, direct', direct, filtered, seededDirect.headers))

  const base = results[0]![1].rps
  console.log('\n| case | req/s | p50 ms | p99 ms | ratio to raw |')
  console.log('|---|---|---|---|---|')
  for (const [name, r] of results) {
    console.log(`| ${name} | ${Math.round(r.rps)} | ${r.p50ms.toFixed(2)} | ${r.p99ms.toFixed(2)} | ${(r.rps / base).toFixed(2)} |`)
  }
  const [, d] = results[1]!
  const [, g] = results[2]!
  console.log(`\ngateway cost on the point read: ${(g.rps / d.rps).toFixed(2)} of direct throughput`)
} finally {
  for (const c of children) c.kill()
  await Promise.all(children.map((c) => c.exited))
  rmSync(work, { recursive: true, force: true })
}
