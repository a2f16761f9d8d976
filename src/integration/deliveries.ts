/**
 * From events to the durable queue: the delivery jobs of an event, one per channel whose
 * subscriptions match it (one is enough, two do not double it). The job's id is derived from the
 * channel and the event, and the queue's unique id refuses a second insert, so the processes of a
 * cluster that all receive an event enqueue it once, durably (a KV marker would lose the event if
 * its setter died before the insert). The journal's changes are enqueued by the webhook-enqueue
 * worker from a cursor of its own, other events (ingested ones, a script's `emit`) by the
 * webhook-events worker as the bus brings them; src/workers/webhook-deliveries.ts sends the jobs,
 * by the policy of ./delivery-policy.ts. Here too: a channel's delivery log and replays.
 */
import { createHash } from 'node:crypto'
import * as v from 'valibot'
import type { TxStep } from '~storage/db'
import { enqueueClaimedJob, enqueueJob, type NewJob, retryFailedJob } from '~storage/queue'
import { isoTime } from '../clock'
import { type Ctx, integrationCtx } from '../context'
import type { Deps } from '../deps'
import { ApiError, notFound } from '../errors'
import type { PlatformEvent } from '../events/event'
import { matches } from '../events/match'
import { type JobOf, jobOfKind, jobsOfKind, newJob, queueKind } from '../queue-kinds'
import { FieldSet } from '../query/fields'
import { parseListParams } from '../query/list-query'
import { pick } from '../query/present'
import { JsonObject } from '../values'
import { changedCollection, mayRead } from '../ws/collections'
import { type Channel, channels } from './channels'
import { domainSubscriptions, type Subscription, termsOf } from './webhooks'

/** A delivery job: the channel, the subscription's url ('' for the channel's), the event's name, the envelope sent. */
export const WEBHOOK = queueKind(
  'webhook',
  v.object({ channel: v.string(), url: v.string(), event: v.string(), envelope: JsonObject }),
)
export type DeliveryJob = JobOf<v.InferOutput<typeof WEBHOOK.payload>>
/** The delivery log's fields (what `mask` may name), its default page and its most per page. */
const LOG_FIELDS = new FieldSet([
  'id',
  'event',
  'status',
  'attempts',
  'created',
  'finished',
  'url',
  'http_status',
  'latency_ms',
  'last_error',
])
const LOG_SHAPE = { fields: LOG_FIELDS, output: LOG_FIELDS, limits: { defaultLimit: 100, maxLimit: 1000 } }

/** What identifies an event across the processes that receive it: its journal seq, its id, else its content. */
function eventKey(e: PlatformEvent): string {
  if (e.seq !== undefined) return `seq:${e.seq}`
  if (e.id) return `id:${e.id}`
  return `sha:${createHash('sha256').update(JSON.stringify(e)).digest('hex')}`
}

/** A UUID (version 8, RFC 9562) that is a function of its name: the delivery's job id and webhook-id. */
function uuidFrom(name: string): string {
  const h = createHash('sha256').update(name).digest()
  h[6] = (h[6]! & 0x0f) | 0x80
  h[8] = (h[8]! & 0x3f) | 0x80
  const x = h.subarray(0, 16).toString('hex')
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`
}

type Subscriptions = (domain: string) => Promise<Subscription[]>

/** A domain's subscriptions read once, however many events of a batch ask (a worker's step). */
export function subscriptionsOnce(deps: Deps): Subscriptions {
  const read = new Map<string, Promise<Subscription[]>>()
  return (domain) => {
    let subs = read.get(domain)
    if (!subs) {
      subs = domainSubscriptions(deps, domain)
      read.set(domain, subs)
    }
    return subs
  }
}

/**
 * The delivery jobs of an event: one for every channel with a matching subscription (`subscriptions`
 * may answer a domain's from what it read for an earlier event of the same batch).
 */
export async function deliveryJobs(
  deps: Deps,
  event: PlatformEvent,
  subscriptions: Subscriptions = (domain) => domainSubscriptions(deps, domain),
): Promise<NewJob[]> {
  const subs = await subscriptions(event.domain)
  if (!subs.length) return []
  const byChannel = new Map<string, string>()
  for (const sub of subs)
    if (!byChannel.has(sub.channel) && matches(termsOf(sub), event)) byChannel.set(sub.channel, sub.url)
  for (const channel of byChannel.keys()) if (!(await channelMayRead(deps, event, channel))) byChannel.delete(channel)
  if (!byChannel.size) return []
  const domain = await deps.access.domainInfo(event.domain)
  const key = eventKey(event)
  const now = deps.clock.now()
  const jobs: NewJob[] = []
  for (const [channel, url] of byChannel) {
    const id = uuidFrom(`${channel}:${key}`)
    const { class: cls, event: name, time, objects, data } = event
    const envelope = { id, class: cls, event: name, domain: domain?.name ?? event.domain, time, objects, data }
    const payload = { channel, url, event: `${cls}.${name}`, envelope }
    jobs.push(newJob(WEBHOOK, { id, domain: event.domain, payload, runAt: now }))
  }
  return jobs
}

/**
 * A data change goes to a channel only while its roles may read the record, read now (as for a
 * websocket subscriber): the check at subscribe time does not outlive a role taken away.
 */
async function channelMayRead(deps: Deps, event: PlatformEvent, id: string): Promise<boolean> {
  if (event.class !== 'modelevents') return true
  const channel = (await deps.repo(channels.table).get(event.domain, id)) as Channel | undefined
  if (!channel) return false
  const ctx = integrationCtx(deps, event.domain, { ...channel, roles: channel.opts?.roles ?? [] }, 'webhook')
  return mayRead(ctx, changedCollection(event), String(event.data.id ?? ''))
}

/**
 * Enqueues the jobs in one write (with `also`, the rest of that write: a cursor's move). An id
 * already queued is left alone: another process enqueued the event first. Those this process's
 * deliveries worker takes now go in claimed, and are delivered once committed (./delivery-handoff.ts);
 * the worker is woken for the others.
 */
export async function queueDeliveries(deps: Deps, jobs: readonly NewJob[], also?: () => TxStep<void>): Promise<void> {
  const now = deps.clock.now()
  const created = isoTime(now)
  const handed = deps.deliveryHandoff.reserve(jobs, now)
  let claimed: Set<string>
  try {
    claimed = await deps.db.write(function* () {
      const inserted = new Set<string>()
      for (const job of jobs)
        if (job.id !== undefined && handed?.has(job.id)) {
          // the lease from the insert: a shared file's write lock may have been waited for
          const leaseUntil = deps.clock.now() + handed.leaseMs
          if (yield* enqueueClaimedJob({ ...job, id: job.id }, created, leaseUntil)) inserted.add(job.id)
        } else yield* enqueueJob(job, created, undefined, true)
      if (also) yield* also()
      return inserted
    })
  } catch (err) {
    handed?.cancelled()
    throw err
  }
  handed?.started(claimed)
  if (claimed.size < jobs.length) deps.signals.raise(`queue:${WEBHOOK.kind}`)
}

/**
 * Queues the deliveries of events about to be published, in one write, and marks them `queued`: an
 * ingest answers only once they are durable (the bus alone reaches the listeners of the moment).
 */
export async function queueBeforePublishing(deps: Deps, events: PlatformEvent[]): Promise<PlatformEvent[]> {
  const subscriptions = subscriptionsOnce(deps)
  const jobs: NewJob[] = []
  for (const event of events) jobs.push(...(await deliveryJobs(deps, event, subscriptions)))
  if (jobs.length) await queueDeliveries(deps, jobs)
  return events.map((event) => ({ ...event, queued: true }))
}

/** Enqueues the event for every channel with a matching subscription; how many channels. */
export async function enqueueEvent(deps: Deps, event: PlatformEvent): Promise<number> {
  const jobs = await deliveryJobs(deps, event)
  if (!jobs.length) return 0
  await queueDeliveries(deps, jobs)
  return jobs.length
}

/** One line of a channel's delivery log. */
function logLine(job: DeliveryJob) {
  const p = job.payload
  const r = (job.result ?? {}) as { http_status?: number; latency_ms?: number; url?: string }
  return {
    id: job.id,
    event: p.event,
    status: job.status,
    attempts: job.attempts,
    created: job.created,
    finished: job.finished,
    url: r.url ?? p.url,
    http_status: r.http_status ?? null,
    latency_ms: r.latency_ms ?? null,
    last_error: job.error,
  }
}

async function requireChannel(ctx: Ctx, id: string): Promise<void> {
  if (!(await ctx.deps.repo(channels.table).get(ctx.domain, id))) throw notFound(`integration_point ${id} not found`)
}

/** The channel's deliveries, newest first: a page of `limit` (100, at most 1000) after `offset`, cut by `mask`. */
export async function deliveryLog(ctx: Ctx, channel: string, params: Record<string, string | undefined> = {}) {
  const { query, mask } = parseListParams(params, LOG_SHAPE)
  await requireChannel(ctx, channel)
  const where = { domain: ctx.domain, payload: { channel } }
  const jobs = await jobsOfKind(ctx.deps.db, WEBHOOK, where, query.limit, query.offset)
  return jobs.map((job) => (mask ? pick(logLine(job), mask) : logLine(job)))
}

/** A failed delivery of the channel goes out again (attempts counted anew); answers its log line. */
export async function replayDelivery(ctx: Ctx, channel: string, id: string) {
  await requireChannel(ctx, channel)
  const { db, clock, signals } = ctx.deps
  const job = await jobOfKind(db, WEBHOOK, ctx.domain, id)
  if (!job || job.payload.channel !== channel) throw notFound(`delivery ${id} not found`)
  if (!(await retryFailedJob(db, WEBHOOK.kind, ctx.domain, id, clock.now())))
    throw new ApiError(409, `only a failed delivery can be replayed; this one is ${job.status}`)
  signals.raise(`queue:${WEBHOOK.kind}`)
  return logLine((await jobOfKind(db, WEBHOOK, ctx.domain, id)) ?? job)
}
