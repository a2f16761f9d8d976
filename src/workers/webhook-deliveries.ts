/**
 * Sends queued webhook deliveries (src/integration/deliveries.ts): a JSON POST signed per Standard
 * Webhooks with the channel's secret, a timeout, no redirects followed, retries with exponential
 * backoff and jitter for network errors, 408, 429 and 5xx (other answers end it for good), and
 * private, loopback, link-local and reserved targets refused unless WEBHOOK_ALLOW_PRIVATE lists them,
 * checked on the resolved addresses and the call pinned to the checked ones (../net/outbound.ts).
 * Every process runs it, each job claimed by one, a share per domain (round robin over the domains
 * with due jobs, ~storage/queue-fair). Deliveries run in the background of the step, within the
 * slots of ../integration/delivery-slots.ts: a few to one host at once (its name and its address
 * both counted, per domain), a few more waiting here for a slot and the rest back to the queue
 * untried, and a bounded number held per domain, so one tenant's slow receivers cannot take every slot.
 */
import { createHmac } from 'node:crypto'
import { completeJob, failJob, type Job, LostClaim, releaseJob } from '~storage/queue'
import { claimFairly } from '~storage/queue-fair'
import { isoTime } from '../clock'
import type { Deps } from '../deps'
import { parseCidr } from '../net/cidr'
import { checkedAddresses, fetchPinned, NotPublic, type Resolve, resolveAll } from '../net/outbound'
import { DeliverySlots, MAX_HELD, type Target, targetOf } from '../integration/delivery-slots'
import { type Channel, channelSecret, channels } from '../integration/channels'
import { type DeliveryPayload, WEBHOOK } from '../integration/deliveries'
import type { Worker } from './runner'

export const MAX_ATTEMPTS = 8
export { PER_HOST } from '../integration/delivery-slots'
/** Jobs one claim takes at most. */
const CLAIM_MAX = 32
const TIMEOUT_MS = 10_000
const LEASE_MS = 60_000
const BUSY_RETRY_MS = 1000
const BASE_BACKOFF_MS = 15_000
const MAX_BACKOFF_MS = 3_600_000

/** Exponential from 15 s, capped at an hour, with jitter (half to all of it) so retries of many jobs spread out. */
export const backoffMs = (attempt: number) =>
  Math.min(BASE_BACKOFF_MS * 2 ** (attempt - 1), MAX_BACKOFF_MS) * (0.5 + Math.random() / 2)

/** The Standard Webhooks signature: HMAC-SHA256 of `id.timestamp.body` with the secret's key (base64 after `whsec_`). */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`
}

/** An attempt's outcome: delivered, or an error and whether another attempt may help. */
interface Outcome {
  ok: boolean
  retry: boolean
  error?: string
  result: { url: string; http_status: number | null; latency_ms: number | null }
}

/** The addresses of the target, checked; or why the delivery cannot go there. */
async function resolved(deps: Deps, s: State, target: string, url: URL): Promise<string[] | Outcome> {
  const result = { url: target, http_status: null, latency_ms: null }
  try {
    const allowed = deps.config.webhookAllowPrivate.flatMap((c) => parseCidr(c) ?? [])
    return await checkedAddresses(url, allowed, s.resolve)
  } catch (err) {
    if (err instanceof NotPublic)
      return { ok: false, retry: false, error: `${err.message}, outside WEBHOOK_ALLOW_PRIVATE`, result }
    return { ok: false, retry: true, error: `network: ${(err as Error).message}`, result }
  }
}

async function attempt(job: Job, target: string, addresses: string[], secret: string): Promise<Outcome> {
  const p = job.payload as unknown as DeliveryPayload
  const url = new URL(target)
  const result: Outcome['result'] = { url: target, http_status: null, latency_ms: null }
  const started = performance.now()
  try {
    const body = JSON.stringify(p.envelope)
    // real time, not the service clock: receivers compare it with their own clocks
    const timestamp = Math.floor(Date.now() / 1000)
    const res = await fetchPinned(url, addresses, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'platform-webhooks',
        'webhook-id': job.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signature(secret, job.id, timestamp, body),
      },
      body,
    })
    await res.body?.cancel()
    result.http_status = res.status
    result.latency_ms = Math.round(performance.now() - started)
    if (res.status >= 200 && res.status < 300) return { ok: true, retry: false, result }
    const retry = res.status >= 500 || res.status === 408 || res.status === 429
    const why = res.status >= 300 && res.status < 400 ? ' (redirects are not followed)' : ''
    return { ok: false, retry, error: `the receiver answered ${res.status}${why}`, result }
  } catch (err) {
    result.latency_ms = Math.round(performance.now() - started)
    return { ok: false, retry: true, error: `network: ${(err as Error).message}`, result }
  }
}

/** Records the outcome through the claim; a lost claim belongs to the process that took the job over. */
async function record(deps: Deps, job: Job, o: Outcome): Promise<void> {
  const { db, clock, log } = deps
  const done = isoTime(clock.now())
  const retryAt = o.retry && job.attempts < MAX_ATTEMPTS ? clock.now() + backoffMs(job.attempts) : null
  try {
    if (o.ok) await db.write(() => completeJob(job, done, o.result))
    else await db.write(() => failJob(job, done, o.error ?? 'failed', retryAt, o.result))
  } catch (err) {
    if (err instanceof LostClaim) return log.warn('webhook claim lost', { job: job.id, attempt: job.attempts })
    throw err
  }
  if (!o.ok)
    log.warn('webhook delivery failed', { job: job.id, attempt: job.attempts, error: o.error, retry: retryAt !== null })
}

/** This process's deliveries in flight, their slots, and where the round robin of claims stands. */
interface State {
  inFlight: Set<Promise<void>>
  slots: DeliverySlots
  after: string
  /** How target names are resolved: node's resolver unless a test answers for names of its own. */
  resolve: Resolve
}
const states = new WeakMap<Deps, State>()
const stateOf = (deps: Deps): State => {
  let s = states.get(deps)
  if (!s) {
    s = { inFlight: new Set(), slots: new DeliverySlots(), after: '', resolve: resolveAll }
    states.set(deps, s)
  }
  return s
}

/** Tests: this service's deliveries resolve target names with `resolve`. */
export const resolveTargetsWith = (deps: Deps, resolve: Resolve) => {
  stateOf(deps).resolve = resolve
}

/** Delivers one claimed job (or gives it back to the queue when its host is too busy). */
async function handle(deps: Deps, s: State, job: Job): Promise<void> {
  const p = job.payload as unknown as DeliveryPayload
  const channel = (await deps.repo(channels.table).get(job.domain, p.channel)) as Channel | undefined
  const secret = channel ? await channelSecret(deps, job.domain, p.channel) : null
  const target = p.url || channel?.url || ''
  const gone = channel?.type !== 'subscr' || !secret
  if (gone || !target) {
    const error = gone
      ? 'the channel is gone or no longer of type subscr'
      : 'neither the subscription nor the channel has a url'
    return record(deps, job, {
      ok: false,
      retry: false,
      error,
      result: { url: target, http_status: null, latency_ms: null },
    })
  }
  const url = new URL(target)
  // resolved before a slot is taken: the host is known by its address as well as by its name
  const addresses = await resolved(deps, s, target, url)
  if (!Array.isArray(addresses)) return record(deps, job, addresses)
  const host: Target = targetOf(job.domain, url, addresses[0]!)
  if (!(await s.slots.take(host))) return void (await releaseJob(deps.db, job, deps.clock.now() + BUSY_RETRY_MS))
  const started = performance.now()
  try {
    await record(deps, job, await attempt(job, target, addresses, secret))
  } finally {
    // a slot no waiting job took: the worker may claim more
    if (!s.slots.give(host, performance.now() - started)) deps.signals.raise(`queue:${WEBHOOK}`)
  }
}

/** Resolves when this process's deliveries in flight have finished (tests, shutdown). */
export async function deliveriesSettled(deps: Deps): Promise<void> {
  const s = stateOf(deps)
  while (s.inFlight.size) await Promise.allSettled([...s.inFlight])
}

export const webhookDeliveries: Worker = {
  name: 'webhook-deliveries',
  every: 1000,
  wakeOn: [`queue:${WEBHOOK}`],
  lease: 'none',
  async step({ deps }) {
    const s = stateOf(deps)
    const { slots } = s
    const room = Math.min(MAX_HELD - slots.heldInAll, CLAIM_MAX)
    if (room <= 0) return 0
    const now = deps.clock.now()
    const shares = { after: s.after, room: (d: string) => slots.room(d), full: slots.full() }
    const claimed = await claimFairly(deps.db, WEBHOOK, now, now + LEASE_MS, room, shares)
    s.after = claimed.after
    for (const job of claimed.jobs) {
      slots.hold(job.domain)
      const run: Promise<void> = handle(deps, s, job)
        .catch((err: unknown) => deps.log.error('webhook outcome not recorded', { job: job.id, error: String(err) }))
        .then(() => {
          slots.drop(job.domain)
          s.inFlight.delete(run)
        })
      s.inFlight.add(run)
    }
    // one batch per pass: claiming again at once while a host is full would only bounce jobs; the
    // next pass comes when a host's slot frees (or on the schedule)
    return 0
  },
  drain: ({ deps }) => deliveriesSettled(deps),
}
