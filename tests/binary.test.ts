// The single binary: `bun run build` makes one executable that answers --version and --help without
// starting, and from an empty folder outside the checkout (no node_modules within reach) starts with
// its data in ./data, signs in and answers a LOOKUP through its gateway.
import { afterAll, expect, test } from 'bun:test'
import type { Subprocess } from 'bun'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'libsql'
import pkg from '../package.json' with { type: 'json' }
import { describeEnv } from '~/config-help'
import { httpRequest, RawClient } from './helpers/raw-http'
import { TEST_REDIS_URL, testPrefix, testRedisKv } from './helpers/redis'

const ROOT = join(import.meta.dir, '..')
const dir = mkdtempSync(join(tmpdir(), 'platform-binary-'))
const binDir = join(dir, 'bin')
const binary = join(binDir, 'platform')
/** Where the binary runs: empty, and outside the checkout. */
const runDir = join(dir, 'run')
mkdirSync(runDir)
const password = 'admin-Secret_1'
/** Nothing of this test process's environment (DATA_DIR, REDIS_URL, LOG_LEVEL...) reaches the binary. */
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', TMPDIR: tmpdir(), ADMIN_PASSWORD: password, PORT: '0' }

let service: Subprocess<'ignore', 'pipe', 'pipe'> | undefined
afterAll(async () => {
  service?.kill('SIGKILL')
  await service?.exited
  rmSync(dir, { recursive: true, force: true })
})

async function runBinary(...args: string[]) {
  const done = Bun.spawn([binary, ...args], { cwd: runDir, env, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([
    new Response(done.stdout).text(),
    new Response(done.stderr).text(),
    done.exited,
  ])
  return { stdout, stderr, code }
}

test('bun run build makes one executable file', async () => {
  const build = Bun.spawnSync([process.execPath, 'run', 'build', '--outfile', binary], { cwd: ROOT, stderr: 'pipe' })
  expect(build.stdout.toString()).toStartWith(`built ${binary} `)
  expect(build.exitCode).toBe(0)
  expect(readdirSync(binDir)).toEqual(['platform'])
}, 60_000)

test('--version and --help answer without starting; other arguments are refused', async () => {
  expect(await runBinary('--version')).toEqual({ stdout: `${pkg.version}\n`, stderr: '', code: 0 })
  const help = await runBinary('--help')
  expect(help.code).toBe(0)
  expect(help.stdout).toContain('usage: platform ')
  for (const variable of describeEnv()) expect(help.stdout).toContain(`  ${variable.name} `)
  expect(await runBinary('--port=1')).toEqual({
    stdout: '',
    stderr: 'platform: unknown argument "--port=1" (try --help)\n',
    code: 2,
  })
  expect(readdirSync(runDir)).toEqual([]) // no data directory: nothing started
})

test('from an empty folder it starts, signs in and answers LOOKUP through the gateway', async () => {
  service = Bun.spawn([binary], { cwd: runDir, env, stdout: 'pipe', stderr: 'pipe' })
  const output = { stdout: '', stderr: '' }
  const collect = async (stream: ReadableStream<Uint8Array>, into: 'stdout' | 'stderr') => {
    for await (const chunk of stream) output[into] += new TextDecoder().decode(chunk)
  }
  void collect(service.stdout, 'stdout')
  void collect(service.stderr, 'stderr')
  let url: string | undefined
  for (const until = Date.now() + 15_000; !url && service.exitCode === null && Date.now() < until; await Bun.sleep(20))
    url = /"msg":"listening","url":"([^"]+)"/.exec(output.stdout)?.[1]
  if (!url) throw new Error(`the binary did not report listening\nstdout: ${output.stdout}\nstderr: ${output.stderr}`)
  expect(output.stdout).toContain('"msg":"first start: created the master domain and its administrator"')
  expect(existsSync(join(runDir, 'data/platform.db'))).toBe(true)

  const signIn = await fetch(`${url}/rest/v1/iam/sessions`, {
    method: 'POST',
    body: JSON.stringify({ domain: 'master', login: 'admin', pwd: password, session_type: 'token' }),
  })
  expect(signIn.status).toBe(200)
  const { session_token: token } = (await signIn.json()) as { session_token: string }
  const created = await fetch(`${url}/rest/v1/reference/extobjs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: JSON.stringify({ type: 'note', value: {} }),
  })
  expect(created.status).toBe(200)
  const { id } = (await created.json()) as { id: string }

  // the checkpointer (the binary started again in that role) moves the write into the file within a second or so
  const inFileAlone = () => {
    const copy = join(dir, `copy-${crypto.randomUUID()}.db`)
    copyFileSync(join(runDir, 'data/platform.db'), copy)
    const conn = new Database(copy)
    try {
      return (conn.prepare('SELECT count(*) AS n FROM extobjs WHERE id = ?').get([id]) as { n: number }).n
    } catch {
      return 0
    } finally {
      conn.close()
    }
  }
  let found = 0
  for (const until = Date.now() + 5000; found === 0 && Date.now() < until; await Bun.sleep(100)) found = inFileAlone()
  expect(found).toBe(1)

  // Bun's fetch would send LOOKUP as GET: the request goes over a plain socket
  const client = await RawClient.open(Number(new URL(url).port))
  client.write(
    httpRequest(
      'LOOKUP',
      '/rest/v1/reference/extobjs',
      { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      '"note"',
    ),
  )
  const [lookup] = await client.responses(1)
  client.end()
  expect(lookup?.status).toBe(200)
  expect(JSON.parse(lookup!.body)).toEqual([id])

  // a service script runs on the script thread the binary carries, with QuickJS inside it
  const auth = { authorization: `Bearer ${token}` }
  const saved = await fetch(`${url}/rest/v1/service/svcscripts`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ code: 'hello', name: 'Hello', scriptdata: 'return startparam(1) + 1' }),
  })
  expect(saved.status).toBe(200)
  const started = await fetch(`${url}/rest/v1/service/svcscript_runtimes`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ code: 'hello', startparam1: 41 }),
  })
  const handler = (await started.json()) as { id: string }
  let ended: { status?: string; result?: unknown } = {}
  for (const until = Date.now() + 5000; ended.status !== 'done' && Date.now() < until; await Bun.sleep(20))
    ended = (await (
      await fetch(`${url}/rest/v1/service/svcscript_runtimes/${handler.id}`, { headers: auth })
    ).json()) as typeof ended
  expect(ended).toMatchObject({ status: 'done', result: 42 })

  // border rules are matched on the border-rule thread the binary carries
  const rule = await fetch(`${url}/rest/v1/master/borderrules`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ priority: 1, useragent: 'probe.*', action: 'deny' }),
  })
  expect(rule.status).toBe(200)
  const checked = await fetch(`${url}/rest/v1/master/borderrules_check?ip=10.0.0.1&useragent=probe-1`, {
    headers: auth,
  })
  expect(((await checked.json()) as { action: string }).action).toBe('deny')

  // a list that assembles member lists runs on the reader thread the binary carries
  const group = await fetch(`${url}/rest/v1/domain/groups`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ code: 'readers' }),
  })
  expect(group.status).toBe(200)
  const caches = await fetch(`${url}/rest/v1/domain/groups_caches`, { headers: auth })
  expect(caches.status).toBe(200)
  expect(((await caches.json()) as { id: string }[]).map((c) => c.id)).toContain(
    ((await group.json()) as { id: string }).id,
  )
  // had it failed, the list would have run on the event loop, saying so in the log before its request line
  const listLine = '"route":"/rest/v1/domain/groups_caches"'
  for (const until = Date.now() + 5000; !output.stdout.includes(listLine) && Date.now() < until; await Bun.sleep(20));
  expect(output.stdout).toContain(listLine)
  expect(output.stdout).not.toContain('reader thread failed')

  // the console and its Preact bundle are carried in the binary (built by scripts/build.ts, not from sources)
  const consolePage = await fetch(`${url}/console`)
  expect([consolePage.status, (await consolePage.text()).includes('/console/app.js')]).toEqual([200, true])
  const consoleScript = await fetch(`${url}/console/app.js`)
  expect([consoleScript.status, consoleScript.headers.get('content-type')]).toEqual([
    200,
    'text/javascript; charset=utf-8',
  ])
  expect((await consoleScript.text()).length).toBeGreaterThan(10_000)
  const consoleStyle = await fetch(`${url}/console/app.css`)
  expect([consoleStyle.status, consoleStyle.headers.get('content-type')]).toEqual([200, 'text/css; charset=utf-8'])
  expect(await consoleStyle.text()).toContain('.table-scroll')

  // the operator's subcommand reaches the running binary through its control socket
  const backup = await runBinary('backup', join(binDir, 'copy.db'))
  expect(backup).toMatchObject({ code: 0, stderr: '' })
  expect(backup.stdout).toContain('backup written to')
})

test('APP_PROCESSES=2: the binary starts its second app process from itself', async () => {
  service?.kill('SIGTERM')
  await service?.exited
  const prefix = testPrefix()
  service = Bun.spawn([binary], {
    cwd: runDir,
    env: { ...env, APP_PROCESSES: '2', REDIS_URL: TEST_REDIS_URL, KV_PREFIX: prefix },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let stdout = ''
  let stderr = ''
  void (async () => {
    for await (const chunk of service!.stdout) stdout += new TextDecoder().decode(chunk)
  })()
  void (async () => {
    for await (const chunk of service!.stderr) stderr += new TextDecoder().decode(chunk)
  })()
  let url: string | undefined
  for (const until = Date.now() + 15_000; !url && service.exitCode === null && Date.now() < until; await Bun.sleep(20))
    url = /"msg":"listening","url":"([^"]+)"/.exec(stdout)?.[1]
  if (!url)
    throw new Error(
      `the binary did not report listening (exit code ${service.exitCode})\nstdout: ${stdout}\nstderr: ${stderr}`,
    )
  // the kernel spreads connections over the two processes' listeners (SO_REUSEPORT), not in turn
  const served = new Set<string>()
  for (let i = 0; i < 40 && served.size < 2; i++) {
    const client = await RawClient.open(Number(new URL(url).port))
    client.write(httpRequest('GET', '/healthz'))
    const [answer] = await client.responses(1)
    client.end()
    expect(answer?.status).toBe(200)
    served.add(answer!.headers['x-request-id']!.split('-')[0]!)
  }
  expect(served.size).toBe(2)
  service.kill('SIGTERM')
  expect(await service.exited).toBe(0)
  await (await testRedisKv(prefix)).cleanup()
}, 30_000)
