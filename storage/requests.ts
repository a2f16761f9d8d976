/** Pending credential requests: created with a lifetime, consumed once, never valid after `expires`. */
import type { Db, TxStep } from './db'
import { tx } from './db'
import { checkStorable, type Doc } from './doc'

export type RequestKind = 'pwd_reset' | 'invite' | 'self_register'

export interface StoredRequest {
  id: string
  kind: RequestKind
  domain: string
  doc: Doc
  expires: number
}

export function* insertRequest(r: StoredRequest, created: string): TxStep<void> {
  checkStorable(r.doc) // refused now rather than when the request is confirmed and its doc stored
  yield* tx.run('INSERT INTO iam_requests (id, kind, domain, doc, created, expires) VALUES (?, ?, ?, ?, ?, ?)', [
    r.id,
    r.kind,
    r.domain,
    JSON.stringify(r.doc),
    created,
    r.expires,
  ])
}

const toRequest = (row: unknown[]): StoredRequest => ({
  id: row[0] as string,
  kind: row[1] as RequestKind,
  domain: row[2] as string,
  doc: JSON.parse(row[3] as string) as Doc,
  expires: row[4] as number,
})

const CURRENT = 'SELECT id, kind, domain, doc, expires FROM iam_requests WHERE id = ? AND kind = ? AND expires > ?'

/** The request if it exists, is of this kind and is still current at `now`. */
export async function findRequest(db: Db, id: string, kind: RequestKind, now: number): Promise<StoredRequest | null> {
  const row = await db.get(CURRENT, [id, kind, now])
  return row ? toRequest(row) : null
}

/** Consumes the request inside a transaction: deleted and returned, or null if it is gone or expired. */
export function* takeRequest(id: string, kind: RequestKind, now: number): TxStep<StoredRequest | null> {
  const row = yield* tx.get(CURRENT, [id, kind, now])
  if (!row) return null
  yield* tx.run('DELETE FROM iam_requests WHERE id = ?', [id])
  return toRequest(row)
}

/** Removes requests whose lifetime ended; returns how many. */
export async function purgeExpiredRequests(db: Db, now: number): Promise<number> {
  return (await db.run('DELETE FROM iam_requests WHERE expires <= ?', [now])).changes
}

/** Removes a domain's pending requests (the domain is being deleted). */
export function* purgeRequests(domain: string): TxStep<void> {
  yield* tx.run('DELETE FROM iam_requests WHERE domain = ?', [domain])
}
