/**
 * Outgoing mail. A message is written to the outbox in the transaction that causes it (so a
 * committed request never loses its mail), then delivered after the commit through Resend, with
 * retries and backoff, each attempt's outcome recorded on the message. Without RESEND_API_KEY the
 * message is recorded as `logged` and its text written to the log, so every flow can be finished
 * locally from the log.
 */
import { Resend } from 'resend'
import type { Db, TxStep } from '~storage/db'
import { claimDueMail, enqueueMail, markMailFailed, markMailSent, type Mail, type MailRow } from '~storage/outbox'
import { isoTime, type Clock } from '../clock'
import type { Config } from '../config'
import type { Logger } from '../log'

export const MAX_ATTEMPTS = 5
const LEASE_MS = 5 * 60_000
const POLL_MS = 1000
/** 30 s, 2 min, 8 min, 32 min between attempts. */
const backoffMs = (attempt: number) => 30_000 * 4 ** (attempt - 1)

export type OutgoingMail = Omit<Mail, 'id'>

export class MailService {
  private readonly resend: Resend | null
  private timer?: ReturnType<typeof setInterval>
  /** Delivery passes run one after another; `queued` is the pass not started yet, shared by callers. */
  private chain: Promise<void> = Promise.resolve()
  private queued: Promise<void> | null = null

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly config: Pick<Config, 'resendApiKey' | 'resendBaseUrl' | 'mailFrom'>,
  ) {
    this.resend = config.resendApiKey
      ? new Resend(config.resendApiKey, config.resendBaseUrl ? { baseUrl: config.resendBaseUrl } : undefined)
      : null
  }

  /** A transaction step: the message joins the outbox with the change that causes it. */
  *enqueue(mail: OutgoingMail): TxStep<string> {
    const id = crypto.randomUUID()
    const now = this.clock.now()
    yield* enqueueMail({ id, ...mail }, isoTime(now), this.resend ? 'pending' : 'logged', now)
    return id
  }

  /** After the commit: a logged message goes to the log, a pending one to the sender now. */
  async committed(mail: OutgoingMail): Promise<void> {
    if (!this.resend) {
      this.log.info('mail (no RESEND_API_KEY: recorded in the outbox, not sent)', {
        to: mail.recipient,
        subject: mail.subject,
        text: mail.text,
      })
      return
    }
    await this.flush()
  }

  start(): void {
    if (!this.resend) return
    this.timer = setInterval(
      () => this.flush().catch((err) => this.log.error('mail sender failed', { error: String(err) })),
      POLL_MS,
    )
    this.timer.unref()
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    await this.chain
  }

  /** Delivers every message due by now (including any committed before this call). */
  flush(): Promise<void> {
    if (!this.resend) return Promise.resolve()
    if (this.queued) return this.queued
    const pass = this.chain.then(() => {
      this.queued = null
      return this.deliverDue()
    })
    this.queued = pass
    this.chain = pass.catch(() => {})
    return pass
  }

  private async deliverDue(): Promise<void> {
    for (;;) {
      const now = this.clock.now()
      const batch = await claimDueMail(this.db, now, now + LEASE_MS, 20)
      if (batch.length === 0) return
      await Promise.all(batch.map((m) => this.deliver(m)))
    }
  }

  private async deliver(m: MailRow): Promise<void> {
    try {
      const { data, error } = await this.resend!.emails.send(
        { from: this.config.mailFrom, to: m.recipient, subject: m.subject, text: m.text, html: m.html },
        { idempotencyKey: m.id }, // a retried message is not delivered twice by the provider
      )
      if (error) throw new Error(`${error.name}: ${error.message}`)
      await markMailSent(this.db, m.id, data?.id ?? null)
    } catch (err) {
      const message = (err as Error).message
      const retryAt = m.attempts >= MAX_ATTEMPTS ? null : this.clock.now() + backoffMs(m.attempts)
      await markMailFailed(this.db, m.id, message, retryAt)
      this.log.warn('mail delivery failed', {
        mail: m.id,
        attempt: m.attempts,
        error: message,
        retry: retryAt !== null,
      })
    }
  }
}
