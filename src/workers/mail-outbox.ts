/**
 * Delivers queued mail through Resend, with retries and backoff (30 s, 2 min, 8 min, 32 min) and an
 * idempotency key, each attempt's outcome recorded on the message. Every process may run it: each
 * message is claimed by one of them. (Without RESEND_API_KEY nothing is queued: see src/mail/mail.ts.)
 */
import { Resend } from 'resend'
import { completeJob, failJob, LostClaim } from '~storage/queue'
import { isoTime } from '../clock'
import type { Deps } from '../deps'
import { MAIL, type QueuedMail } from '../mail/mail'
import { claim, type JobOf } from '../queue-kinds'
import type { Worker } from './runner'

export const MAX_ATTEMPTS = 5
const LEASE_MS = 5 * 60_000
const BATCH = 20
const backoffMs = (attempt: number) => 30_000 * 4 ** (attempt - 1)

async function deliver(deps: Deps, resend: Resend, job: JobOf<QueuedMail>): Promise<void> {
  const m = job.payload
  const { db, clock, log, config } = deps
  let failure: string | null = null
  let providerId: string | null = null
  try {
    const { data, error } = await resend.emails.send(
      { from: config.mailFrom, to: m.recipient, subject: m.subject, text: m.text, html: m.html },
      { idempotencyKey: job.id }, // a retried message is not delivered twice by the provider
    )
    if (error) throw new Error(`${error.name}: ${error.message}`)
    providerId = data?.id ?? null
  } catch (err) {
    failure = (err as Error).message
  }
  const done = isoTime(clock.now())
  const retryAt = job.attempts >= MAX_ATTEMPTS ? null : clock.now() + backoffMs(job.attempts)
  try {
    if (failure === null) await db.write(() => completeJob(job, done, { provider_id: providerId }))
    else await db.write(() => failJob(job, done, failure, retryAt))
  } catch (err) {
    // our lease ran out and another process took the message over: its outcome is that process's to record
    if (err instanceof LostClaim) return log.warn('mail claim lost', { mail: job.id, attempt: job.attempts })
    throw err
  }
  if (failure !== null)
    log.warn('mail delivery failed', { mail: job.id, attempt: job.attempts, error: failure, retry: retryAt !== null })
}

/** The worker; its Resend client is made at its first step, from the configuration of the service it serves. */
export function createMailOutboxWorker(): Worker {
  let client: Resend | null | undefined
  const resendOf = ({ resendApiKey, resendBaseUrl }: Deps['config']) =>
    (client ??= resendApiKey ? new Resend(resendApiKey, resendBaseUrl ? { baseUrl: resendBaseUrl } : undefined) : null)
  return {
    name: 'mail-outbox',
    every: 1000,
    wakeOn: [`queue:${MAIL.kind}`],
    lease: 'none',
    async step({ deps }) {
      const resend = resendOf(deps.config)
      if (!resend) return 0 // without a provider, messages are logged when they are queued
      const now = deps.clock.now()
      const batch = await claim(deps, MAIL, now, now + LEASE_MS, BATCH)
      // each message on its own: one that fails to record its outcome does not stop the others
      const outcomes = await Promise.allSettled(batch.map((job) => deliver(deps, resend, job)))
      for (const o of outcomes)
        if (o.status === 'rejected') deps.log.error('mail outcome not recorded', { error: String(o.reason) })
      return batch.length
    },
  }
}
