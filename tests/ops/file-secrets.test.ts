// What the service keeps on disk is its own (docs/operations.md, Files and secrets): a real service
// process makes its data directory 0700 and its files 0600, a backup too; a start tightens what it
// finds looser and warns naming each path. The signing secrets are sealed: the raw bytes of the
// database and of a backup hold none in clear; a start without the key, with another key, or with a
// key file others may read stops naming the setting; secrets an earlier version kept in clear are
// sealed at start and still sign.
import { afterAll, expect, test } from 'bun:test'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { channelSecret } from '~/integration/channels'
import { newSecretsKey } from '~/secret-box'
import { type ServiceProcess, signInTo, startProcess } from '../helpers/process'
import { ADMIN_PASSWORD, testService } from '../helpers/service'

const root = join(import.meta.dir, '..', '..')
const dir = mkdtempSync(join(tmpdir(), 'platform-files-'))
const started: ServiceProcess[] = []
afterAll(() => {
  for (const p of started) p.proc.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})
const start = async (env: Record<string, string>) => {
  const p = await startProcess(env)
  started.push(p)
  return p
}
const stop = async (p: ServiceProcess) => {
  p.proc.kill('SIGTERM')
  expect(await p.proc.exited).toBe(0)
}
const modeOf = (path: string) => `0${(statSync(path).mode & 0o777).toString(8)}`

/** `bun server.ts` as a command or a start expected to fail: its exit code and output. */
async function run(env: Record<string, string>, ...args: string[]) {
  const proc = Bun.spawn([process.execPath, 'server.ts', ...args], {
    cwd: root,
    env: { ...process.env, PORT: '0', ADMIN_PASSWORD, LOG_LEVEL: 'error', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [code, out, err] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ])
  return { code, out, err: err.trim() }
}

const data = join(dir, 'data')
const db = join(data, 'platform.db')
const keyFile = join(data, 'secrets.key')
let secret = ''

test('after a start every file of the service is 0600 in a 0700 folder, and no signing secret is in clear', async () => {
  const node = await start({ DATA_DIR: data })
  const token = await signInTo(node)
  const created = await fetch(`${node.url}/rest/v1/service/integration_points`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ code: 'hooks', type: 'subscr', url: 'https://example.com/hook' }),
  })
  expect(created.status).toBe(200)
  secret = ((await created.json()) as { secret: string }).secret
  expect(secret).toStartWith('whsec_')
  expect(modeOf(data)).toBe('0700')
  for (const file of [db, `${db}-wal`, `${db}-shm`, `${db}-commits`, keyFile])
    expect([file, modeOf(file)]).toEqual([file, '0600'])
  // a copy of the database (its log too: the write may not be checkpointed yet) holds the secret sealed only
  const raw = Buffer.concat([readFileSync(db), readFileSync(`${db}-wal`)])
  expect(raw.includes('whsec_')).toBe(false)
  expect(raw.includes(secret.slice('whsec_'.length))).toBe(false)

  const backup = join(dir, 'backup.db')
  expect((await run({ DATA_DIR: data }, 'backup', backup)).code).toBe(0)
  expect(modeOf(backup)).toBe('0600')
  expect(readFileSync(backup).includes('whsec_')).toBe(false)
  await stop(node)
}, 60_000)

test('a start tightens what it finds open to other users and warns naming each path', async () => {
  const channelFile = join(data, 'files', crypto.randomUUID(), 'report.csv')
  mkdirSync(join(channelFile, '..'), { recursive: true, mode: 0o755 })
  writeFileSync(channelFile, 'a,b\n', { mode: 0o644 })
  chmodSync(channelFile, 0o644)
  chmodSync(db, 0o644)
  chmodSync(data, 0o755)
  const node = await start({ DATA_DIR: data })
  const warnings = node
    .out()
    .split('\n')
    .filter((l) => l.includes('other users could read a file of the service'))
    .map((l) => JSON.parse(l) as { path: string; was: string })
  for (const [path, was] of [
    [data, '0755'],
    [db, '0644'],
    [join(channelFile, '..'), '0755'],
    [channelFile, '0644'],
  ])
    expect(warnings).toContainEqual(expect.objectContaining({ path, was }))
  expect([modeOf(data), modeOf(db), modeOf(channelFile), modeOf(join(channelFile, '..'))]).toEqual([
    '0700',
    '0600',
    '0600',
    '0700',
  ])
  await stop(node)
}, 60_000)

test('without the key, with another key, or with a key file others may read, the start stops naming the setting', async () => {
  const aside = join(dir, 'secrets.key.kept')
  renameSync(keyFile, aside)
  const missing = await run({ DATA_DIR: data })
  expect(missing.code).toBe(2)
  expect(missing.err).toStartWith(
    `cannot start: SECRETS_KEY_FILE: ${keyFile} does not exist, and 1 signing secret(s) of this installation are sealed with the key`,
  )
  renameSync(aside, keyFile)

  chmodSync(keyFile, 0o644)
  const loose = await run({ DATA_DIR: data })
  expect(loose.code).toBe(2)
  expect(loose.err).toStartWith(`cannot start: SECRETS_KEY_FILE: ${keyFile} is mode 0644: other users may read`)
  expect(modeOf(keyFile)).toBe('0644') // refused, not tightened: the operator must know
  chmodSync(keyFile, 0o600)

  const other = newSecretsKey()
  const wrong = await run({ DATA_DIR: data, SECRETS_KEY: other })
  expect(wrong.code).toBe(2)
  expect(wrong.err).toStartWith('cannot start: SECRETS_KEY: the key ')
  expect(wrong.err).not.toContain(other) // the key itself is never shown
  const badValue = await run({ DATA_DIR: data, SECRETS_KEY: 'not-a-key' })
  expect([badValue.code, badValue.err]).toEqual([
    2,
    'configuration error: SECRETS_KEY: must be the base64 of 32 random bytes (openssl rand -base64 32) (the value is not shown)',
  ])

  // the same key given by SECRETS_KEY serves
  const node = await start({ DATA_DIR: data, SECRETS_KEY: readFileSync(keyFile, 'utf8').trim() })
  expect(await signInTo(node)).toBeString()
  await stop(node)
}, 60_000)

test('signing secrets an earlier version kept in clear are sealed at the next start and open to the same secret', async () => {
  const shared = join(dir, 'clear')
  mkdirSync(shared)
  const first = await testService({ kv: 'memory', dataDir: shared })
  const domain = await first.createDomain('clear.master')
  const token = await first.adminIn('clear.master')
  const created = await first.call('POST', '/rest/v1/service/integration_points', {
    token,
    body: { code: 'old', type: 'subscr' },
  })
  const { id, secret: clear } = created.body as { id: string; secret: string }
  // the row as a version before sealing stored it
  await first.deps.db.run('UPDATE integration_points SET secret = ? WHERE domain = ? AND id = ?', [
    clear,
    domain.id,
    id,
  ])
  await first.close()
  const again = await testService({ kv: 'memory', dataDir: shared })
  try {
    const [stored] = (await again.deps.db.get('SELECT secret FROM integration_points WHERE id = ?', [id])) as [string]
    expect(stored).toStartWith('aesgcm1:')
    expect(await channelSecret(again.deps, domain.id, id)).toBe(clear)
    // bound to its row: the sealed value opens in no other place
    expect(again.deps.secrets.open(stored, 'integration_points.secret another/row')).rejects.toThrow('does not open')
  } finally {
    await again.close()
  }
}, 60_000)
