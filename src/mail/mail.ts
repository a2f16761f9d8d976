/**
 * Outgoing mail. A message joins the durable queue in the transaction that causes it (so a
 * committed request never loses its mail); the mail worker (src/workers/mail-outbox.ts) delivers
 * it through Resend, or without RESEND_API_KEY writes it to the log, so every flow can be finished
 * locally from the log.
 */
import * as v from 'valibot'
import type { Db, TxStep } from '~storage/db'
import type { Unit } from '../entities/unit'
import { enqueue, jobsOfKind, queueKind } from '../queue-kinds'
import { optStr } from '~storage/doc'

/** A message on the queue: its domain is the job's. */
export const MAIL = queueKind(
  'mail',
  v.object({ recipient: v.string(), subject: v.string(), text: v.string(), html: v.string() }),
)

export type QueuedMail = v.InferOutput<typeof MAIL.payload>
export type OutgoingMail = QueuedMail & { domain: string }

/**
 * A transaction step: the message joins the queue with the change that causes it. Without a mail
 * provider there is nothing to deliver: the message is recorded as logged and, after the commit,
 * written to the log.
 */
export function* enqueueMail(u: Unit, mail: OutgoingMail): TxStep<string> {
  const { domain, ...message } = mail
  const { config, log } = u.ctx.deps
  const inDomain = u.inDomain(domain)
  if (config.resendApiKey) return yield* enqueue(inDomain, MAIL, { payload: message })
  const id = yield* enqueue(inDomain, MAIL, { payload: message, done: { logged: true } })
  u.afterCommit(`mail:${id}`, () =>
    log.info('mail (no RESEND_API_KEY: recorded in the outbox, not sent)', {
      to: message.recipient,
      subject: message.subject,
      text: message.text,
    }),
  )
  return id
}

export type MailStatus = 'pending' | 'sending' | 'sent' | 'failed' | 'logged'

export interface MailRow extends OutgoingMail {
  id: string
  created: string
  status: MailStatus
  attempts: number
  error: string | null
  providerId: string | null
}

/** The messages to an address, newest first (for tests and operators). */
export async function mailTo(db: Db, recipient: string): Promise<MailRow[]> {
  return (await jobsOfKind(db, MAIL, { payload: { recipient } })).map((job) => ({
    id: job.id,
    domain: job.domain,
    ...job.payload,
    created: job.created,
    status:
      job.status === 'running'
        ? 'sending'
        : job.status === 'done'
          ? job.result?.logged
            ? 'logged'
            : 'sent'
          : job.status,
    attempts: job.attempts,
    error: job.error,
    providerId: optStr(job.result ?? undefined, 'provider_id') ?? null,
  }))
}
