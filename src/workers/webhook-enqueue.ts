/**
 * Webhook deliveries of journal changes, from a cursor of their own: a step reads the journal after
 * it, makes the delivery jobs of each change (src/integration/deliveries.ts) and enqueues them in
 * the transaction that moves the cursor, so a crash before that commit makes the step again (the
 * job ids are derived from the channel and the journal seq: nothing doubles) and a change that
 * committed is never left without its deliveries. The bus listener, which got them from the event
 * pump before, lost the ones between publication and its own enqueueing when the process died.
 */
import type { NewJob } from '~storage/queue'
import { journalCursor, moveCursor } from '~storage/journal'
import { dataChanged } from '../events/event'
import { deliveryJobs, enqueueDeliveries, WEBHOOK } from '../integration/deliveries'
import { domainSubscriptions, type Subscription } from '../integration/webhooks'
import { committedAfter } from './journal-pump'
import type { Worker } from './runner'

const CURSOR = 'webhooks'
const BATCH = 500

export const webhookEnqueue: Worker = {
  name: 'webhook-enqueue',
  every: 500,
  wakeOn: ['journal'],
  lease: 'cluster',
  async step(deps, signal) {
    const changes = await committedAfter(deps, await startWebhookCursor(deps.db), BATCH)
    // a pass that lost the cluster lease stops: another process goes on from the cursor
    if (changes.length === 0 || signal.aborted) return 0
    // a domain's subscriptions are read once a step
    const read = new Map<string, Promise<Subscription[]>>()
    const subscriptions = (domain: string) => {
      let subs = read.get(domain)
      if (!subs) read.set(domain, (subs = domainSubscriptions(deps, domain)))
      return subs
    }
    const jobs: NewJob[] = []
    for (const change of changes) jobs.push(...(await deliveryJobs(deps, dataChanged(change), subscriptions)))
    const last = changes.at(-1)!.seq
    const now = deps.clock.now()
    await deps.db.write(function* () {
      yield* enqueueDeliveries(jobs, now)
      yield* moveCursor(CURSOR, last)
    })
    if (jobs.length) deps.signals.raise(`queue:${WEBHOOK}`)
    return changes.length
  },
}

/**
 * The cursor, made where the event pump's stands when there is none yet: what the pump published
 * before had its deliveries enqueued by the bus listeners, what comes after is this worker's.
 */
export const startWebhookCursor = (db: Parameters<typeof journalCursor>[0]) => journalCursor(db, CURSOR, 'events')
