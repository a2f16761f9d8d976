/**
 * One webhook delivery and the policy around it (the webhook-deliveries worker runs it for each
 * claimed job): a JSON POST signed per Standard Webhooks with the channel's secret, a timeout, no
 * redirects followed; retries with exponential backoff and jitter for network errors, 408, 429 and
 * 5xx, up to MAX_ATTEMPTS, while other answers end it for good; private, loopback, link-local and
 * reserved targets refused unless WEBHOOK_ALLOW_PRIVATE lists them, checked on the resolved
 * addresses and the call pinned to the checked ones (../net/outbound.ts); and the slots of
 * ./delivery-slots.ts taken for the host (its name and its address both counted, per domain), or the
 * job given back to the queue untried when the host is too busy.
 */
import { createHmac } from 'node:crypto'
import { completeJob, failJob, releaseJob } from '~storage/queue'
import { isoTime } from '../clock'
import type { Deps } from '../deps'
import { type Cidr, parseCidr } from '../net/cidr'
import { checkedAddresses, fetchPinned, NotPublic, type Resolve } from '../net/outbound'
import { type Channel, channelSecret, channels } from './channels'
import type { DeliveryJob } from './deliveries'
import { type DeliverySlots, type Target, targetOf } from './delivery-slots'
import type { DeliveryWrites } from './delivery-writes'
import { SealedUnreadable } from '../secret-box'

export const MAX_ATTEMPTS = 8
const TIMEOUT_MS = 10_000
/** A job whose host had no slot free is due again this much later. */
const BUSY_RETRY_MS = 1000
const BASE_BACKOFF_MS = 15_000
const MAX_BACKOFF_MS = 3_600_000

/** Exponential from 15 s, capped at an hour, with jitter (half to all of it) so retries of many jobs spread out. */
export const backoffMs = (attempt: number) =>
  Math.min(BASE_BACKOFF_MS * 2 ** (attempt - 1), MAX_BACKOFF_MS) * (0.5 + Math.random() / 2)

/** Answers another attempt may help with: the receiver was busy or broken for a while. */
const retried = (status: number) => status >= 500 || status === 408 || status === 429

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

/**
 * What a process sends its deliveries within: its slots, how target names are resolved, its outcome
 * writes, and what to do when a domain's hold of a job ends, or a host's slot frees and no waiting
 * job takes it (`idle`): the worker may claim more.
 */
export interface Sending {
  slots: DeliverySlots
  resolve: Resolve
  writes: DeliveryWrites
  freed(domain: string, idle?: boolean): void
}

/** WEBHOOK_ALLOW_PRIVATE parsed, once per list (it was parsed for every delivery). */
let allowedOf: { list: readonly string[]; cidrs: Cidr[] } | undefined
function allowedCidrs(list: readonly string[]) {
  if (allowedOf?.list !== list) allowedOf = { list, cidrs: list.flatMap((c) => parseCidr(c) ?? []) }
  return allowedOf.cidrs
}

/** The addresses of the target, checked; or why the delivery cannot go there. */
async function resolved(deps: Deps, resolve: Resolve, target: string, url: URL): Promise<string[] | Outcome> {
  const result = { url: target, http_status: null, latency_ms: null }
  try {
    return await checkedAddresses(url, allowedCidrs(deps.config.webhookAllowPrivate), resolve)
  } catch (err) {
    if (err instanceof NotPublic)
      return { ok: false, retry: false, error: `${err.message}, outside WEBHOOK_ALLOW_PRIVATE`, result }
    return { ok: false, retry: true, error: `network: ${(err as Error).message}`, result }
  }
}

async function attempt(job: DeliveryJob, target: string, addresses: string[], secret: string): Promise<Outcome> {
  const url = new URL(target)
  const result: Outcome['result'] = { url: target, http_status: null, latency_ms: null }
  const started = performance.now()
  try {
    const body = JSON.stringify(job.payload.envelope)
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
    const why = res.status >= 300 && res.status < 400 ? ' (redirects are not followed)' : ''
    return { ok: false, retry: retried(res.status), error: `the receiver answered ${res.status}${why}`, result }
  } catch (err) {
    result.latency_ms = Math.round(performance.now() - started)
    return { ok: false, retry: true, error: `network: ${(err as Error).message}`, result }
  }
}

/**
 * Records the outcome through the claim, in the process's next batch of outcomes; a lost claim
 * belongs to the process that took the job over.
 */
async function record(deps: Deps, sending: Sending, job: DeliveryJob, o: Outcome): Promise<void> {
  const { clock, log } = deps
  const done = isoTime(clock.now())
  // given up after MAX_ATTEMPTS, or at once when another attempt cannot help
  const retryAt = o.retry && job.attempts < MAX_ATTEMPTS ? clock.now() + backoffMs(job.attempts) : null
  const written = await sending.writes.write(deps, () =>
    o.ok ? completeJob(job, done, o.result) : failJob(job, done, o.error ?? 'failed', retryAt, o.result),
  )
  if (!written) return log.warn('webhook claim lost', { job: job.id, attempt: job.attempts })
  if (!o.ok)
    log.warn('webhook delivery failed', { job: job.id, attempt: job.attempts, error: o.error, retry: retryAt !== null })
}

/**
 * What the deliveries of one batch (a claim, or the jobs of one write handed over) look up once for
 * all of them, as they start: a channel with its secret, and a target's checked addresses. Read per
 * delivery, the channel's two reads and the target's check took about a tenth of a process's CPU
 * at 4,000 deliveries a second (bench/webhooks.ts, throughput), where a batch is mostly one channel.
 */
export class BatchLookups {
  private readonly channels = new Map<string, Promise<{ channel?: Channel; secret: string | null | Error }>>()
  private readonly targets = new Map<string, Promise<string[] | Outcome>>()

  constructor(
    private readonly deps: Deps,
    private readonly resolve: Resolve,
  ) {}

  /** The channel (undefined when it is gone) and its secret in clear (an Error when it does not open). */
  channel(domain: string, id: string) {
    return memo(this.channels, `${domain}\n${id}`, async () => {
      const channel = (await this.deps.repo(channels.table).get(domain, id)) as Channel | undefined
      // a secret that does not open fails its deliveries for good; a store that fails them fails this batch only
      const unreadable = (err: unknown) => {
        if (err instanceof SealedUnreadable) return err
        throw err
      }
      const secret = channel ? await channelSecret(this.deps, domain, id).catch(unreadable) : null
      return { channel, secret }
    })
  }

  /** The addresses of the target, checked; or why the delivery cannot go there. */
  addresses(target: string, url: URL): Promise<string[] | Outcome> {
    return memo(this.targets, target, () => resolved(this.deps, this.resolve, target, url))
  }
}

function memo<T>(known: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  const value = known.get(key)
  if (value) return value
  const made = make()
  known.set(key, made)
  // a failure is the jobs' that asked meanwhile: the batch's later ones look again
  made.catch(() => known.get(key) === made && known.delete(key))
  return made
}

/** Delivers one claimed job (or gives it back to the queue when its host is too busy), with its batch's lookups. */
export async function deliver(deps: Deps, sending: Sending, job: DeliveryJob, lookups: BatchLookups): Promise<void> {
  const p = job.payload
  const { channel, secret } = await lookups.channel(job.domain, p.channel)
  const target = p.url || channel?.url || ''
  if (secret instanceof Error) {
    // sealed with another key, or changed in the database: nothing signed with it would verify
    const error = `the channel's signing secret cannot be read: ${secret.message}`
    return record(deps, sending, job, {
      ok: false,
      retry: false,
      error,
      result: { url: target, http_status: null, latency_ms: null },
    })
  }
  const gone = !channel || channel.type !== 'subscr' || !secret
  if (gone || !target) {
    const error = gone
      ? 'the channel is gone or no longer of type subscr'
      : 'neither the subscription nor the channel has a url'
    return record(deps, sending, job, {
      ok: false,
      retry: false,
      error,
      result: { url: target, http_status: null, latency_ms: null },
    })
  }
  const url = new URL(target)
  // resolved before a slot is taken: the host is known by its address as well as by its name
  const addresses = await lookups.addresses(target, url)
  if (!Array.isArray(addresses)) return record(deps, sending, job, addresses)
  const host: Target = targetOf(job.domain, url, addresses[0]!)
  const { slots } = sending
  if (!(await slots.take(host))) return void (await releaseJob(deps.db, job, deps.clock.now() + BUSY_RETRY_MS))
  const started = performance.now()
  let outcome: Outcome
  try {
    outcome = await attempt(job, target, addresses, secret)
  } finally {
    // the host's slot is free once it answered, not once the outcome is written (the job stays
    // held until then)
    if (!slots.give(host, performance.now() - started)) sending.freed(job.domain, true)
  }
  await record(deps, sending, job, outcome)
}
