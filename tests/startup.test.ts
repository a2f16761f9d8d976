// What keeps the service from starting is one line naming the setting, and exit code 2, within a
// bounded time; and `npm start` hands signals to the service itself.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ADMIN_PASSWORD } from './helpers/service'
import { TEST_REDIS_URL, testPrefix } from './helpers/redis'

const root = join(import.meta.dir, '..')
const dir = mkdtempSync(join(tmpdir(), 'platform-startup-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A port nothing listens on (bound, read, released). */
function closedPort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const { port } = probe
  probe.stop(true)
  return port
}

async function start(env: Record<string, string>) {
  const started = performance.now()
  const proc = Bun.spawn([process.execPath, 'server.ts'], {
    cwd: root,
    env: { ...process.env, PORT: '0', ADMIN_PASSWORD, DATA_DIR: join(dir, crypto.randomUUID()), ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const code = await proc.exited
  const stderr = (await new Response(proc.stderr).text()).trim()
  return { code, stderr, seconds: (performance.now() - started) / 1000 }
}

test.each([
  // credentials in a URL stay out of the line (a log collector keeps it)
  [
    'an unreachable Redis',
    () => ({ REDIS_URL: `redis://ops:pw-not-shown@127.0.0.1:${closedPort()}` }),
    'REDIS_URL: cannot reach redis://…@127.0.0.1:',
  ],
  [
    'an unreachable libSQL server',
    () => ({ LIBSQL_URL: `http://127.0.0.1:${closedPort()}?authToken=pw-not-shown` }),
    'LIBSQL_URL: cannot',
  ],
  [
    'a data directory that cannot be made',
    () => {
      const file = join(dir, 'a-file')
      writeFileSync(file, '')
      return { DATA_DIR: join(file, 'data') }
    },
    'DATA_DIR: cannot use',
  ],
])('%s: one line naming the setting, exit code 2, within seconds', async (_, env, line) => {
  const r = await start({ STARTUP_RETRIES: '3', ...env() })
  expect(r.code).toBe(2)
  expect(r.stderr.split('\n')).toHaveLength(1)
  expect(r.stderr).toStartWith(`cannot start: ${line}`)
  expect(r.stderr).not.toContain('pw-not-shown')
  expect(r.seconds).toBeLessThan(10)
})

test.each(['on', 'off'])('a port in use (GATEWAY=%s): the line names PORT, exit code 2', async (gateway) => {
  const taken = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  try {
    const r = await start({ PORT: String(taken.port), GATEWAY: gateway })
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(`cannot start: PORT: cannot listen on 127.0.0.1:${taken.port}: the port is in use`)
  } finally {
    taken.stop(true)
  }
})

test.each(['on', 'off'])('an address this machine does not have (GATEWAY=%s): the line names HOST', async (gateway) => {
  const r = await start({ HOST: '192.0.2.1', PORT: '0', GATEWAY: gateway })
  expect(r.code).toBe(2)
  expect(r.stderr).toStartWith('cannot start: HOST: cannot listen on 192.0.2.1:0')
})

test('APP_PROCESSES=2 on a port another process holds with SO_REUSEPORT: refused, not shared', async () => {
  // SO_REUSEPORT alone would let the service bind beside it and take half its connections
  const taken = Bun.listen({ hostname: '127.0.0.1', port: 0, reusePort: true, socket: { data() {} } } as never)
  try {
    const r = await start({
      PORT: String(taken.port),
      APP_PROCESSES: '2',
      REDIS_URL: TEST_REDIS_URL,
      KV_PREFIX: testPrefix(),
    })
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(`cannot start: PORT: cannot listen on 127.0.0.1:${taken.port}: the port is in use`)
  } finally {
    taken.stop(true)
  }
})

test('npm start hands SIGTERM to the service, which stops and exits', async () => {
  const npm = Bun.spawn(['npm', 'start', '--silent'], {
    cwd: root,
    env: { ...process.env, PORT: '0', ADMIN_PASSWORD, DATA_DIR: join(dir, 'npm'), LOG_LEVEL: 'info' },
    stdout: 'pipe',
    stderr: 'ignore',
  })
  let out = ''
  const reader = npm.stdout.getReader()
  while (!out.includes('"listening"')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`npm start ended before listening: ${out}`)
    out += new TextDecoder().decode(value)
  }
  const url = /"url":"([^"]+)"/.exec(out)![1]!
  expect((await fetch(`${url}/healthz`)).status).toBe(200)
  npm.kill('SIGTERM')
  expect(await npm.exited).toBe(0) // the service's own exit status: it received the signal itself
  expect(
    await fetch(`${url}/healthz`).then(
      () => 'answered',
      () => 'refused',
    ),
  ).toBe('refused')
})
