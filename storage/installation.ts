/**
 * This installation's own row (storage/migrations/0008_installation.sql): its id, made once at the
 * first start, and the licence posted last, kept as issued (the token) and as verified (its payload).
 * Not an entity: it belongs to no domain and is not journaled.
 */
import type { Db, TxStep } from './db'
import { tx } from './db'
import type { Doc } from './doc'

export interface StoredLicence {
  /** The compact token as posted. */
  token: string
  /** Its claims, verified when it was posted. */
  payload: Doc
  /** Fingerprint of the public key that verified it. */
  keyId: string
  /** When it was posted (ISO time). */
  installed: string
}

export interface Installation {
  id: string
  created: string
  licence?: StoredLicence
}

/** Makes the installation's row unless it exists (processes starting together keep the first one's id). */
export async function ensureInstallation(db: Db, id: string, created: string): Promise<Installation> {
  await db.run('INSERT OR IGNORE INTO installation (one, id, created) VALUES (1, ?, ?)', [id, created])
  return db.read(readInstallation)
}

/** The installation's row; a step, so a write transaction can read the licence in force. */
export function* readInstallation(): TxStep<Installation> {
  const row = yield* tx.get(
    'SELECT id, created, licence_token, licence_payload, licence_key, licence_installed FROM installation WHERE one = 1',
  )
  if (!row) throw new Error('the installation row is missing (it is made at start)')
  const [id, created, token, payload, keyId, installed] = row as [string, string, ...(string | null)[]]
  const out: Installation = { id, created }
  if (token && payload)
    out.licence = { token, payload: JSON.parse(payload) as Doc, keyId: keyId ?? '', installed: installed ?? '' }
  return out
}

/** Replaces the stored licence. */
export function* storeLicence(licence: StoredLicence): TxStep<void> {
  yield* tx.run(
    `UPDATE installation SET licence_token = ?, licence_payload = ?, licence_key = ?, licence_installed = ?
     WHERE one = 1`,
    [licence.token, JSON.stringify(licence.payload), licence.keyId, licence.installed],
  )
}

/** The id of the key the stored secrets are sealed with (migration 0024), or null before the first. */
export function* readSecretsKeyId(): TxStep<string | null> {
  const row = yield* tx.get('SELECT secrets_key FROM installation WHERE one = 1')
  return (row?.[0] as string | null | undefined) ?? null
}

/** Records the key's id in place of `was` (null: none yet); false when another process recorded another first. */
export function* recordSecretsKeyId(id: string, was: string | null): TxStep<boolean> {
  const sql = 'UPDATE installation SET secrets_key = ? WHERE one = 1 AND secrets_key IS ?'
  return (yield* tx.run(sql, [id, was])).changes === 1
}

/** The first administrator whose generated password no start has announced yet, or null. */
export function* readAdminPending(): TxStep<string | null> {
  const row = yield* tx.get('SELECT admin_pending FROM installation WHERE one = 1')
  return (row?.[0] as string | null | undefined) ?? null
}

/** Marks the first administrator as waiting for its password to be announced (in the transaction that makes it). */
export function* markAdminPending(userId: string): TxStep<void> {
  yield* tx.run('UPDATE installation SET admin_pending = ? WHERE one = 1', [userId])
}

/** Whether `userId`'s generated password still waits (a start renews it only then, in the same transaction). */
export function* adminPending(userId: string): TxStep<boolean> {
  return (yield* readAdminPending()) === userId
}

/** Its password was announced (or replaced by an operator): whether `userId` was the one waiting. */
export function* clearAdminPending(userId: string): TxStep<boolean> {
  return (
    (yield* tx.run('UPDATE installation SET admin_pending = NULL WHERE one = 1 AND admin_pending = ?', [userId]))
      .changes === 1
  )
}
