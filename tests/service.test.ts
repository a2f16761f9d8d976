// First start creates the master domain and its administrator once; configuration errors stop the start.
import { afterAll, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, loadConfig } from '~/config'

const dir = mkdtempSync(join(tmpdir(), 'platform-start-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const root = join(import.meta.dir, '..')

async function start(env: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, 'server.ts'], {
    cwd: root,
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const reader = proc.stdout.getReader()
  let out = ''
  while (!out.includes('"listening"')) {
    const { value, done } = await reader.read()
    if (done) break
    out += new TextDecoder().decode(value)
  }
  proc.kill()
  await proc.exited
  return { out, err: await new Response(proc.stderr).text(), code: proc.exitCode }
}

test('the first start writes the administrator password to a file the log names; the second start does not', async () => {
  const data = join(dir, 'data')
  const first = await start({ DATA_DIR: data })
  expect(first.out).toContain('"msg":"first start: created the master domain and its administrator"')
  const file = join(data, 'initial-admin-password')
  expect(first.out).toContain(`"file":"${file}"`)
  const password = readFileSync(file, 'utf8').trim()
  expect(password).toMatch(/^[A-Za-z0-9]{20}$/)
  // stdout is a pipe here, not a terminal: the password is in neither stream
  expect(first.out + first.err).not.toContain(password)
  const second = await start({ DATA_DIR: data })
  expect(second.out).not.toContain('first start')
  expect(second.out).not.toContain('initial-admin-password')
  expect(readFileSync(file, 'utf8').trim()).toBe(password)
})

test('an ADMIN_PASSWORD from the environment is used and never printed', async () => {
  const first = await start({
    DATA_DIR: join(dir, 'data2'),
    ADMIN_PASSWORD: 'from-env-Pass1',
    MASTER_DOMAIN: 'root.example',
  })
  expect(first.out).toContain('"domain":"root.example"')
  expect(first.out).not.toContain('from-env-Pass1')
  expect(first.out).not.toContain('initial-admin-password')
  expect(existsSync(join(dir, 'data2', 'initial-admin-password'))).toBe(false)
})

test('a bad variable stops the start with a message naming it', async () => {
  const proc = Bun.spawn([process.execPath, 'server.ts'], {
    cwd: root,
    env: { ...process.env, PORT: 'eighty' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  expect(await proc.exited).toBe(2)
  expect(await new Response(proc.stderr).text()).toContain('configuration error: PORT: must be a whole number')
})

test('every variable is checked', () => {
  const bad: Record<string, string> = {
    GATEWAY: 'maybe',
    REDIS_URL: 'http://x',
    LIBSQL_URL: 'postgres://x',
    TRUST_PROXY: 'not-an-address',
    LOG_LEVEL: 'loud',
    MAX_BODY_BYTES: '10',
    SESSION_IDLE_TIMEOUT_SEC: '1',
    PUBLIC_URL: 'nope',
    LICENSE_PUBLIC_KEY: '/nonexistent/licence.pub.pem',
    APP_PROCESSES: 'on',
    BACKGROUND: '2',
  }
  for (const [name, value] of Object.entries(bad)) {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError)
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name}:`))
  }
})

test('values of the right type that cannot work are refused too, naming the variable', () => {
  const bad: [string, string][] = [
    ['PUBLIC_URL', 'ftp://files.example.com'],
    ['ADMIN_LOGIN', 'bad login/ü'],
    ['SCRIPT_HTTP_ALLOW', 'api.example.com,not a host!'],
    ['SCRIPT_HTTP_ALLOW', '10.0.0.0/99'],
    ['HOST', '999.1.1.1'],
    ['HOST', 'not a host!'],
  ]
  for (const [name, value] of bad) expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name}`))
  for (const host of ['0.0.0.0', '::', '[::1]', 'localhost', 'svc-1.example.com'])
    expect(loadConfig({ HOST: host }).host).toBe(host)
  const allow = 'api.example.com, *.example.org,10.0.0.0/8,::1'
  expect(loadConfig({ SCRIPT_HTTP_ALLOW: allow, PUBLIC_URL: 'https://p.example.com' }).script.httpAllow).toEqual([
    'api.example.com',
    '*.example.org',
    '10.0.0.0/8',
    '::1',
  ])
})

test('APP_PROCESSES above 1 needs REDIS_URL and the gateway, and says so', () => {
  expect(() => loadConfig({ APP_PROCESSES: '2' })).toThrow(
    /^APP_PROCESSES: 2 app processes share their state through Redis: set REDIS_URL$/,
  )
  expect(() => loadConfig({ APP_PROCESSES: '2', REDIS_URL: 'redis://x', GATEWAY: 'off' })).toThrow(
    /^APP_PROCESSES: .*set GATEWAY=on$/,
  )
  expect(loadConfig({ APP_PROCESSES: '2', REDIS_URL: 'redis://x' }).appProcesses).toBe(2)
  expect(loadConfig({}).appProcesses).toBe(1)
})

test('WORKERS, the old name of APP_PROCESSES, still works and is reported as renamed', () => {
  const old = loadConfig({ WORKERS: '2', WORKERS_RESTART_MAX_MS: '500', REDIS_URL: 'redis://x' })
  expect(old.appProcesses).toBe(2)
  expect(old.appRestartMaxMs).toBe(500)
  expect(old.renamedSettings).toEqual([
    'WORKERS is now APP_PROCESSES: rename it (the old name will stop working)',
    'WORKERS_RESTART_MAX_MS is now APP_RESTART_MAX_MS: rename it (the old name will stop working)',
  ])
  // the new name wins where both are given
  expect(loadConfig({ WORKERS: '3', APP_PROCESSES: '1' }).appProcesses).toBe(1)
  expect(loadConfig({}).renamedSettings).toEqual([])
})
