// Two nodes starting at once on one database, each with a DATA_DIR of its own: the first makes the
// administrator and its password (pending until its start listens), the second, starting before
// that, generates another in its place. Only the password that signs in is announced; the first
// node's file, stale, goes.
import { afterAll, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { api, routes } from '../../routes/_manifest.gen'
import { loadConfig } from '~/config'
import { announceFirstAdmin, bootstrap } from '~/identity/bootstrap'
import { createLogger } from '~/log'
import { type Service, startService } from '~/service'
import { createMemoryKv } from '~storage/kv/memory'

const dir = mkdtempSync(join(tmpdir(), 'platform-first-race-'))
const services: Service[] = []
afterAll(async () => {
  for (const s of services) await s.stop()
  rmSync(dir, { recursive: true, force: true })
})

/** A node on the shared database file, with its own data directory; its warnings kept. */
async function node(name: string, db = 'shared.db') {
  const warnings: string[] = []
  const log = createLogger('warn', (line) => void warnings.push(line))
  const config = loadConfig({
    DATA_DIR: join(dir, name),
    LIBSQL_URL: `file:${join(dir, db)}`,
    ADMIN_PASSWORD: '',
    PORT: '0',
    NODE_NAME: name,
  })
  const service = await startService(
    config,
    { routes, api },
    { kv: createMemoryKv(), listen: false, schedule: false, log },
  )
  services.push(service)
  return { service, warnings, file: join(dir, name, 'initial-admin-password') }
}

const signIn = (s: Service, pwd: string) =>
  s.app
    .handle(
      new Request('http://localhost/rest/v1/iam/sessions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-real-ip': '10.1.2.3' },
        body: JSON.stringify({ domain: 'master', login: 'admin', pwd, session_type: 'token' }),
      }),
    )
    .then((r) => r.status)

test('a password replaced by another start before it was announced is not announced, and its file goes', async () => {
  const a = await node('a')
  const first = a.service.bootstrap
  expect(first.created).toBe(true)
  const mine = first.generated!.password
  expect(readFileSync(a.file, 'utf8').trim()).toBe(mine)

  // the second node starts before the first listens: it is the one to listen, so it renews
  const b = await node('b')
  const renewed = await bootstrap(b.service.deps, { retry: true })
  const theirs = renewed.generated!.password
  expect(theirs).not.toBe(mine)
  expect(readFileSync(b.file, 'utf8').trim()).toBe(theirs)

  // a third, at the same moment, finds the renewal done: it leaves the password as it is
  const c = await node('c')
  const [late, lateToo] = await Promise.all([
    bootstrap(c.service.deps, { retry: true }),
    bootstrap(c.service.deps, { retry: true }),
  ])
  expect([late.generated, lateToo.generated].filter(Boolean)).toHaveLength(1)
  const third = (late.generated ?? lateToo.generated)!.password

  // the first node listens now: its password no longer signs in, so it announces nothing and removes its file
  const saidByA = await announceFirstAdmin(a.service.deps, first)
  expect(saidByA.generated).toBeUndefined()
  expect(existsSync(a.file)).toBe(false)
  expect(a.warnings.join('\n')).toContain('replaced before it was announced')
  // so does the second: the third's renewal came after its own
  expect((await announceFirstAdmin(b.service.deps, renewed)).generated).toBeUndefined()
  expect(existsSync(b.file)).toBe(false)
  // the last generated is the one announced, and the one that signs in
  const saidByC = await announceFirstAdmin(c.service.deps, late.generated ? late : lateToo)
  expect(saidByC.generated?.password).toBe(third)
  expect(c.warnings.join('\n')).toContain('is in a file only')
  expect(readFileSync(c.file, 'utf8').trim()).toBe(third)
  expect(await signIn(c.service, third)).toBe(200)
  expect(await signIn(c.service, mine)).toBe(401)
  expect(await signIn(c.service, theirs)).toBe(401)
  // announced: a later start renews nothing
  expect((await bootstrap(a.service.deps, { retry: true })).generated).toBeUndefined()
})

test('a marker written before generations (the bare user id) is renewed and announced', async () => {
  const old = await node('old', 'old.db')
  const { userId } = old.service.bootstrap.generated!.pending
  await old.service.deps.db.run('UPDATE installation SET admin_pending = ? WHERE one = 1', [userId])
  const renewed = await bootstrap(old.service.deps, { retry: true })
  expect(renewed.generated?.pending.userId).toBe(userId)
  expect((await announceFirstAdmin(old.service.deps, renewed)).generated).toBeDefined()
  expect(await signIn(old.service, renewed.generated!.password)).toBe(200)
})
