/**
 * Every background worker of the service; src/service.ts runs them with one WorkerRunner. Workers
 * that keep state between passes are made here, once per service, by their factories.
 */
import type { Resolve } from '../net/outbound'
import { dbCheckpoint, dbPinnedRead } from './db-checkpoint'
import { eventIngest } from './event-ingest'
import { housekeeping } from './housekeeping'
import { createJournalPump } from './journal-pump'
import { journalRetention } from './journal-retention'
import { layerOrders } from './layer-orders'
import { createMailOutboxWorker } from './mail-outbox'
import { modelExpiry } from './model-expiry'
import { nodeHeartbeat } from './node-heartbeat'
import type { Worker } from './runner'
import { svcTasks } from './svc-tasks'
import { createWebhookDeliveriesWorker } from './webhook-deliveries'
import { createWebhookEnqueue } from './webhook-enqueue'
import { createWebhookEventsWorker } from './webhook-events'
import { wsSessions } from './ws-sessions'

export interface WorkerOptions {
  /** How webhook targets' names are resolved (tests answer for names of their own). */
  resolveTargets?: Resolve
}

export function createWorkers(options: WorkerOptions = {}): Worker[] {
  return [
    createJournalPump(),
    eventIngest,
    createMailOutboxWorker(),
    modelExpiry,
    layerOrders,
    housekeeping,
    nodeHeartbeat,
    wsSessions,
    svcTasks,
    createWebhookEventsWorker(),
    createWebhookEnqueue(),
    createWebhookDeliveriesWorker({ resolve: options.resolveTargets }),
    journalRetention,
    dbCheckpoint,
    dbPinnedRead,
  ]
}
