/**
 * Webhook deliveries handed to this process's deliveries worker as they are enqueued. While the
 * worker has room and no backlog, a new job is inserted claimed (its first attempt, leased as a
 * claim would lease it) and delivered once its write has committed: no claim's read and write, no
 * wake-up and pass of the worker (at 1,000 events a second, each came alone and paid for both). A
 * job the worker has no room for is enqueued pending and claimed as before, and so is every job
 * while the worker's last pass left due jobs unclaimed (they go first; due work it has not seen,
 * a retry come due, is claimed by its next scheduled pass). Only jobs due now and of no serial are
 * handed over, each id once. Nothing is delivered before its write commits; a process that dies
 * with jobs handed over leaves them claimed until their lease ends, as a claim would: at least
 * once, never lost.
 */
import type { NewJob } from '~storage/queue'
import { isoTime } from '../clock'
import type { DeliveryHandoffPort, DeliveryReservation } from '../ports'
import type { DeliveryJob } from './deliveries'

/** The deliveries worker's side (src/workers/webhook-deliveries.ts). */
export interface HandoffTaker {
  /** Whether the worker takes a job of the domain now; it then holds it until `start` or `drop`. */
  hold(domain: string): boolean
  /** A held job that was not enqueued claimed after all (its write failed, or its id was queued already). */
  drop(domain: string): void
  /** Delivers held jobs, enqueued claimed by one write (a batch: what they look up is looked up once). */
  start(jobs: readonly DeliveryJob[]): void
  /** How long a job handed over is leased (as long as a claim's lease), from its insert. */
  readonly leaseMs: number
}

export class DeliveryHandoff implements DeliveryHandoffPort {
  private taker: HandoffTaker | null = null
  /** Reservations whose write has not ended, and who waits for there to be none. */
  private open = 0
  private waiting: (() => void)[] = []

  /** The worker takes jobs from now on; answers how it stops. */
  attach(taker: HandoffTaker): () => void {
    this.taker = taker
    return () => {
      if (this.taker === taker) this.taker = null
    }
  }

  /** Resolves once no reservation waits for its write (the worker's drain waits for them as for deliveries). */
  settled(): Promise<void> {
    if (this.open === 0) return Promise.resolve()
    return new Promise((ended) => this.waiting.push(ended))
  }

  reserve(jobs: readonly NewJob[], now: number): DeliveryReservation | null {
    const taker = this.taker
    if (!taker) return null
    const ids = new Set<string>()
    const held = jobs.filter((job): job is NewJob & { id: string } => {
      if (job.id === undefined || ids.has(job.id) || job.serial !== undefined || job.runAt > now) return false
      if (!taker.hold(job.domain)) return false
      ids.add(job.id)
      return true
    })
    if (!held.length) return null
    let open = true
    this.open++
    const close = (inserted: ReadonlySet<string>) => {
      if (!open) return
      open = false
      const started: DeliveryJob[] = []
      for (const job of held)
        if (inserted.has(job.id)) started.push(claimedJob(job, now))
        else taker.drop(job.domain)
      if (started.length) taker.start(started)
      if (--this.open === 0) for (const ended of this.waiting.splice(0)) ended()
    }
    return {
      leaseMs: taker.leaseMs,
      has: (id) => ids.has(id),
      started: close,
      cancelled: () => close(new Set()),
    }
  }
}

/** The job as a claim of its first attempt would have read it. */
const claimedJob = (job: NewJob & { id: string }, now: number): DeliveryJob => ({
  id: job.id,
  kind: job.kind,
  domain: job.domain,
  payload: job.payload as DeliveryJob['payload'],
  status: 'running',
  attempts: 1,
  created: isoTime(now),
  finished: null,
  error: null,
  result: null,
})
