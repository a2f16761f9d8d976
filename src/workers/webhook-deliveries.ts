/**
 * Sends queued webhook deliveries (src/integration/deliveries.ts) by the policy of
 * ../integration/delivery-policy.ts, which decides each attempt, its outcome and its retries. Every
 * process runs it, each job claimed by one, a share per domain (round robin over the domains with
 * due jobs, ~storage/queue-fair), or handed over as this process enqueues it while there is room
 * and no backlog (../integration/delivery-handoff.ts). Deliveries run in the background of the
 * step, within this worker's slots (../integration/delivery-slots.ts): a few to one host at once, a
 * few more waiting for a slot and the rest back to the queue untried, and a bounded number held per
 * domain, so one tenant's slow receivers cannot take every slot.
 */
import { BatchLookups, deliver, type Sending } from '../integration/delivery-policy'
import { DeliverySlots, MAX_HELD } from '../integration/delivery-slots'
import { type DeliveryJob, WEBHOOK } from '../integration/deliveries'
import type { Deps } from '../deps'
import { DeliveryWrites } from '../integration/delivery-writes'
import { type Resolve, resolveAll } from '../net/outbound'
import { claimShares } from '../queue-kinds'
import type { Worker } from './runner'

/** Jobs one claim takes at most. */
const CLAIM_MAX = 32
/**
 * A hold that ends wakes the worker once its domain has room for a whole claim (not one claim a
 * delivery): with a quarter of one, a backlog to one receiver was claimed 7 jobs at a time (2,760
 * claims for 20,000 deliveries in bench/webhooks.ts, against 980), each a read, a write and its
 * batch's lookups, while the jobs waiting for its slots kept it busy. A host slot left idle (no job
 * of the domain waits for it) wakes it at a quarter: a domain whose slow receivers hold more than
 * DOMAIN_MAX - CLAIM_MAX jobs never has room for a whole claim, and its fast ones would wait.
 */
const REFILL = CLAIM_MAX
const REFILL_IDLE = CLAIM_MAX / 4
const LEASE_MS = 60_000

/**
 * The worker, with this process's deliveries in flight, their slots and where the round robin of
 * claims stands. `resolve`: how target names are resolved (node's resolver unless a test answers
 * for names of its own).
 */
export function createWebhookDeliveriesWorker(options: { resolve?: Resolve } = {}): Worker {
  const inFlight = new Set<Promise<void>>()
  let after = ''
  /**
   * The last pass may have left due jobs unclaimed (it took all it had room for, or a domain was
   * full): a freed slot or hold wakes the worker then. Otherwise new jobs it was not handed wake it
   * by their own signal, and a wake-up per delivery made a claim's read per delivery for nothing.
   * Until a pass has found the queue's due jobs all taken, none is handed over: those queued go first.
   */
  let backlog = true
  let wake = () => {}
  const sending: Sending = {
    slots: new DeliverySlots(),
    resolve: options.resolve ?? resolveAll,
    writes: new DeliveryWrites(),
    freed: (domain, idle) => {
      if (backlog && slots.room(domain) >= (idle ? REFILL_IDLE : REFILL)) wake()
    },
  }
  const { slots } = sending
  /** Delivers the jobs of a batch this process holds (claimed, or handed over), then lets each go. */
  const begin = (deps: Deps, jobs: readonly DeliveryJob[]) => {
    const lookups = new BatchLookups(deps, sending.resolve)
    for (const job of jobs) send(deps, job, lookups)
  }
  const send = (deps: Deps, job: DeliveryJob, lookups: BatchLookups) => {
    const run: Promise<void> = deliver(deps, sending, job, lookups)
      .catch((err: unknown) => deps.log.error('webhook outcome not recorded', { job: job.id, error: String(err) }))
      .then(() => {
        slots.drop(job.domain)
        inFlight.delete(run)
        sending.freed(job.domain)
      })
    inFlight.add(run)
  }
  return {
    name: 'webhook-deliveries',
    every: 1000,
    wakeOn: [`queue:${WEBHOOK.kind}`],
    lease: 'none',
    async step({ deps }) {
      wake = () => deps.signals.raise(`queue:${WEBHOOK.kind}`)
      const room = Math.min(MAX_HELD - slots.heldInAll, CLAIM_MAX)
      backlog = true
      if (room <= 0) return 0
      const now = deps.clock.now()
      // the room each domain was given (deliveries that end during the claim make more)
      const given = new Map<string, number>()
      const roomOf = (d: string) => {
        const room = slots.room(d)
        given.set(d, room)
        return room
      }
      const shares = { after, room: roomOf, full: slots.full() }
      const claimed = await claimShares(deps, WEBHOOK, now, now + LEASE_MS, room, shares)
      after = claimed.after
      // more may be due when the claim, or a domain's share of it, was cut by room
      const taken = new Map<string, number>()
      for (const job of claimed.jobs) taken.set(job.domain, (taken.get(job.domain) ?? 0) + 1)
      backlog =
        claimed.jobs.length >= room ||
        shares.full.length > 0 ||
        [...taken].some(([domain, n]) => n >= (given.get(domain) ?? 0))
      for (const job of claimed.jobs) slots.hold(job.domain)
      begin(deps, claimed.jobs)
      // one batch per pass: claiming again at once while a host is full would only bounce jobs; the
      // next pass comes when a host's slot frees (or on the schedule)
      return 0
    },
    feed: ({ deps, deliveries }) =>
      deliveries.attach({
        leaseMs: LEASE_MS,
        hold(domain) {
          if (backlog || slots.heldInAll >= MAX_HELD || slots.room(domain) <= 0) return false
          slots.hold(domain)
          return true
        },
        drop(domain) {
          slots.drop(domain)
          sending.freed(domain)
        },
        start: (jobs) => begin(deps, jobs),
      }),
    // this process's deliveries in flight, and those handed over whose write is still running, have finished (tests, shutdown)
    async drain({ deliveries }) {
      for (;;) {
        await deliveries.settled()
        if (!inFlight.size) return
        await Promise.allSettled([...inFlight])
      }
    },
  }
}
