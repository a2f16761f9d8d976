/**
 * Events from in-cluster producers: reads the Redis stream INGEST_STREAM (`<KV_PREFIX>events:ingest`)
 * with a consumer group, checks each entry as the HTTP ingest does, publishes the valid ones of a
 * step on the bus together and then acknowledges all its entries, valid or not, so a bad entry
 * never blocks the stream. One process at a time reads (the cluster lease) under one consumer
 * name, so entries a previous holder read but did not acknowledge are read again first: an event
 * may be published twice, never lost.
 */
import { findDomainById, findDomainByName, isMasterDomain } from '../directory/domains'
import { ApiError } from '../errors'
import type { PlatformEvent } from '../events/event'
import { INGEST_STREAM, INGEST_STREAM_FIELD, readIngestEvent, toPlatformEvent } from '../events/ingest'
import { isUuid } from '../ids'
import type { Deps } from '../deps'
import type { Worker } from './runner'
import { queueBeforePublishing } from '../integration/deliveries'

const GROUP = 'event-ingest'
/** One name for whichever process holds the lease: its pending entries are the previous holder's. */
const CONSUMER = 'event-ingest'
const BATCH = 100

export const eventIngest: Worker = {
  name: 'event-ingest',
  every: 500,
  lease: 'cluster',
  async step({ deps }, signal) {
    const { kv } = deps
    let entries = await kv.xreadgroup(INGEST_STREAM, GROUP, CONSUMER, { count: BATCH, pending: true })
    if (entries.length === 0)
      entries = await kv.xreadgroup(INGEST_STREAM, GROUP, CONSUMER, { count: BATCH, pending: false })
    const events: PlatformEvent[] = []
    for (const entry of entries) {
      const event = await checkedEntry(deps, entry.id, entry.fields[INGEST_STREAM_FIELD])
      if (event) events.push(event)
    }
    // a step that lost the lease stops: the next holder reads these entries again, as pending
    if (entries.length === 0 || signal.aborted) return 0
    // one message and one acknowledgement for the step (the bus down leaves every entry pending)
    // deliveries queued before the entries are acknowledged: a process that dies between leaves them pending
    await deps.bus.publishAll(await queueBeforePublishing(deps, events))
    await kv.xack(INGEST_STREAM, GROUP, ...entries.map((e) => e.id))
    return entries.length
  },
}

/** The entry's event, or null when it is refused (logged: it is acknowledged all the same). */
async function checkedEntry(deps: Deps, id: string, text: string | undefined): Promise<PlatformEvent | null> {
  try {
    if (text === undefined) throw new ApiError(400, `no field "${INGEST_STREAM_FIELD}"`)
    let raw: unknown
    try {
      raw = JSON.parse(text)
    } catch {
      throw new ApiError(400, `${INGEST_STREAM_FIELD}: not JSON`)
    }
    const event = readIngestEvent(raw, INGEST_STREAM_FIELD)
    if (event.domain === undefined) throw new ApiError(400, `${INGEST_STREAM_FIELD}.domain: required (a name or an id)`)
    const domain = isUuid(event.domain)
      ? await findDomainById(deps, event.domain.toLowerCase())
      : await findDomainByName(deps, event.domain)
    if (!domain || isMasterDomain(domain))
      throw new ApiError(400, `${INGEST_STREAM_FIELD}.domain: no working domain ${event.domain}`)
    return toPlatformEvent(event, domain.id, deps.clock.now())
  } catch (err) {
    // anything else (the store down) fails the step: its entries stay pending
    if (!(err instanceof ApiError)) throw err
    deps.log.warn('event-ingest: entry refused', { entry: id, error: err.message, text: text?.slice(0, 200) })
    return null
  }
}
