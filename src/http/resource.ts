/**
 * Route factories for standard collections: `export const GET = list(projects)` and friends.
 * Each reads the request, calls the entity's repository scoped to the session's domain, and
 * shapes the answer. Entity-specific rules live in the entity definition, not here.
 */
import type { Doc } from '~storage/doc'
import type { FilterNode, Literal } from '~storage/query'
import type { ColumnRange, Repository } from '~storage/repository'
import type { Collection, Entity } from '../entities/entity'
import { countList, readListPage } from '../entities/lists'
import { createEntity, patchEntity, readEntity, removeEntity, viewOf, type WriteCheck } from '../entities/writes'
import { ApiError, badRequest, notFound } from '../errors'
import { isUuid } from '../ids'
import { etagOf, JsonText } from '~storage/json-text'
import { ifMatchTag } from './if-match'
import { pageText } from './json'
import { encodeCursor, parseFlat, parseListParams, parseMask, refuseUnknownParams } from './list-query'
import { present } from './present'
import type { Req } from './req'
import { type Access, defineRoute } from './route'

interface Options {
  access?: Access
}

/** The client's filter with equality conditions ANDed in: the client cannot widen what they allow. */
export function withEqualities(filter: FilterNode | null, equal: Record<string, Literal>): FilterNode {
  const conds: FilterNode[] = Object.entries(equal).map(([field, value]) => ({
    op: '==',
    left: { field },
    right: { value },
  }))
  return { op: 'and', args: filter ? [...conds, filter] : conds }
}

/** `match` adds equality conditions taken from the request (a path segment) to the client's filter. */
export function list(
  collection: Collection,
  options: Options & { match?: (req: Req) => Record<string, Literal> } = {},
){
  const shape = {
    fields: collection.fields,
    output: collection.listFields,
    limits: collection.limits,
    assembled: Object.keys(collection.table.assembled ?? {}),
  }
  return defineRoute({
    summary: `list ${collection.name}s (filter, mask, order, offset, limit, flat)`,
    access: options.access,
    domainKind: collection.domainKind,
    async handle(req) {
      const { query, mask, flat, count } = parseListParams(req.query, shape)
      if (options.match) query.filter = withEqualities(query.filter, options.match(req))
      const repo = req.deps.repo(collection.table)
      const { docs, next } = await readListPage(req.ctx, repo, query)
      if (count) req.headers['x-total-count'] = String(await countList(req.ctx, repo, query))
      // a full page says where the next one starts (keyset paging: ?after=, cost independent of depth)
      if (next) req.headers['x-next-after'] = encodeCursor(next)
      const paths = mask ?? collection.listFields.paths
      // collections sharing a table read the same pages, each shaped by its own list fields
      const presented = `${collection.name}\u0000${mask ? JSON.stringify(mask) : ''}\u0000${flat}`
      return pageText(docs, presented, () => docs.map((d) => present(d, paths, flat)))
    },
  })
}

export function read(entity: Collection & Partial<Pick<Entity, 'hooks'>>, options: Options = {}){
  return defineRoute({
    summary: `one ${entity.name} (mask, flat); strong ETag`,
    access: options.access,
    domainKind: entity.domainKind,
    async handle(req) {
      const id = req.uuidParam('id')
      refuseUnknownParams(req.query, ['mask', 'flat'])
      const mask = req.query.mask === undefined ? null : parseMask(req.query.mask, entity.fields)
      const flat = parseFlat(req.query.flat)
      if (!mask && !flat) return await wholeJson(req, entity, id)
      const doc = entity.hooks
        ? await readEntity(req.ctx, entity as Entity, id)
        : await req.deps.repo(entity.table).get(req.ctx.domain, id)
      if (!doc) throw notFound(`${entity.name} ${id} not found`)
      return present(doc, mask, flat)
    },
  })
}

/** One entity as GET answers it whole: its ETag is this text's. */
async function wholeJson(req: Req, entity: Collection & Partial<Pick<Entity, 'hooks'>>, id: string): Promise<JsonText> {
  if (!entity.hooks?.view) {
    // the hot point read: the stored text goes out unparsed
    const got = req.deps.repo(entity.table).getJson(req.ctx.domain, id)
    const json = got instanceof Promise ? await got : got // a kept row is not awaited
    if (json === undefined) throw notFound(`${entity.name} ${id} not found`)
    return json
  }
  return new JsonText(JSON.stringify(await readEntity(req.ctx, entity as Entity, id)))
}

/**
 * If-Match (./if-match.ts), checked in the write's transaction: on the stored entity, or on its view
 * made there from the stored row (GET sends that view, so its tag is the view's).
 */
function ifMatch(req: Req, entity: Entity, id: string): WriteCheck<Doc> | undefined {
  const refuse = ifMatchTag(req, `${entity.name} ${id}`)
  const { view } = entity.hooks
  if (!refuse) return undefined
  return function* (current) {
    refuse(etagOf(JSON.stringify(view ? yield* view(req.ctx, current) : current)))
  }
}

export function create(entity: Entity, options: Options = {}){
  return defineRoute({
    access: options.access,
    domainKind: entity.domainKind,
    summary: `create a ${entity.name}; answers it whole`,
    async handle(req) {
      return viewOf(req.ctx, entity, await createEntity(req.ctx, entity, await req.json()))
    },
  })
}

export function patch(entity: Entity, options: Options = {}){
  return defineRoute({
    access: options.access,
    domainKind: entity.domainKind,
    summary: `change the given fields of a ${entity.name} (If-Match honoured); answers it whole`,
    async handle(req) {
      const id = req.uuidParam('id')
      const doc = await patchEntity(req.ctx, entity, id, await req.json(), ifMatch(req, entity, id))
      return viewOf(req.ctx, entity, doc)
    },
  })
}

export function remove(entity: Entity, options: Options = {}){
  return defineRoute({
    access: options.access,
    domainKind: entity.domainKind,
    summary: `delete a ${entity.name} (If-Match honoured)`,
    async handle(req) {
      const id = req.uuidParam('id')
      await removeEntity(req.ctx, entity, id, ifMatch(req, entity, id))
      return undefined
    },
  })
}

/** A key and its other spelling: 5 also finds "5", and "5" also finds 5 (keys are stored either way). */
function keyForms(key: string | number): (string | number)[] {
  if (typeof key === 'number') return [key, String(key)]
  const n = Number(key)
  return key.trim() !== '' && Number.isFinite(n) && String(n) === key ? [key, n] : [key]
}

/**
 * The ids whose key fields equal a LOOKUP key (a JSON string or number); `id` is compared only
 * with keys that are UUIDs. Nothing found is 404 `lookup failed`.
 */
export async function lookupIds(
  repo: Repository,
  domain: string,
  fields: readonly string[],
  key: unknown,
  now?: number,
  range?: ColumnRange,
): Promise<string[]> {
  if (typeof key !== 'string' && typeof key !== 'number')
    throw badRequest('LOOKUP body must be a JSON string or number', 'body')
  const uuid = typeof key === 'string' && isUuid(key)
  const usable = fields.filter((f) => f !== 'id' || uuid)
  const ids = usable.length
    ? await repo.lookup(domain, usable, keyForms(uuid ? key.toLowerCase() : key), now, range)
    : []
  if (ids.length === 0) throw new ApiError(404, 'lookup failed')
  return ids
}

/** LOOKUP: the body is a JSON string or number; the answer is the ids whose key fields equal it. */
export function lookup(collection: Collection, options: Options = {}){
  return defineRoute({
    summary: `ids of the ${collection.name}s whose ${collection.lookupFields.join(' or ')} equals the key (a JSON string or number)`,
    access: options.access,
    domainKind: collection.domainKind,
    handle: async (req) =>
      lookupIds(req.deps.repo(collection.table), req.ctx.domain, collection.lookupFields, await req.json()),
  })
}
