/**
 * The one subscription matcher, shared by webhook subscriptions and the websocket `subscribe`
 * capability: reads event masks and bound objects in the forms both sources use, decides whether an
 * event goes out under a subscription's terms, and shapes the data it goes out with.
 */
import { isPlainObject, type Doc } from '~storage/doc'
import type { FilterNode } from '~storage/query'
import { badRequest } from '../errors'
import { pick } from '../query/present'
import { filterHolds } from '../query/filter-eval'
import type { PlatformEvent } from './event'

/** `{class, event}` of `CLASS.EVENT`; `event` is ANY_EVENT for `CLASS.*`. */
export interface EventMask {
  class: string
  event: string
}

export const ANY_EVENT = '*'

/** What an event is bound to: `{type: 'sipuser', value: '101'}`, `{type: 'class', value: 'users'}`. */
export type EventObject = PlatformEvent['objects'][number]

/** A subscription, compiled: an event is sent when every part that is present holds. */
export interface SubscriptionTerms {
  /** The subscriber's domain: the bus carries every domain's events, and a subscription sees its own only. */
  domain: string
  events: EventMask[]
  /** The event must be bound to at least one of these; absent or empty: any event. */
  objects?: EventObject[]
  /** The data class `data.class` must equal (the caller resolves a REST classpath to it). */
  collection?: string
  /** Must hold for `data.old` or `data.new` of a data change, for `data` of any other event. */
  filter?: FilterNode
  /** Field paths kept in the instances sent; absent or empty: whole instances. */
  mask?: string[]
}

export interface MaskOptions {
  /** The request field named in errors. */
  field?: string
  /** Classes whose events must be named one by one (the original requires it for modelevents). */
  noWildcard?: readonly string[]
}

export const MAX_EVENT_MASKS = 100
export const MAX_OBJECTS = 1000
export const MAX_OBJECT_VALUE_LENGTH = 256

/** Class, event and object type names: identifier-like (as the platform's own are), at most 64 characters. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/
/** Whether a class, event or object type name follows the rules the masks use (event ingest checks its names with it). */
export const isEventName = (value: unknown): value is string => typeof value === 'string' && NAME.test(value)
/** A websocket `objects` item names a data class (`users`); its events carry it as this type. */
const CLASS_OBJECT_TYPE = 'class'
const DATA_CHANGED: EventMask = { class: 'modelevents', event: 'data_changed' }

const show = (v: unknown) => (JSON.stringify(v) ?? String(v)).slice(0, 100)

/** Reads `["callevents.*", "modelevents.data_changed"]`; names the field and item it refuses. */
export function parseEventMasks(raw: unknown, options: MaskOptions = {}): EventMask[] {
  const field = options.field ?? 'events'
  if (!Array.isArray(raw) || raw.length === 0)
    throw badRequest(`${field} must be a non-empty array of "CLASS.EVENT" or "CLASS.*"`, field)
  if (raw.length > MAX_EVENT_MASKS) throw badRequest(`${field} may hold at most ${MAX_EVENT_MASKS} masks`, field)
  return raw.map((item, index): EventMask => {
    const fail = (why: string) => badRequest(`${field}[${index}]: ${why}, got ${show(item)}`, field, { index })
    const parts = typeof item === 'string' ? item.split('.') : []
    const [cls, event] = parts
    if (parts.length !== 2 || !NAME.test(cls!) || !(event === ANY_EVENT || NAME.test(event!)))
      throw fail('expected "CLASS.EVENT" or "CLASS.*"')
    if (event === ANY_EVENT && options.noWildcard?.includes(cls!))
      throw fail(`events of ${cls} must be named one by one, not with *`)
    return { class: cls!, event: event! }
  })
}

/**
 * Reads a subscription's `objects` in either form: webhook objects `{type: 'sipuser', sipuser: '101'}`
 * (the member named like the type, or `value`, holds the value) or websocket data-class names
 * `"users"` (bound as `{type: 'class', value: 'users'}`).
 */
export function parseObjects(raw: unknown, field = 'objects'): EventObject[] {
  if (!Array.isArray(raw)) throw badRequest(`${field} must be an array`, field)
  if (raw.length > MAX_OBJECTS) throw badRequest(`${field} may hold at most ${MAX_OBJECTS} objects`, field)
  return raw.map((item, index): EventObject => {
    const fail = (why: string) => badRequest(`${field}[${index}]: ${why}, got ${show(item)}`, field, { index })
    const checkValue = (value: unknown): string => {
      if (typeof value !== 'string' || value === '') throw fail('the value must be a non-empty string')
      if (value.length > MAX_OBJECT_VALUE_LENGTH)
        throw fail(`the value is longer than ${MAX_OBJECT_VALUE_LENGTH} characters`)
      return value
    }
    if (typeof item === 'string') return { type: CLASS_OBJECT_TYPE, value: checkValue(item) }
    if (!isPlainObject(item)) throw fail('expected a data class name or {type, <type>: value}')
    const { type } = item
    if (typeof type !== 'string' || !NAME.test(type)) throw fail('type must be a name such as "sipuser"')
    const { value } = item
    const named = Object.hasOwn(item, type) ? item[type] : undefined // `constructor` is not Object's
    if (named !== undefined && value !== undefined && named !== value) throw fail(`"${type}" and "value" disagree`)
    return { type, value: checkValue(named ?? value) }
  })
}

/** True when the event goes out under these terms. */
export function matches(terms: SubscriptionTerms, event: PlatformEvent): boolean {
  if (event.domain !== terms.domain) return false
  if (!terms.events.some((m) => m.class === event.class && (m.event === ANY_EVENT || m.event === event.event)))
    return false
  if (terms.objects?.length && !terms.objects.some((o) => boundTo(event, o))) return false
  if (terms.collection !== undefined && event.data.class !== terms.collection) return false
  const { filter } = terms
  if (!filter) return true
  return filteredDocuments(event).some((doc) => filterHolds(filter, doc))
}

/** The event data to send: the mask applied to the instances (`old`/`new` of a change, else `data`). */
export function shape(terms: SubscriptionTerms, event: PlatformEvent): Doc {
  const mask = terms.mask
  if (!mask?.length) return event.data
  if (!isDataChange(event)) return pick(event.data, mask)
  const masked = (instance: unknown) => (isPlainObject(instance) ? pick(instance, mask) : instance)
  return { ...event.data, old: masked(event.data.old), new: masked(event.data.new) }
}

const boundTo = (event: PlatformEvent, o: EventObject) =>
  event.objects.some((bound) => bound.type === o.type && bound.value === o.value)

const isDataChange = (event: PlatformEvent) => event.class === DATA_CHANGED.class && event.event === DATA_CHANGED.event

/**
 * A data change passes when the filter holds for the instance before or after it, as the original
 * documents (a create carries the new instance in both, a delete the old one); other events are
 * filtered on their data.
 */
function filteredDocuments(event: PlatformEvent): Doc[] {
  if (!isDataChange(event)) return [event.data]
  return [event.data.old, event.data.new].filter(isPlainObject)
}
