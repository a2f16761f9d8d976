/**
 * The `subscribe` capability's terms: reading a subscribe frame into the matcher's terms
 * (src/events/match.ts), and the state of one subscription on one socket. A subscription lives
 * `expires` seconds from its last (re)subscribe; `expires: 0` ends it.
 */
import type { Doc } from '~storage/doc'
import type { FilterNode } from '~storage/query'
import type { Ctx } from '../context'
import { badRequest } from '../errors'
import type { PlatformEvent } from '../events/event'
import { parseEventMasks, type SubscriptionTerms } from '../events/match'
import { FieldSet, isValidPath } from '../query/fields'
import { parseFilter, parseMask } from '../query/list-query'
import { resolveClasspath } from './collections'
import type { PushTarget } from './push-target'
import {
  CLASS_OBJECT_TYPE,
  type ReadObjects,
  readObjects,
  requireReadable,
  requireSomeRole,
} from './subscribed-objects'

export const MAX_EXPIRES_SEC = 3600
export const MAX_SUBSCRIPTIONS_PER_SOCKET = 100
const MAX_ID_LENGTH = 128

export interface Subscription {
  id: string
  terms: SubscriptionTerms
  /** The collection subscribed by `classpath`, when there is one. */
  target?: PushTarget
  /** The Bun topic of the sockets whose subscriptions are alike (same id and terms). */
  topic: string
  expiresAt: number
  /** The last journal sequence number this subscription has passed (sent, or not its to send). */
  lastSeq: number
  /** While the journal is replayed, live events wait here, then go out if the replay did not cover them. */
  held: PlatformEvent[] | null
}

/** What a subscribe frame asks. `terms` is absent for a bare renewal or an unsubscribe. */
export interface SubscribeRequest {
  id: string
  expires: number
  since?: number
  terms?: { terms: SubscriptionTerms; target?: PushTarget }
}

/** Events without a collection have no field list: any well-formed path may be filtered on. */
class AnyField extends FieldSet {
  override has(path: string): boolean {
    return isValidPath(path)
  }
  override expand(path: string): string[] | null {
    return isValidPath(path) ? [path] : null
  }
}
const ANY_FIELD = new AnyField([])

const TERM_MEMBERS = ['events', 'objects', 'classpath', 'exargs'] as const

/**
 * Reads a subscribe frame for the context's domain. A new subscription needs `events`; a renewal
 * with only `id` and `expires` keeps its terms, one that names terms replaces them.
 */
export async function readSubscribe(ctx: Ctx, payload: Doc, exists: boolean): Promise<SubscribeRequest> {
  const { id, expires, since } = payload
  if (typeof id !== 'string' || id === '' || id.length > MAX_ID_LENGTH)
    throw badRequest(`id must be a string of 1 to ${MAX_ID_LENGTH} characters`, 'id')
  if (typeof expires !== 'number' || !Number.isInteger(expires) || expires < 0 || expires > MAX_EXPIRES_SEC)
    throw badRequest(`expires must be whole seconds from 0 to ${MAX_EXPIRES_SEC}`, 'expires')
  if (since !== undefined && (typeof since !== 'number' || !Number.isSafeInteger(since) || since < 0))
    throw badRequest('since must be a journal sequence number (a whole number)', 'since')
  const request: SubscribeRequest = { id, expires, since: since as number | undefined }
  if (expires === 0) return request
  const namesTerms = TERM_MEMBERS.some((m) => payload[m] !== undefined)
  if (!namesTerms && exists) return request
  request.terms = await readTerms(ctx, payload)
  return request
}

async function readTerms(ctx: Ctx, payload: Doc): Promise<{ terms: SubscriptionTerms; target?: PushTarget }> {
  const events = parseEventMasks(payload.events, { noWildcard: ['modelevents'] })
  const named = payload.objects === undefined ? undefined : await readObjects(ctx, payload.objects, events)
  const objects = named?.objects
  const target = payload.classpath === undefined ? undefined : await resolveClasspath(ctx, payload.classpath)
  if (target) await requireReadable(ctx, target.classpath, 'classpath')
  if (target && named) requireSameCollection(target, named)
  if (!target && !named?.collections.length) requireSomeRole(ctx, events)
  const exargs = payload.exargs ?? {}
  if (typeof exargs !== 'object' || exargs === null || Array.isArray(exargs))
    throw badRequest('exargs must be an object such as {"filter": {...}, "mask": "id,name"}', 'exargs')
  const args = exargs as Doc
  const only = named?.objects.every((o) => o.type === CLASS_OBJECT_TYPE) ? named.collections : []
  const fields = target?.fields ?? (only.length === 1 ? only[0]!.fields : ANY_FIELD)
  const rawFilter = args.filter
  const rawMask = args.mask
  const filter = rawFilter === undefined ? null : parseFilter(asParam(rawFilter), fields)
  const mask =
    rawMask === undefined ? undefined : parseMask(Array.isArray(rawMask) ? rawMask.join(',') : asParam(rawMask), fields)
  const all = [target?.where, filter ?? undefined].filter((f): f is FilterNode => f !== undefined)
  const terms: SubscriptionTerms = {
    domain: ctx.domain,
    events,
    objects,
    collection: target?.dataClass,
    filter: all.length === 0 ? undefined : all.length === 1 ? all[0] : { op: 'and', args: all },
    mask,
  }
  return { terms, target }
}

/**
 * With a classpath, `objects` naming only other collections would never let an event through:
 * a 400 naming `objects` rather than a subscription that stays silent.
 */
function requireSameCollection(target: PushTarget, named: ReadObjects): void {
  const { objects } = named
  if (!objects.length || objects.some((o) => o.type !== CLASS_OBJECT_TYPE || o.value === target.dataClass)) return
  throw badRequest(
    `objects: names none of the collection at classpath ${target.classpath}, so nothing would be sent`,
    'objects',
  )
}

/** A structured member arrives as JSON; a string is taken as the query parameter it would be. */
const asParam = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value))
