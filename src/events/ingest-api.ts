/**
 * POST /rest/v1/service/events: platform components publish events into the service (an
 * extension; the spec has no ingest endpoint). A domain administrator publishes for its current
 * domain; a master administrator for any working domain, named by each event's `domain`.
 */
import * as v from 'valibot'
import { findDomainByName, isMasterDomain } from '../directory/domains'
import { ApiError, badRequest, forbidden } from '../errors'
import { NOT_FOUND } from '../http/collection-schemas'
import { NoQuery } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer } from '../http/schemas'
import { JsonObject, Uuid } from '../values'
import type { Req } from '../http/req'
import { MAX_INGEST_EVENTS, readIngestBody, toPlatformEvent, type IngestEvent } from './ingest'
import { queueBeforePublishing } from '../integration/deliveries'

/** One event as a producer sends it (what the description shows; readIngestEvent holds the rules). */
const IngestEventDoc = v.strictObject({
  class: v.pipe(
    v.string(),
    v.description(
      "one of customevents, callevents, confevents, providerevents, statesevents, registrarevents, ccsevents, ivrevents (modelevents is the service's own)",
    ),
  ),
  event: v.pipe(v.string(), v.description('a name such as "call_started"')),
  domain: v.optional(v.pipe(v.string(), v.description("the domain's name: required in the master domain"))),
  objects: v.optional(
    v.pipe(
      v.array(v.union([v.string(), v.looseObject({ type: v.string() })])),
      v.description('the objects it is bound to, {type: "sipuser", sipuser: "101"}, or data class names'),
    ),
  ),
  // not v.record alone: it takes an array, and makes it an object
  data: v.optional(v.pipe(JsonObject, v.record(v.string(), v.unknown()))),
  time: v.optional(v.pipe(v.string(), v.description('RFC 3339; the service time when absent'))),
})

/**
 * The body: one event or an array of them. Any JSON passes the schema, as it was sent: the rules are
 * the ones the Redis stream's events are read with (./ingest.ts), whose errors name
 * `events[i].<member>`. So no member's schema may change what it takes (the handler reads the output).
 */
const IngestBody = v.union([IngestEventDoc, v.array(IngestEventDoc), v.unknown()])

const Accepted = v.strictObject({
  accepted: v.pipe(v.number(), v.description('how many events were published')),
  ids: v.pipe(v.array(Uuid), v.description("the events' ids, in the order sent")),
})

export const ingestEventsRoute = defineRoute({
  summary: 'Publish events',
  description:
    `One event or an array of at most ${MAX_INGEST_EVENTS}, published to subscribers and webhooks; all or none. ` +
    'A domain administrator publishes for its current domain; a master administrator for the working domain each ' +
    "event's `domain` names (404 when there is none).",
  query: NoQuery,
  body: IngestBody,
  response: { 200: answer(Accepted), ...NOT_FOUND },
  async handle(req) {
    // an admin role, not only a role granting the path: publishing speaks for the whole domain's telephony
    if (!req.ctx.roles.includes('admin')) throw forbidden('only an administrator publishes events')
    const events = readIngestBody(req.body)
    const domainIds = await domainsOf(req, events)
    const now = req.deps.clock.now()
    const accepted = events.map((e, i) => toPlatformEvent(e, domainIds[i]!, now))
    const published = await queueBeforePublishing(req.deps, accepted)
    await req.deps.bus.publishAll(published)
    return { accepted: published.length, ids: published.map((e) => e.id) }
  },
})

/** The domain id of each event, after every event was checked: nothing is published unless all may be. */
async function domainsOf(req: Req, events: IngestEvent[]): Promise<string[]> {
  const current = await req.deps.access.domainInfo(req.ctx.domain)
  if (!current) throw forbidden('the current domain no longer exists')
  const byName = new Map<string, string>()
  const ids: string[] = []
  for (const [index, e] of events.entries()) {
    const field = `events[${index}].domain`
    if (!current.isMaster) {
      if (e.domain !== undefined && e.domain !== current.name && e.domain !== current.id)
        throw forbidden(`${field}: a domain administrator publishes for its current domain (${current.name}) only`)
      ids.push(current.id)
      continue
    }
    if (e.domain === undefined)
      throw badRequest(`${field}: required in the master domain (a working domain's name)`, field)
    let id = byName.get(e.domain)
    if (id === undefined) {
      const found = await findDomainByName(req.deps, e.domain)
      if (!found) throw new ApiError(404, `${field}: no domain named ${e.domain}`, { field })
      if (isMasterDomain(found)) throw badRequest(`${field}: events are published for working domains`, field)
      id = found.id
      byName.set(e.domain, id)
    }
    ids.push(id)
  }
  return ids
}
