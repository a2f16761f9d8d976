/**
 * Sends queued webhook deliveries (src/integration/deliveries.ts): a JSON POST signed per Standard
 * Webhooks with the channel's secret, a timeout, no redirects followed, retries with exponential
 * backoff and jitter for network errors, 408, 429 and 5xx (other answers end it for good), and
 * private, loopback, link-local and reserved targets refused unless WEBHOOK_ALLOW_PRIVATE lists them,
 * checked on the resolved addresses and the call pinned to the checked ones (../http/outbound.ts).
 * Every process runs it, each job claimed by one. Deliveries run in the background of the step, at
 * most PER_HOST at once to one host; a few more wait here for its next free slot and the rest go
 * back to the queue untried, so one slow receiver cannot take every slot.
 */
import { createHmac } from 'node:crypto'
import { claimJobs, completeJob, failJob, type Job, LostClaim, releaseJob } from '~storage/queue'
import { isoTime } from '../clock'
import type { Deps } from '../deps'
import { parseCidr } from '../http/cidr'
import { checkedAddresses, fetchPinned, NotPublic } from '../http/outbound'
import { type Channel, channelSecret, channels } from '../integration/channels'
import { type DeliveryPayload, WEBHOOK } from '../integration/deliveries'
import type { Worker } from './runner'

export const MAX_ATTEMPTS = 8
export const PER_HOST = 4
const MAX_IN_FLIGHT = 64
const TIMEOUT_MS = 10_000
const LEASE_MS = 60_000
const BUSY_RETRY_MS = 1000
/**
 * Claimed jobs that may wait here for a busy host's slot (beyond them a job goes back to the queue
 * for BUSY_RETRY_MS). Waiting here instead of re-queueing keeps a backlog to one host flowing at its
 * PER_HOST pace, while the bound leaves the rest of MAX_IN_FLIGHT to other hosts: as many as the
 * host takes in WAIT_BUDGET_MS at its pace (a moving average of its deliveries' durations), at
 * least WAITING_MIN and at most WAITING_MAX. A slow host holds WAITING_MIN, whose wait fits in the
 * lease (WAITING_MIN / PER_HOST rounds of at most TIMEOUT_MS each); a fast one takes what a backlog
 * needs: with 16 for every host, 5,000 journal changes for one local receiver were claimed and
 * given back until a second later, over and over, and went out at 250 a second.
 */
const WAITING_MIN = 16
const WAITING_MAX = MAX_IN_FLIGHT - PER_HOST
const WAIT_BUDGET_MS = 250
/** The pace of a host not yet measured. */
const FIRST_PACE_MS = 100
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

async function attempt(deps: Deps, job: Job, target: string, secret: string): Promise<Outcome> {
  const p = job.payload as unknown as DeliveryPayload
  const result: Outcome['result'] = { url: target, http_status: null, latency_ms: null }
  const url = new URL(target)
  const started = performance.now()
  try {
    const allowed = deps.config.webhookAllowPrivate.flatMap((c) => parseCidr(c) ?? [])
    const addresses = await checkedAddresses(url, allowed)
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
    if (err instanceof NotPublic)
      return { ok: false, retry: false, error: `${err.message}, outside WEBHOOK_ALLOW_PRIVATE`, result }
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

/** This process's deliveries in flight, how many go to each host, and the jobs waiting for a host's slot. */
interface State {
  inFlight: Set<Promise<void>>
  perHost: Map<string, number>
  waiting: Map<string, (() => void)[]>
  /** How long a delivery to each host lasts, a moving average in ms. */
  pace: Map<string, number>
}
const states = new WeakMap<Deps, State>()
const stateOf = (deps: Deps): State => {
  let s = states.get(deps)
  if (!s) states.set(deps, (s = { inFlight: new Set(), perHost: new Map(), waiting: new Map(), pace: new Map() }))
  return s
}

/** How many claimed jobs may wait here for the host: what it takes in WAIT_BUDGET_MS at its pace. */
function waitingFor(s: State, host: string): number {
  const fits = Math.floor((PER_HOST * WAIT_BUDGET_MS) / (s.pace.get(host) ?? FIRST_PACE_MS))
  return Math.max(WAITING_MIN, Math.min(WAITING_MAX, fits))
}

function measured(s: State, host: string, ms: number): void {
  if (s.pace.size >= 10_000 && !s.pace.has(host)) s.pace.clear()
  const pace = s.pace.get(host)
  s.pace.set(host, pace === undefined ? ms : pace * 0.8 + ms * 0.2)
}

/** Takes one of the host's PER_HOST slots, waiting for one if the wait list has room; false when it has none. */
async function slot(s: State, host: string): Promise<boolean> {
  const busy = s.perHost.get(host) ?? 0
  if (busy < PER_HOST) {
    s.perHost.set(host, busy + 1)
    return true
  }
  const queue = s.waiting.get(host) ?? []
  if (queue.length >= waitingFor(s, host)) return false
  s.waiting.set(host, queue)
  await new Promise<void>((resolve) => queue.push(resolve))
  return true // the slot was handed over by `free`
}

/** Gives the slot to the next waiting job, or back to the host (then the worker may claim more). */
function free(deps: Deps, s: State, host: string): void {
  const next = s.waiting.get(host)?.shift()
  if (next) return next()
  s.waiting.delete(host)
  const left = (s.perHost.get(host) ?? 1) - 1
  if (left) s.perHost.set(host, left)
  else s.perHost.delete(host)
  deps.signals.raise(`queue:${WEBHOOK}`) // a slot is free
}

/** Delivers one claimed job (or gives it back to the queue when its host is too busy). */
async function handle(deps: Deps, s: State, job: Job): Promise<void> {
  const p = job.payload as unknown as DeliveryPayload
  const channel = (await deps.repo(channels.table).get(job.domain, p.channel)) as Channel | undefined
  const secret = channel ? await channelSecret(deps, job.domain, p.channel) : null
  const target = p.url || channel?.url || ''
  const gone = !channel || channel.type !== 'subscr' || !secret
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
  const host = new URL(target).host
  if (!(await slot(s, host))) return void (await releaseJob(deps.db, job, deps.clock.now() + BUSY_RETRY_MS))
  const started = performance.now()
  try {
    await record(deps, job, await attempt(deps, job, target, secret))
  } finally {
    measured(s, host, performance.now() - started)
    free(deps, s, host)
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
  async step(deps) {
    const s = stateOf(deps)
    const room = Math.min(MAX_IN_FLIGHT - s.inFlight.size, 32)
    if (room <= 0) return 0
    const now = deps.clock.now()
    const batch = await claimJobs(deps.db, WEBHOOK, now, now + LEASE_MS, room)
    for (const job of batch) {
      const run: Promise<void> = handle(deps, s, job)
        .catch((err: unknown) => deps.log.error('webhook outcome not recorded', { job: job.id, error: String(err) }))
        .then(() => void s.inFlight.delete(run))
      s.inFlight.add(run)
    }
    // one batch per pass: claiming again at once while a host is full would only bounce jobs; the
    // next pass comes when a host's slot frees (or on the schedule)
    return 0
  },
  drain: deliveriesSettled,
}
