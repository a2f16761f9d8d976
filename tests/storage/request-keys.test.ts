// Credential requests are stored under the SHA-256 of their id. Rows stored before migration 0018
// (under the raw id) keep working until they expire, and are bound to their account for voiding.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openEmbeddedDb } from '~storage/db-embedded'
import { migrate } from '~storage/migrate'
import { migrations } from '~storage/migrations/index'
import { findRequest, insertRequest, requestKey, takeRequest, voidAccountRequests } from '~storage/requests'

const dir = mkdtempSync(join(tmpdir(), 'platform-request-keys-'))
const db = openEmbeddedDb(join(dir, 'old.db'))
afterAll(async () => {
  await db.close()
  rmSync(dir, { recursive: true, force: true })
})

const NOW = 1_700_000_000_000
const legacy = (id: string, kind: string, doc: object) =>
  db.run('INSERT INTO iam_requests (id, kind, domain, doc, created, expires) VALUES (?, ?, ?, ?, ?, ?)', [
    id,
    kind,
    'd1',
    JSON.stringify(doc),
    '2024-01-01T00:00:00.000Z',
    NOW + 60_000,
  ])

test('rows stored under the raw id before 0018 still work and are voided with their account', async () => {
  const at = migrations.findIndex((m) => m.id === '0018_request_keys')
  await migrate(db, migrations.slice(0, at))
  const [reset, other, signup] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()]
  await legacy(reset, 'pwd_reset', { userId: 'u1', login: 'ann', email: 'ann@example.com' })
  await legacy(other, 'invite', { userId: 'u1', login: 'ann', email: 'ann@example.com' })
  await legacy(signup, 'self_register', { login: 'bob', email: 'bob@example.com' })
  await migrate(db)

  const found = await findRequest(db, reset, 'pwd_reset', NOW)
  expect(found).toMatchObject({ key: reset, domain: 'd1', doc: { userId: 'u1' } })
  expect(await findRequest(db, reset, 'pwd_reset', NOW + 60_000)).toBeNull() // its lifetime still holds
  expect(await db.write(() => takeRequest(found!.key, 'pwd_reset', NOW))).not.toBeNull()
  expect(await findRequest(db, reset, 'pwd_reset', NOW)).toBeNull()

  expect(await findRequest(db, other, 'invite', NOW)).not.toBeNull()
  expect(await db.write(() => voidAccountRequests('d1', 'u1'))).toBe(1)
  expect(await findRequest(db, other, 'invite', NOW)).toBeNull()
  expect(await findRequest(db, signup, 'self_register', NOW)).not.toBeNull() // bound to no account
})

test('new rows: found by the id, not by the stored hash; voided by account and domain', async () => {
  const id = crypto.randomUUID()
  const request = { id, kind: 'invite' as const, domain: 'd2', account: 'u2', doc: { userId: 'u2' }, expires: NOW + 1 }
  await db.write(() => insertRequest(request, '2024-01-01T00:00:00.000Z'))
  expect(await db.get('SELECT id, account FROM iam_requests WHERE domain = ?', ['d2'])).toEqual([requestKey(id), 'u2'])
  expect(await findRequest(db, id, 'invite', NOW)).toMatchObject({ key: requestKey(id), doc: { userId: 'u2' } })
  expect(await findRequest(db, requestKey(id), 'invite', NOW)).toBeNull()
  expect(await db.write(() => voidAccountRequests('d1', 'u2'))).toBe(0)
  expect(await db.write(() => voidAccountRequests('d2', 'u2'))).toBe(1)
})
