/**
 * The collections a subscription names, for websocket `subscribe` frames and webhook subscriptions
 * alike. An `objects` item that is a string (or `{type: "class", class: ...}`) names a collection
 * the way the original writes it: the last segment of its REST path (`users`, `extobjs`, a model
 * class's name), its REST path (`/rest/v1/domain/users`, `reference/extobjs`, `model/<classname>`)
 * or its singular data class (`user`, `extobj`, a model classname). It is bound to the data class
 * its changes carry, so `["users"]` matches `modelevents.data_changed` of users. A name the domain
 * has no collection for is a 400 naming the item; a collection the subscriber may never read is a
 * 403 naming it (read permission is checked again at delivery).
 */
import type { Ctx } from '../context'
import { entities } from '../entities/registry'
import { ApiError, badRequest } from '../errors'
import { type EventMask, type EventObject, parseObjects } from '../events/match'
import type { FieldSet } from '../query/fields'
import { mayRead } from './collections'
import { grantsNamedRecord } from '../identity/access'

/** A collection an objects item names. */
export interface NamedCollection {
  /** Its REST path, as a GET of it would name it. */
  classpath: string
  /** The data class its changes carry (`data.class`, the event's bound object). */
  dataClass: string
  fields: FieldSet
}

const REST = '/rest/v1/'
const MODEL = 'model/'
/** The object type an event's data class is bound as (src/events/event.ts). */
export const CLASS_OBJECT_TYPE = 'class'
const DATA_CHANGES = 'modelevents'
/** Stands for any record id when asking whether a record of a collection may ever be read. */
const ANY_ID = 'any-record'

/** The collection `name` names in the context's domain, or null. */
export async function collectionNamed(ctx: Ctx, name: string): Promise<NamedCollection | null> {
  const path = name.startsWith(REST) ? name.slice(REST.length) : name.replace(/^\/+/, '')
  const bare = path.replace(/\/+$/, '')
  const info = await ctx.deps.access.domainInfo(ctx.domain)
  const kinds = info?.isMaster ? ['any', 'master'] : ['any', 'working']
  for (const e of entities()) {
    if (!e.path || !kinds.includes(e.domainKind)) continue
    const rest = e.path.slice(REST.length)
    if (bare === rest || bare === rest.split('/').pop() || bare === e.table.objtype)
      return { classpath: e.path, dataClass: e.table.objtype, fields: e.fields }
  }
  const models = await ctx.deps.model.classes(ctx.domain)
  const classname = bare.startsWith(MODEL) ? bare.slice(MODEL.length) : bare
  let model = models.get(classname)
  if (!model) {
    const byLast = [...models.values()].filter((m) => m.classname.split('/').pop() === classname)
    if (byLast.length === 1) model = byLast[0]
  }
  if (!model?.table) return null
  return { classpath: `${REST}${MODEL}${model.classname}`, dataClass: model.classname, fields: model.fields }
}

/**
 * Whether the context may read some record of the collection: a GET of the collection, or of a
 * record of it, would be admitted now. False for a subscriber that may never see its changes.
 */
export async function mayEverRead(ctx: Ctx, classpath: string): Promise<boolean> {
  if (await mayRead(ctx, classpath, ANY_ID)) return true
  // a role may grant GET on named records only (`…/extobjs/<id>`): those it reads
  return grantsNamedRecord(ctx.roles, await ctx.deps.access.grantsOf(ctx.domain), 'GET', classpath)
}

/** 403 naming the collection and the request field, unless the context may read it. */
export async function requireReadable(ctx: Ctx, classpath: string, field: string): Promise<void> {
  if (await mayEverRead(ctx, classpath)) return
  const who = ctx.actor.type === 'integration' ? 'this channel' : 'this user'
  throw new ApiError(403, `${field}: ${who} may not read ${classpath}, so its changes would never be sent`, {
    field,
    collection: classpath,
  })
}

/**
 * A channel without roles may read no collection: its subscription to data changes of every
 * collection would never send one, so it is a 403 naming `events`.
 */
export function requireSomeRole(ctx: Ctx, events: readonly EventMask[], field = 'events'): void {
  if (ctx.actor.type !== 'integration' || ctx.roles.length) return
  if (!events.some((m) => m.class === DATA_CHANGES)) return
  throw new ApiError(403, `${field}: this channel has no roles, so it may read no collection's changes`, { field })
}

export interface ReadObjects {
  /** The objects the matcher takes: a collection item bound as its data class. */
  objects: EventObject[]
  /** The collections the items named, each once. */
  collections: NamedCollection[]
}

/**
 * Reads a subscription's `objects` (src/events/match.ts `parseObjects`). When its `events` take data
 * changes, each item that names a collection is resolved: a name no collection of the domain has is
 * a 400 naming `objects[i]`, one the context may not read a 403. Otherwise the items stay the event
 * objects they are: a script's `emit(name, payload, ["foo"])` and ingest bind a string as
 * `{type: "class", value: "foo"}`, which `objects: ["foo"]` matches.
 */
export async function readObjects(
  ctx: Ctx,
  raw: unknown,
  events: readonly EventMask[],
  field = 'objects',
): Promise<ReadObjects> {
  const parsed = parseObjects(raw, field)
  const collections = new Map<string, NamedCollection>()
  const objects: EventObject[] = []
  const changes = events.some((m) => m.class === DATA_CHANGES)
  for (const [index, item] of parsed.entries()) {
    if (item.type !== CLASS_OBJECT_TYPE || !changes) {
      objects.push(item)
      continue
    }
    const named = await collectionNamed(ctx, item.value)
    if (!named)
      throw badRequest(
        `${field}[${index}]: this domain has no collection named ${JSON.stringify(item.value)} ` +
          '(name one as users, /rest/v1/domain/users or user)',
        field,
        { index },
      )
    objects.push({ type: CLASS_OBJECT_TYPE, value: named.dataClass })
    collections.set(named.classpath, named)
  }
  for (const c of collections.values()) await requireReadable(ctx, c.classpath, field)
  return { objects, collections: [...collections.values()] }
}
