/**
 * Webhook deliveries of journal changes, from a cursor of their own: a step reads the journal after
 * it, makes the delivery jobs of each change (src/integration/deliveries.ts) and enqueues them in
 * the transaction that moves the cursor, so a crash before that commit makes the step again (the
 * job ids are derived from the channel and the journal seq: nothing doubles) and a change that
 * committed is never left without its deliveries. The bus listener, which got them from the event
 * pump before, lost the ones between publication and its own enqueueing when the process died
 * (the webhook-events worker takes the bus's other events).
 */
import type { NewJob } from '~storage/queue'
import { domainJournalBetween, journalCursor, journalDomainsAfter, moveCursor, parsedChange } from '~storage/journal'
import { dataChanged } from '../events/event'
import { deliveryJobs, queueDeliveries, subscriptionsOnce } from '../integration/deliveries'
import { committed, JournalFollower } from './journal-follower'
import { followsJournal, PUMP_CURSOR } from './journal-pump'
import type { Worker } from './runner'

const CURSOR = 'webhooks'
const BATCH = followsJournal.batch

/**
 * The worker (./journal-follower.ts), its cursor made where the event pump's stands when there is
 * none yet: what the pump published before had its deliveries enqueued by the bus listeners, what
 * comes after is this worker's. A pass that enqueues stores the cursor with its jobs.
 */
export function createWebhookEnqueue(): Worker {
  const follower = new JournalFollower(CURSOR, PUMP_CURSOR)
  const { cursor } = follower
  return {
    name: 'webhook-enqueue',
    ...followsJournal,
    async step({ deps }, signal) {
      const following = await follower.next(deps, BATCH, (after) => journalDomainsAfter(deps.db, after, BATCH))
      const { after, kept: records, rows: heads } = following
      // a pass that lost the cluster lease stops: another process goes on from the cursor
      if (heads.length === 0 || signal.aborted) return 0
      const last = heads.at(-1)!.seq
      const subscriptions = subscriptionsOnce(deps)
      // the records themselves only of domains with subscriptions (most have none), each domain's in order
      const jobs: NewJob[] = []
      for (const domain of new Set(heads.map((h) => h.domain))) {
        if ((await subscriptions(domain)).length === 0) continue
        const changes = records
          ? records.filter((r) => r.domain === domain).map(parsedChange)
          : await committed(deps, () => domainJournalBetween(deps.db, domain, after, last))
        for (const change of changes) jobs.push(...(await deliveryJobs(deps, dataChanged(change), subscriptions)))
      }
      if (jobs.length === 0) await cursor.moved(deps.db, last)
      else {
        await queueDeliveries(deps, jobs, () => moveCursor(CURSOR, last))
        cursor.committedWith(last)
      }
      following.handled()
      return heads.length
    },
    drain: ({ deps }) => cursor.flush(deps.db),
    leaseTaken: () => follower.taken(),
    wokenElsewhere: () => follower.elsewhere(),
  }
}

/** Makes the cursor at start where the event pump's stands when there is none yet (see above). */
export const startWebhookCursor = (db: Parameters<typeof journalCursor>[0]) => journalCursor(db, CURSOR, PUMP_CURSOR)
