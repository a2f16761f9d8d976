/**
 * Pending credential requests: created with a lifetime, consumed once, never valid after `expires`.
 * The id a mail carries is the secret; the table holds only its SHA-256 (`requestKey`), so a copy
 * of the database holds no live link.
 */
import { createHash } from 'node:crypto'
import type { Db, TxStep } from './db'
import { tx } from './db'
import { checkStorable, type Doc } from './doc'
import { docOf, int, text } from './columns'

export type RequestKind = 'pwd_reset' | 'invite' | 'self_register'

/** A request as it is made: `id` is the secret the mail carries, never stored. */
export interface NewRequest {
  id: string
  kind: RequestKind
  domain: string
  /** The user whose credentials the request sets: changes of that user void it (`voidAccountRequests`). */
  account?: string
  doc: Doc
  expires: number
}

/** A request as stored: `key` is what its row is stored under. */
export interface StoredRequest {
  key: string
  kind: RequestKind
  domain: string
  doc: Doc
  expires: number
}

/** What a request id is stored under (hex, 64 characters). */
export const requestKey = (id: string): string => createHash('sha256').update(id).digest('hex')

export function* insertRequest(r: NewRequest, created: string): TxStep<void> {
  checkStorable(r.doc) // refused now rather than when the request is confirmed and its doc stored
  yield* tx.run(
    'INSERT INTO iam_requests (id, kind, domain, account, doc, created, expires) VALUES (?, ?, ?, ?, ?, ?, ?)',
    [requestKey(r.id), r.kind, r.domain, r.account ?? null, JSON.stringify(r.doc), created, r.expires],
  )
}

const toRequest = (row: unknown[]): StoredRequest => ({
  key: text(row[0]),
  kind: row[1] as RequestKind,
  domain: text(row[2]),
  doc: docOf(row[3]),
  expires: int(row[4]),
})

const COLUMNS = 'SELECT id, kind, domain, doc, expires FROM iam_requests'

/**
 * The request if it exists, is of this kind and is still current at `now`. Rows stored before
 * migration 0018 hold the raw id (a UUID, 36 characters); they expire within three days of the
 * upgrade, and this fallback can go then. A 64-character hash given as the id never matches.
 */
export async function findRequest(db: Db, id: string, kind: RequestKind, now: number): Promise<StoredRequest | null> {
  const row = await db.get(`${COLUMNS} WHERE (id = ? OR (id = ? AND length(id) = 36)) AND kind = ? AND expires > ?`, [
    requestKey(id),
    id,
    kind,
    now,
  ])
  return row ? toRequest(row) : null
}

/** Consumes the request stored under `key` inside a transaction: deleted and returned, or null if it is gone or expired. */
export function* takeRequest(key: string, kind: RequestKind, now: number): TxStep<StoredRequest | null> {
  const row = yield* tx.get(`${COLUMNS} WHERE id = ? AND kind = ? AND expires > ?`, [key, kind, now])
  if (!row) return null
  yield* tx.run('DELETE FROM iam_requests WHERE id = ?', [key])
  return toRequest(row)
}

/** Voids every pending request bound to the account (its password, e-mail or login changed, or it is gone). */
export function* voidAccountRequests(domain: string, account: string): TxStep<number> {
  return (yield* tx.run('DELETE FROM iam_requests WHERE domain = ? AND account = ?', [domain, account])).changes
}

/** Removes requests whose lifetime ended; returns how many. */
export async function purgeExpiredRequests(db: Db, now: number): Promise<number> {
  return (await db.run('DELETE FROM iam_requests WHERE expires <= ?', [now])).changes
}

/** Removes a domain's pending requests (the domain is being deleted). */
export function* purgeRequests(domain: string): TxStep<void> {
  yield* tx.run('DELETE FROM iam_requests WHERE domain = ?', [domain])
}
