// The operator's subcommands against a real service process: a backup taken under write load holds
// every write acknowledged before it began and restores on a stopped service; a lost password is
// reset through the running service's control socket or on the stopped one; a too-weak
// ADMIN_PASSWORD stops the first start; what stops a command names the setting to fix (DATA_DIR).
import { afterAll, expect, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ServiceProcess, signInTo, startProcess } from '../helpers/process'
import { ADMIN_PASSWORD } from '../helpers/service'

const root = join(import.meta.dir, '..', '..')
const dir = mkdtempSync(join(tmpdir(), 'platform-ops-'))
/** Every service process a test started: a failing test must not leave one running. */
const started: ServiceProcess[] = []
afterAll(async () => {
  for (const p of started) p.proc.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})
const start = async (env: Record<string, string>) => {
  const p = await startProcess(env)
  started.push(p)
  return p
}

/** `bun server.ts <args>` with the data directory; its exit code and output. */
async function command(dataDir: string, ...args: string[]) {
  const proc = Bun.spawn([process.execPath, 'server.ts', ...args], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, ADMIN_PASSWORD, LOG_LEVEL: 'error' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const code = await proc.exited
  return { code, out: await new Response(proc.stdout).text(), err: await new Response(proc.stderr).text() }
}

const post = (url: string, token: string, body: unknown) =>
  fetch(`${url}/rest/v1/reference/extobjs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

test('a backup under write load holds every acknowledged write, and restores on a stopped service', async () => {
  const data = join(dir, 'live')
  const node = await start({ DATA_DIR: data })
  const token = await signInTo(node)
  const acknowledged: string[] = []
  let writing = true
  const writers = Array.from({ length: 4 }, async () => {
    while (writing) {
      const res = await post(node.url, token, { type: 'load', value: { at: Date.now() } })
      if (res.status === 200) acknowledged.push(((await res.json()) as { id: string }).id)
    }
  })
  while (acknowledged.length < 200) await Bun.sleep(5)
  const before = [...acknowledged] // acknowledged before the backup began
  const file = join(dir, 'backup.db')
  const backup = await command(data, 'backup', file)
  writing = false
  await Promise.all(writers)
  expect(backup).toMatchObject({ code: 0 })
  expect(backup.out).toContain(`backup written to ${file}`)
  // a second backup to the same file is refused: nothing is overwritten
  expect((await command(data, 'backup', file)).code).toBe(1)
  // restore is refused while the service runs
  const refused = await command(data, 'restore', file)
  expect(refused.code).toBe(1)
  // it says what to do, naming the setting and the running service's data
  expect(refused.err).toContain('the service is running on this data')
  expect(refused.err).toContain(`DATA_DIR=${data}`)
  expect(refused.err).toContain('stop it before restoring')
  node.proc.kill('SIGTERM')
  expect(await node.proc.exited).toBe(0)

  const restoredDir = join(dir, 'restored')
  const restored = await command(restoredDir, 'restore', file)
  expect(restored.code).toBe(0)
  const again = await start({ DATA_DIR: restoredDir })
  try {
    const t2 = await signInTo(again)
    const seen = await fetch(
      `${again.url}/rest/v1/reference/extobjs?limit=100000&mask=id&filter=${encodeURIComponent('{"type":"load"}')}`,
      { headers: { authorization: `Bearer ${t2}` } },
    )
    const ids = new Set(((await seen.json()) as { id: string }[]).map((r) => r.id))
    expect(before.filter((id) => !ids.has(id))).toEqual([])
  } finally {
    again.proc.kill('SIGTERM')
    await again.proc.exited
  }
}, 60_000)

test('reset-password: through the running service, then on the stopped one; the old password stops working', async () => {
  const data = join(dir, 'reset')
  const node = await start({ DATA_DIR: data })
  const live = await command(data, 'reset-password', 'admin')
  expect(live.code).toBe(0)
  const first = /\(shown once\): (\S+)/.exec(live.out)![1]!
  const signIn = (url: string, pwd: string) =>
    fetch(`${url}/rest/v1/iam/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domain: 'master', login: 'admin', pwd, session_type: 'token' }),
    }).then((r) => r.status)
  expect(await signIn(node.url, ADMIN_PASSWORD)).toBe(401)
  expect(await signIn(node.url, first)).toBe(200)
  expect((await command(data, 'reset-password', '--domain', 'master', 'nobody')).code).toBe(1)
  node.proc.kill('SIGTERM')
  await node.proc.exited

  const offline = await command(data, 'reset-password', 'admin')
  expect(offline.code).toBe(0)
  const second = /\(shown once\): (\S+)/.exec(offline.out)![1]!
  const after = await start({ DATA_DIR: data })
  try {
    expect(await signIn(after.url, first)).toBe(401)
    expect(await signIn(after.url, second)).toBe(200)
  } finally {
    after.proc.kill('SIGTERM')
    await after.proc.exited
  }
}, 60_000)

test('a first start with an ADMIN_PASSWORD the policy refuses stops with a line naming it', async () => {
  const proc = Bun.spawn([process.execPath, 'server.ts'], {
    cwd: root,
    env: { ...process.env, DATA_DIR: join(dir, 'weak'), ADMIN_PASSWORD: 'short', PORT: '0' },
    stdout: 'ignore',
    stderr: 'pipe',
  })
  expect(await proc.exited).toBe(2)
  expect(await new Response(proc.stderr).text()).toStartWith('cannot start: ADMIN_PASSWORD: password must be at least')
})

test('reset-password gives a password the domain policy takes, however long it asks; with no database it changes nothing', async () => {
  const data = join(dir, 'strict')
  const node = await start({ DATA_DIR: data })
  const token = await signInTo(node)
  const policy = await fetch(`${node.url}/rest/v1/domain/settings/password_policy`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ value: { min_length: 64 } }),
  })
  expect(policy.status).toBe(200)
  const live = await command(data, 'reset-password', 'admin')
  expect(live.err).toBe('')
  expect(/\(shown once\): (\S+)/.exec(live.out)![1]!.length).toBe(64)
  node.proc.kill('SIGTERM')
  await node.proc.exited
  // a DATA_DIR with no database: refused, and no new installation is made there
  const empty = join(dir, 'empty')
  const none = await command(empty, 'reset-password', 'admin')
  expect(none.code).toBe(1)
  expect(none.err).toContain('there is no database')
  expect(existsSync(join(empty, 'platform.db'))).toBe(false)
}, 60_000)

test('a backup named by a relative path is written where the command runs, not where the service does', async () => {
  const data = join(dir, 'relative')
  const node = await start({ DATA_DIR: data })
  try {
    const proc = Bun.spawn([process.execPath, join(root, 'server.ts'), 'backup', 'here.db'], {
      cwd: dir,
      env: { ...process.env, DATA_DIR: data, ADMIN_PASSWORD, LOG_LEVEL: 'error' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    expect(await proc.exited).toBe(0)
    expect(existsSync(join(dir, 'here.db'))).toBe(true)
  } finally {
    node.proc.kill('SIGTERM')
    await node.proc.exited
  }
}, 60_000)

test('backup and reset-password where no DATA_DIR names the data: a message naming DATA_DIR, nothing made', async () => {
  const elsewhere = join(dir, 'elsewhere')
  mkdirSync(elsewhere)
  const { DATA_DIR: _unset, ...env } = process.env
  const run = async (...args: string[]) => {
    const proc = Bun.spawn([process.execPath, join(root, 'server.ts'), ...args], {
      cwd: elsewhere,
      env: { ...env, LOG_LEVEL: 'error' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    return { code: await proc.exited, err: await new Response(proc.stderr).text() }
  }
  const backup = await run('backup', 'b.db')
  expect(backup.code).toBe(1)
  expect(backup.err).toBe(
    `backup failed: there is no database at ${join(elsewhere, 'data', 'platform.db')} (DATA_DIR is not set, so the ` +
      `data directory is ${join(elsewhere, 'data')}, taken from where this command runs): set DATA_DIR to the ` +
      'directory the service keeps its data in, as it is set for the service, or run this where the service runs\n',
  )
  const reset = await run('reset-password', 'admin')
  expect(reset.code).toBe(1)
  expect(reset.err).toContain('DATA_DIR is not set')
  // neither a data directory nor a backup file was made
  expect(readdirSync(elsewhere)).toEqual([])
  // a backup into a folder that does not exist says so
  const nowhere = await command(join(dir, 'live'), 'backup', join(dir, 'no-such-folder', 'b.db'))
  expect([nowhere.code, nowhere.err]).toEqual([1, expect.stringContaining('no-such-folder does not exist')])
})
