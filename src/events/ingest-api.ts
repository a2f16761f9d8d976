/**
 * POST /rest/v1/service/events: platform components publish events into the service (an
 * extension; the spec has no ingest endpoint). A domain administrator publishes for its current
 * domain; a master administrator for any working domain, named by each event's `domain`.
 */
import { findDomainByName, isMasterDomain } from '../directory/domains'
import { ApiError, badRequest, forbidden } from '../errors'
import { defineRoute } from '../http/route'
import type { Req } from '../http/req'
import { readIngestBody, toPlatformEvent, type IngestEvent } from './ingest'

export const ingestEventsRoute = defineRoute({
  async handle(req) {
    // an admin role, not only a role granting the path: publishing speaks for the whole domain's telephony
    if (!req.ctx.roles.includes('admin')) throw forbidden('only an administrator publishes events')
    const events = readIngestBody(await req.json())
    const domainIds = await domainsOf(req, events)
    const now = req.deps.clock.now()
    const published = events.map((e, i) => toPlatformEvent(e, domainIds[i]!, now))
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
