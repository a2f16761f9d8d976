/**
 * Event ingest: events that platform components outside this service (the telephony side) publish
 * into it, over HTTP (`POST /rest/v1/service/events`, src/events/ingest-api.ts) or a Redis stream
 * (the event-ingest worker). Both read events with `readIngestEvent`, so one set of rules holds
 * whichever way an event came; only how the domain is named and who may name it differ.
 */
import { isoTime } from '../clock'
import { badRequest } from '../errors'
import { newId } from '../ids'
import { type Doc, isPlainObject, storableProblem } from '~storage/doc'
import type { PlatformEvent } from './event'
import { EVENT_CLASSES } from './event-classes'
import { isEventName, parseObjects } from './match'

export const MAX_INGEST_EVENTS = 100
export const MAX_INGEST_DATA_BYTES = 64 * 1024
/** Classes only the service itself publishes: data changes come from the journal. */
export const RESERVED_CLASSES: readonly string[] = ['modelevents']
/** The stream in-cluster producers add to (under KV_PREFIX); each entry's field `event` holds one event's JSON. */
export const INGEST_STREAM = 'events:ingest'
export const INGEST_STREAM_FIELD = 'event'

/** The classes ingest takes: the subscribable ones the service does not publish itself. */
const ingestClasses = () => [...EVENT_CLASSES.keys()].filter((c) => !RESERVED_CLASSES.includes(c))

const MEMBERS = new Set(['class', 'event', 'domain', 'objects', 'data', 'time'])
const MAX_DOMAIN_LENGTH = 255
/** RFC 3339 date-time: a full date, a full time, and an offset (Z or ±hh:mm). */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/

/** An event as a producer sent it, checked; the domain is still as given (a name, or an id from the stream). */
export interface IngestEvent {
  class: string
  event: string
  domain?: string
  objects: PlatformEvent['objects']
  data: Doc
  /** The given time, as the service writes times (ISO, UTC, milliseconds). */
  time?: string
}

/** Reads one event or an array of at most MAX_INGEST_EVENTS; errors name `events[i].<member>`. */
export function readIngestBody(body: unknown): IngestEvent[] {
  const items = Array.isArray(body) ? body : [body]
  if (items.length === 0) throw badRequest('events: expected an event or a non-empty array of events', 'events')
  if (items.length > MAX_INGEST_EVENTS)
    throw badRequest(`events: at most ${MAX_INGEST_EVENTS} events per request, got ${items.length}`, 'events')
  return items.map((item, index) => readIngestEvent(item, `events[${index}]`))
}

/** Checks one event; `field` (`events[2]`) prefixes the member named in a 400. */
export function readIngestEvent(raw: unknown, field: string): IngestEvent {
  const fail = (member: string, why: string) => badRequest(`${field}.${member}: ${why}`, `${field}.${member}`)
  if (!isPlainObject(raw))
    throw badRequest(`${field}: expected an object {class, event, domain?, objects?, data?, time?}`, field)
  for (const member of Object.keys(raw)) if (!MEMBERS.has(member)) throw fail(member, 'unknown member')
  const { class: cls, event, domain, objects, data, time } = raw
  if (!isEventName(cls)) throw fail('class', 'must be a name such as "callevents" (letters, digits, _; at most 64)')
  if (RESERVED_CLASSES.includes(cls)) throw fail('class', `${cls} is published by the service itself`)
  // a webhook subscription names only these classes (event-classes.ts): another would reach no one
  if (!EVENT_CLASSES.has(cls))
    throw fail('class', `no event class ${cls}; the classes are ${ingestClasses().join(', ')}`)
  if (!isEventName(event)) throw fail('event', 'must be a name such as "call_started" (letters, digits, _; at most 64)')
  if (domain !== undefined && (typeof domain !== 'string' || domain === '' || domain.length > MAX_DOMAIN_LENGTH))
    throw fail('domain', 'must be a domain name')
  if (data !== undefined && !isPlainObject(data)) throw fail('data', 'must be a JSON object')
  if (data !== undefined && Buffer.byteLength(JSON.stringify(data)) > MAX_INGEST_DATA_BYTES)
    throw fail('data', `is larger than ${MAX_INGEST_DATA_BYTES} bytes as JSON`)
  // webhook deliveries keep it in the queue, whose log reads it with SQLite's JSON functions
  const unstorable = data === undefined ? null : storableProblem(data as Doc)
  if (unstorable) throw fail('data', unstorable)
  return {
    class: cls,
    event,
    ...(domain === undefined ? {} : { domain }),
    objects: objects === undefined ? [] : parseObjects(objects, `${field}.objects`),
    data: (data as Doc | undefined) ?? {},
    ...(time === undefined ? {} : { time: readTime(time, () => fail('time', 'must be an RFC 3339 date-time')) }),
  }
}

/** The event as the bus carries it: a new id, the domain's id, the service clock's time unless one was given. */
export function toPlatformEvent(e: IngestEvent, domainId: string, now: number): PlatformEvent {
  return {
    id: newId(),
    class: e.class,
    event: e.event,
    domain: domainId,
    time: e.time ?? isoTime(now),
    objects: e.objects,
    data: e.data,
  }
}

function readTime(value: unknown, fail: () => Error): string {
  const m = typeof value === 'string' ? RFC3339.exec(value) : null
  if (!m) throw fail()
  const [year, month, day, hour, minute, second, offH, offM] = [1, 2, 3, 4, 5, 6, 9, 10].map((i) => Number(m[i] ?? 0))
  if (hour! > 23 || minute! > 59 || second! > 59 || offH! > 23 || offM! > 59) throw fail()
  // setUTCFullYear, not Date.UTC, which reads years 0-99 as 1900-1999
  const date = new Date(0)
  date.setUTCFullYear(year!, month! - 1, day)
  // a day or month out of range rolls over into another date: 2024-02-30 is refused, not read as March 1
  if (date.getUTCMonth() !== month! - 1 || date.getUTCDate() !== day) throw fail()
  // computed here: Date.parse takes neither every RFC 3339 form (a space, lower-case t/z) nor only them
  const fraction = m[7] ? Math.floor(Number(`0${m[7]}`) * 1000) : 0
  const sign = m[8] === undefined || /z/i.test(m[8]) ? 0 : m[8].startsWith('-') ? -1 : 1
  const ms = date.setUTCHours(hour!, minute!, second!, fraction) - sign * (offH! * 60 + offM!) * 60_000
  return isoTime(ms)
}
