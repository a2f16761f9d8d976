/**
 * Webhook deliveries of the bus's events that are neither the journal's (webhook-enqueue's, from its
 * cursor) nor queued already (`queued`: an ingest queues its own before it answers): a script's `emit`. Its feed listens on the bus in
 * every process, keeps what comes in order and raises `bus`; a step enqueues up to BATCH of them in
 * one transaction (each domain's subscriptions read once), so a channel receives a domain's events
 * in the order they came. Every process enqueues what it received and the job ids dedupe them
 * (src/integration/deliveries.ts). Events not yet enqueued are enqueued by `drain` at a stop; a
 * process that dies loses them, as pub/sub does for a process that was not listening.
 */
import type { NewJob } from '~storage/queue'
import type { PlatformEvent } from '../events/event'
import type { Deps } from '../deps'
import { deliveryJobs, queueDeliveries, subscriptionsOnce } from '../integration/deliveries'
import type { Worker } from './runner'

const BATCH = 256

export function createWebhookEventsWorker(): Worker {
  /** Received and not yet enqueued, oldest first. */
  const received: PlatformEvent[] = []

  async function enqueue(deps: Deps): Promise<number> {
    const events = received.splice(0, BATCH)
    if (!events.length) return 0
    try {
      const subscriptions = subscriptionsOnce(deps)
      const jobs: NewJob[] = []
      for (const event of events) jobs.push(...(await deliveryJobs(deps, event, subscriptions)))
      if (jobs.length) await queueDeliveries(deps, jobs)
    } catch (err) {
      // as the listener before it: what failed is dropped, the events after it go on
      deps.log.error('webhook enqueue failed', { events: events.length, error: String(err) })
    }
    return events.length
  }

  return {
    name: 'webhook-events',
    every: 1000, // a wake-up lost costs a second
    wakeOn: ['bus'],
    lease: 'none', // each process enqueues what it received; the job ids make it once
    feed({ deps }) {
      return deps.bus.on((event) => {
        if (event.seq !== undefined || event.queued) return
        received.push(event)
        deps.signals.raise('bus')
      })
    },
    step: ({ deps }) => enqueue(deps),
    async drain({ deps }) {
      while (received.length) await enqueue(deps)
    },
  }
}
