/** The mail outbox: every message is written in the transaction that causes it, then delivered. */
import type { Db, TxStep } from './db'
import { tx } from './db'

export type MailStatus = 'pending' | 'sending' | 'sent' | 'failed' | 'logged'

export interface Mail {
  id: string
  domain: string
  recipient: string
  subject: string
  text: string
  html: string
}

export interface MailRow extends Mail {
  created: string
  status: MailStatus
  attempts: number
  error: string | null
  providerId: string | null
}

export function* enqueueMail(
  m: Mail,
  created: string,
  status: 'pending' | 'logged',
  nextAttempt: number,
): TxStep<void> {
  yield* tx.run(
    'INSERT INTO outbox (id, domain, created, recipient, subject, text, html, status, next_attempt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [m.id, m.domain, created, m.recipient, m.subject, m.text, m.html, status, nextAttempt],
  )
}

const COLUMNS = 'id, domain, recipient, subject, text, html, created, status, attempts, error, provider_id'
const toRow = (r: unknown[]): MailRow => ({
  id: r[0] as string,
  domain: r[1] as string,
  recipient: r[2] as string,
  subject: r[3] as string,
  text: r[4] as string,
  html: r[5] as string,
  created: r[6] as string,
  status: r[7] as MailStatus,
  attempts: r[8] as number,
  error: r[9] as string | null,
  providerId: r[10] as string | null,
})

/**
 * Claims up to `limit` messages due at `now` for delivery, one statement, so each message goes to
 * one sender even with several processes. A claim is a lease until `leaseUntil`: a message whose
 * sender died while `sending` is due again once the lease ends (delivery is at least once).
 */
export async function claimDueMail(db: Db, now: number, leaseUntil: number, limit: number): Promise<MailRow[]> {
  const rows = await db.all(
    `UPDATE outbox SET status = 'sending', attempts = attempts + 1, next_attempt = ?
     WHERE id IN (SELECT id FROM outbox WHERE status IN ('pending', 'sending') AND next_attempt <= ? ORDER BY next_attempt LIMIT ?)
     RETURNING ${COLUMNS}`,
    [leaseUntil, now, limit],
  )
  return rows.map(toRow)
}

export async function markMailSent(db: Db, id: string, providerId: string | null): Promise<void> {
  await db.run("UPDATE outbox SET status = 'sent', error = NULL, provider_id = ? WHERE id = ?", [providerId, id])
}

/** A failed attempt: tried again at `retryAt`, or given up when it is null. */
export async function markMailFailed(db: Db, id: string, error: string, retryAt: number | null): Promise<void> {
  await db.run('UPDATE outbox SET status = ?, error = ?, next_attempt = ? WHERE id = ?', [
    retryAt === null ? 'failed' : 'pending',
    error,
    retryAt ?? 0,
    id,
  ])
}

/** The newest messages to an address (for tests and operators). */
export async function mailTo(db: Db, recipient: string): Promise<MailRow[]> {
  return (
    await db.all(`SELECT ${COLUMNS} FROM outbox WHERE recipient = ? ORDER BY created DESC, id DESC`, [recipient])
  ).map(toRow)
}
