/**
 * Webhook subscriptions (/rest/v1/service/webhooks): a `subscr` channel subscribes to events of its
 * (working) domain for `expires` seconds. They live in the KV store, not the database: a record per
 * subscription whose TTL is its lifetime (so a lapsed one is gone on every process at once), a
 * per-domain index the delivery listener reads, and a longer-lived marker so a lapsed id answers
 * `[]` rather than 404, as the spec asks. Every key names the domain: channel ids are unique only
 * within a domain (a client may choose one), so a channel of another domain with the same id must
 * not reach these.
 */
import * as v from 'valibot'
import type { Ctx } from '../context'
import type { Deps } from '../deps'
import { ApiError, forbidden } from '../errors'
import { requireKnownClasses } from '../events/event-classes'
import { parseEventMasks, parseObjects, type SubscriptionTerms } from '../events/match'
import { readObjects, requireSomeRole } from '../ws/subscribed-objects'
import { objectBody } from '../values'
import { type Channel, channels } from './channels'
import {
  indexKey,
  knownKey,
  legacyOf,
  legacyRecordKey,
  MAX_EXPIRES_SEC,
  recordKey,
  type Subscription,
} from './webhook-keys'

export { forgetSubscriptions, MAX_EXPIRES_SEC, type Subscription } from './webhook-keys'

/** Subscriptions one channel may hold at once: the index is read for every event of the domain. */
export const MAX_PER_CHANNEL = 100
/** How long a lapsed or removed id is still known (answers `[]` instead of 404). */
const KNOWN_FOR_MS = 7 * 86_400_000

const notFound = () => new ApiError(404, 'token not found')

/** The subscribing channel: only a request authorized with a `subscr` channel's token subscribes. */
async function subscriber(ctx: Ctx): Promise<Channel> {
  if (ctx.actor.type !== 'integration')
    throw forbidden('webhook subscriptions take the token of an integration channel of type subscr')
  const channel = (await ctx.deps.repo(channels.table).get(ctx.domain, ctx.actor.id)) as Channel | undefined
  if (channel?.type !== 'subscr') throw forbidden('webhook subscriptions take a channel of type subscr')
  return channel
}

/** The objects an event must be bound to one of, as sent (and read back). */
export const SubscriptionObjects = v.pipe(
  v.array(v.union([v.string(), v.looseObject({ type: v.string() })]), 'must be an array'),
  v.description('the objects an event must be bound to one of, {type: "sipuser", sipuser: "101"}; empty: any'),
)

const EVENT_MASK = '"CLASS.EVENT" or "CLASS.*"'
const EXPIRES = `must be an integer number of seconds from 1 to ${MAX_EXPIRES_SEC}`
const URL_RULE = "must be an http(s) URL or ''"

/** What POST and PUT take: the terms and the lifetime; the masks and objects are read by the matcher's rules. */
export const SubscriptionBody = objectBody({
  events: v.pipe(
    v.array(v.string(`must be ${EVENT_MASK}`), `must be a non-empty array of ${EVENT_MASK}`),
    v.description('event masks "CLASS.EVENT" or "CLASS.*" (modelevents named one by one), at least one'),
  ),
  objects: v.optional(SubscriptionObjects),
  expires: v.pipe(
    v.number(EXPIRES),
    v.check((n) => Number.isSafeInteger(n) && n >= 1 && n <= MAX_EXPIRES_SEC, EXPIRES),
    v.description('seconds the subscription lasts unless renewed'),
  ),
  url: v.optional(
    v.pipe(
      v.string(URL_RULE),
      v.check(
        (url) => url.length <= 2048 && (url === '' || /^https?:$/.test(URL.parse(url)?.protocol ?? '')),
        URL_RULE,
      ),
      v.description("where the events go; '' (the default): the channel's url"),
    ),
  ),
})
export type SubscriptionBody = v.InferOutput<typeof SubscriptionBody>

type Terms = Pick<Subscription, 'events' | 'objects' | 'bound' | 'url'> & { expires: number }

/**
 * The terms of a checked body, kept as sent (the masks normalized) for the read-back: masks of
 * classes some source emits, collections the domain has and the channel may read
 * (src/ws/subscribed-objects.ts), else a 400 or 403 naming the field.
 */
async function readBody(ctx: Ctx, body: SubscriptionBody): Promise<Terms> {
  const { events, objects = [], expires, url = '' } = body
  // modelevents must be named one by one, as for websocket subscriptions
  const masks = parseEventMasks(events, { noWildcard: ['modelevents'] })
  requireKnownClasses(masks)
  const named = await readObjects(ctx, objects, masks)
  if (!named.collections.length) requireSomeRole(ctx, masks)
  return { events: masks.map((m) => `${m.class}.${m.event}`), objects, bound: named.objects, url, expires }
}

/** A live subscription of the domain by id, or null (unknown or lapsed). */
async function live(deps: Deps, domain: string, id: string): Promise<Subscription | null> {
  const text = await deps.kv.get(recordKey(domain, id))
  const sub = text ? (JSON.parse(text) as Subscription) : legacyOf(await deps.kv.get(legacyRecordKey(id)), domain)
  return sub && sub.until > deps.clock.now() ? sub : null
}

async function store(
  ctx: Ctx,
  channel: Channel,
  id: string,
  body: SubscriptionBody,
): Promise<{ id: string; msg: 'subscribed' }> {
  const { expires, ...terms } = await readBody(ctx, body)
  const { kv, clock } = ctx.deps
  const sub: Subscription = {
    id,
    domain: ctx.domain,
    channel: channel.id,
    ...terms,
    until: clock.now() + expires * 1000,
  }
  await kv.set(recordKey(ctx.domain, id), JSON.stringify(sub), expires * 1000)
  await kv.set(knownKey(ctx.domain, id), channel.id, KNOWN_FOR_MS)
  await dropLegacy(ctx, id)
  await kv.sadd(indexKey(ctx.domain), id)
  // the index outlives every subscription in it; each write renews it
  await kv.expire(indexKey(ctx.domain), MAX_EXPIRES_SEC * 1000)
  return { id, msg: 'subscribed' }
}

/** POST: a new subscription of the calling channel. */
export async function subscribe(ctx: Ctx, body: SubscriptionBody) {
  const channel = await subscriber(ctx)
  await roomFor(ctx, channel)
  return store(ctx, channel, crypto.randomUUID(), body)
}

/** 409 when the channel holds MAX_PER_CHANNEL live subscriptions besides `renewed` (a live one renewed takes none). */
async function roomFor(ctx: Ctx, channel: Channel, renewed?: string): Promise<void> {
  const held = (await domainSubscriptions(ctx.deps, ctx.domain)).filter((s) => s.channel === channel.id)
  if (renewed !== undefined && held.some((s) => s.id === renewed)) return
  if (held.length >= MAX_PER_CHANNEL)
    throw new ApiError(409, `a channel holds at most ${MAX_PER_CHANNEL} subscriptions`)
}

/** Whether the id was ever this channel's (live or lapsed); 404 "token not found" otherwise. */
async function requireKnown(ctx: Ctx, id: string): Promise<Channel> {
  const channel = await subscriber(ctx)
  if (id.length > 64) throw notFound()
  if ((await ctx.deps.kv.get(knownKey(ctx.domain, id))) === channel.id) return channel
  const legacy = legacyOf(await ctx.deps.kv.get(legacyRecordKey(id)), ctx.domain)
  if (legacy?.channel !== channel.id) throw notFound()
  // known from now on as a record of the new kind is: once it lapses or goes, GET answers []
  await ctx.deps.kv.set(knownKey(ctx.domain, id), channel.id, KNOWN_FOR_MS)
  return channel
}

/** The record of before the keys named their domain, once this domain's id has one of the new kind or none. */
async function dropLegacy(ctx: Ctx, id: string): Promise<void> {
  if (legacyOf(await ctx.deps.kv.get(legacyRecordKey(id)), ctx.domain)) await ctx.deps.kv.del(legacyRecordKey(id))
}

/** PUT: replaces the terms and renews the lifetime (a lapsed id of this channel comes back). */
export async function renew(ctx: Ctx, id: string, body: SubscriptionBody) {
  const channel = await requireKnown(ctx, id)
  await roomFor(ctx, channel, id) // a lapsed id that comes back counts as a new one
  return store(ctx, channel, id, body)
}

/** GET: `{objects, events, url}` (the channel's url when it has none of its own), or `[]` once it lapsed. */
export async function readSubscription(ctx: Ctx, id: string) {
  const channel = await requireKnown(ctx, id)
  const sub = await live(ctx.deps, ctx.domain, id)
  return sub ? { objects: sub.objects, events: sub.events, url: sub.url || channelUrl(channel) } : []
}

/** GET of the collection: the calling channel's live subscriptions, soonest to lapse first. */
export async function listSubscriptions(ctx: Ctx) {
  const channel = await subscriber(ctx)
  return (await domainSubscriptions(ctx.deps, ctx.domain))
    .filter((s) => s.channel === channel.id)
    .sort((a, b) => a.until - b.until || a.id.localeCompare(b.id))
    .map((s) => ({
      id: s.id,
      events: s.events,
      objects: s.objects,
      url: s.url || channelUrl(channel),
      until: new Date(s.until).toISOString(),
    }))
}

const channelUrl = (channel: Channel) => (typeof channel.url === 'string' ? channel.url : '')

/** DELETE: ends it at once on every process; the id is then unknown (404), as one never made. */
export async function unsubscribe(ctx: Ctx, id: string) {
  await requireKnown(ctx, id)
  await ctx.deps.kv.del(recordKey(ctx.domain, id))
  await ctx.deps.kv.del(knownKey(ctx.domain, id))
  await dropLegacy(ctx, id)
  await ctx.deps.kv.srem(indexKey(ctx.domain), id)
  return { id, msg: 'unsubscribed' }
}

/** The live subscriptions of a domain; lapsed ids are dropped from the index on the way. */
export async function domainSubscriptions(deps: Deps, domain: string): Promise<Subscription[]> {
  const ids = await deps.kv.smembers(indexKey(domain))
  if (!ids.length) return []
  const texts = await deps.kv.mget(ids.map((id) => recordKey(domain, id)))
  const missing = ids.filter((_, i) => texts[i] === null)
  const legacy = missing.length ? await deps.kv.mget(missing.map(legacyRecordKey)) : []
  const now = deps.clock.now()
  const subs: Subscription[] = []
  const gone: string[] = []
  const add = (id: string, sub: Subscription | null) => {
    if (sub && sub.until > now) subs.push(sub)
    else if (!sub) gone.push(id)
  }
  for (const [i, text] of texts.entries()) if (text !== null) add(ids[i]!, JSON.parse(text) as Subscription)
  for (const [i, id] of missing.entries()) add(id, legacyOf(legacy[i] ?? null, domain))
  if (gone.length) await deps.kv.srem(indexKey(domain), ...gone)
  return subs
}

/** The matcher's terms of a subscription (its body was checked when it was stored). */
export const termsOf = (sub: Subscription): SubscriptionTerms => ({
  domain: sub.domain,
  events: parseEventMasks(sub.events),
  objects: sub.bound ?? parseObjects(sub.objects),
})
