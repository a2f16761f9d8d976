// The first administrator's generated password goes to DATA_DIR/initial-admin-password (0600), never
// to the log; a first start that fails before it listens (a port in use) uses nothing up: the next
// start generates a new password, writes it over the file, announces the file, and that one signs in.
import { afterAll, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ServiceProcess, startProcess } from '../helpers/process'

const root = join(import.meta.dir, '..', '..')
const dir = mkdtempSync(join(tmpdir(), 'platform-first-password-'))
const started: ServiceProcess[] = []
afterAll(() => {
  for (const p of started) p.proc.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})
const data = join(dir, 'data')
const file = join(data, 'initial-admin-password')
// an empty ADMIN_PASSWORD counts as unset: the password is generated
const env = { DATA_DIR: data, ADMIN_PASSWORD: '', LOG_LEVEL: 'info' }

const signIn = (url: string, pwd: string) =>
  fetch(`${url}/rest/v1/iam/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ domain: 'master', login: 'admin', pwd, session_type: 'token' }),
  }).then((r) => r.status)

test('a first start that fails on a port in use, then a good one: a new password, in the file only, signs in', async () => {
  const taken = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  let failed: { code: number; out: string }
  try {
    const proc = Bun.spawn([process.execPath, 'server.ts'], {
      cwd: root,
      env: { ...process.env, ...env, PORT: String(taken.port) },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [code, out, err] = await Promise.all([
      proc.exited,
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
    ])
    failed = { code, out: out + err }
  } finally {
    taken.stop(true)
  }
  expect(failed.code).toBe(2)
  expect(failed.out).toContain('cannot start: PORT:')
  const unseen = readFileSync(file, 'utf8').trim()
  expect(unseen).toMatch(/^[A-Za-z0-9]{20}$/)
  expect(failed.out).not.toContain(unseen)
  // it failed before listening: the file is not announced
  expect(failed.out).not.toContain('initial-admin-password')

  const node = await startProcess(env)
  started.push(node)
  const announced = node
    .out()
    .split('\n')
    .find((l) => l.includes("the first administrator's password is in a file"))
  expect(JSON.parse(announced!)).toMatchObject({ level: 'warn', login: 'admin', file, renewed: true })
  const password = readFileSync(file, 'utf8').trim()
  expect(password).not.toBe(unseen)
  expect(statSync(file).mode & 0o777).toBe(0o600)
  expect(node.out()).not.toContain(password)
  expect(await signIn(node.url, password)).toBe(200)
  expect(await signIn(node.url, unseen)).toBe(401)
  node.proc.kill('SIGTERM')
  expect(await node.proc.exited).toBe(0)

  // announced once it listened: the next start keeps it and says nothing of it
  const again = await startProcess(env)
  started.push(again)
  expect(again.out()).not.toContain('initial-admin-password')
  expect(readFileSync(file, 'utf8').trim()).toBe(password)
  expect(await signIn(again.url, password)).toBe(200)
  again.proc.kill('SIGTERM')
  await again.proc.exited
}, 60_000)

test('reset-password replaces a password no start announced: the file goes, and the next start announces nothing', async () => {
  const other = join(dir, 'reset')
  const file2 = join(other, 'initial-admin-password')
  const taken = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  try {
    const proc = Bun.spawn([process.execPath, 'server.ts'], {
      cwd: root,
      env: { ...process.env, ...env, DATA_DIR: other, PORT: String(taken.port) },
      stdout: 'ignore',
      stderr: 'ignore',
    })
    expect(await proc.exited).toBe(2)
  } finally {
    taken.stop(true)
  }
  expect(readFileSync(file2, 'utf8').trim()).toMatch(/^[A-Za-z0-9]{20}$/)
  const reset = Bun.spawn([process.execPath, 'server.ts', 'reset-password', 'admin'], {
    cwd: root,
    env: { ...process.env, ...env, DATA_DIR: other, LOG_LEVEL: 'error' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  expect(await reset.exited).toBe(0)
  const password = /\(shown once\): (\S+)/.exec(await new Response(reset.stdout).text())![1]!
  expect(existsSync(file2)).toBe(false)
  const node = await startProcess({ ...env, DATA_DIR: other })
  started.push(node)
  expect(node.out()).not.toContain('initial-admin-password')
  expect(existsSync(file2)).toBe(false)
  expect(await signIn(node.url, password)).toBe(200)
  node.proc.kill('SIGTERM')
  await node.proc.exited
}, 60_000)

test('on a terminal the first start also shows the password there', async () => {
  const tty = join(dir, 'tty')
  // `script` gives the service a terminal for stdout; the service is stopped once it listens
  const proc = Bun.spawn(['script', '-qfec', `${process.execPath} server.ts`, '/dev/null'], {
    cwd: root,
    env: { ...process.env, ...env, DATA_DIR: tty, PORT: '0' },
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let out = ''
  const decoder = new TextDecoder()
  const reading = (async () => {
    for await (const chunk of proc.stdout) out += decoder.decode(chunk)
  })()
  for (const until = Date.now() + 20_000; !out.includes('administrator password') && Date.now() < until; )
    await Bun.sleep(20)
  proc.kill('SIGTERM')
  await proc.exited
  await reading
  const password = readFileSync(join(tty, 'initial-admin-password'), 'utf8').trim()
  expect(out).toContain(`administrator password (also in ${join(tty, 'initial-admin-password')}): ${password}`)
}, 60_000)
