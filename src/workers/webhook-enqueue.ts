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
import { domainJournalBetween, journalCursor, journalDomainsAfter, moveCursor } from '~storage/journal'
import { dataChanged } from '../events/event'
import { deliveryJobs, enqueueDeliveries, subscriptionsOnce, WEBHOOK } from '../integration/deliveries'
import { committed } from './journal-pump'
import type { Worker } from './runner'

const CURSOR = 'webhooks'
const BATCH = 500

export const webhookEnqueue: Worker = {
  name: 'webhook-enqueue',
  every: 500,
  wakeOn: ['journal'],
  lease: 'cluster',
  holdLease: true,
  batch: BATCH,
  async step({ deps }, signal) {
    const cursor = await startWebhookCursor(deps.db)
    const heads = await committed(deps, () => journalDomainsAfter(deps.db, cursor, BATCH))
    // a pass that lost the cluster lease stops: another process goes on from the cursor
    if (heads.length === 0 || signal.aborted) return 0
    const last = heads.at(-1)!.seq
    const subscriptions = subscriptionsOnce(deps)
    // the records themselves only of domains with subscriptions (most have none), each domain's in order
    const jobs: NewJob[] = []
    for (const domain of new Set(heads.map((h) => h.domain))) {
      if ((await subscriptions(domain)).length === 0) continue
      const changes = await committed(deps, () => domainJournalBetween(deps.db, domain, cursor, last))
      for (const change of changes) jobs.push(...(await deliveryJobs(deps, dataChanged(change), subscriptions)))
    }
    const now = deps.clock.now()
    await deps.db.write(function* () {
      yield* enqueueDeliveries(jobs, now)
      yield* moveCursor(CURSOR, last)
    })
    if (jobs.length) deps.signals.raise(`queue:${WEBHOOK.kind}`)
    return heads.length
  },
}

/**
 * The cursor, made where the event pump's stands when there is none yet: what the pump published
 * before had its deliveries enqueued by the bus listeners, what comes after is this worker's.
 */
export const startWebhookCursor = (db: Parameters<typeof journalCursor>[0]) => journalCursor(db, CURSOR, 'events')
