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
// the nodes of one cluster share the key stored secrets are sealed with
const SECRETS_KEY = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')
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
    SECRETS_KEY,
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

  // two more at the same moment: each generates one, and the last committed is the password
  const [c, d] = await Promise.all([node('c'), node('d')])
  const [byC, byD] = await Promise.all([
    bootstrap(c.service.deps, { retry: true }),
    bootstrap(d.service.deps, { retry: true }),
  ])

  // the first node listens now: its password no longer signs in, so it announces nothing and removes its file
  const saidByA = await announceFirstAdmin(a.service.deps, first)
  expect(saidByA.generated).toBeUndefined()
  expect(existsSync(a.file)).toBe(false)
  expect(a.warnings.join('\n')).toContain('replaced before it was announced')
  expect((await announceFirstAdmin(b.service.deps, renewed)).generated).toBeUndefined()
  expect(existsSync(b.file)).toBe(false)
  // of the two at once, the one whose password signs in announces it; the other removes its file
  const said = await Promise.all([announceFirstAdmin(c.service.deps, byC), announceFirstAdmin(d.service.deps, byD)])
  const winner = said.findIndex((r) => r.generated !== undefined)
  expect(said.filter((r) => r.generated)).toHaveLength(1)
  const [won, lost] = winner === 0 ? [c, d] : [d, c]
  const password = said[winner]!.generated!.password
  expect(won.warnings.join('\n')).toContain('is in a file only')
  expect(readFileSync(won.file, 'utf8').trim()).toBe(password)
  expect(existsSync(lost.file)).toBe(false)
  expect(await signIn(won.service, password)).toBe(200)
  for (const stale of [mine, theirs, (winner === 0 ? byD : byC).generated!.password])
    expect(await signIn(won.service, stale)).toBe(401)
  // announced: a later start renews nothing
  expect((await bootstrap(a.service.deps, { retry: true })).generated).toBeUndefined()
})

test('a start that announced keeps its password: a renewal that read the marker before finds it gone', async () => {
  const e = await node('e', 'e.db')
  const first = e.service.bootstrap
  const f = await node('f', 'e.db')
  // the marker is read by the renewal, then the announcement clears it, then the renewal commits
  const pending = bootstrap(f.service.deps, { retry: true })
  const said = await announceFirstAdmin(e.service.deps, first)
  const renewed = await pending
  if (renewed.generated) {
    // the renewal committed first after all: the announcement found its password replaced
    expect(said.generated).toBeUndefined()
    expect((await announceFirstAdmin(f.service.deps, renewed)).generated).toBeDefined()
    expect(await signIn(f.service, renewed.generated.password)).toBe(200)
  } else {
    expect(said.generated).toBeDefined()
    expect(await signIn(e.service, first.generated!.password)).toBe(200)
  }
})
