/**
 * Route factories for standard collections: `export const GET = list(projects)` and friends.
 * Each reads the request, calls the entity's repository scoped to the session's domain, and
 * shapes the answer. Entity-specific rules live in the entity definition, not here.
 */
import type { Doc } from '~storage/doc'
import type { Literal } from '~storage/query'
import type { Collection, Entity } from '../entities/entity'
import { countList, readListPage } from '../entities/lists'
import { lookupIds } from '../entities/lookup'
import { createEntity, patchEntity, readEntity, removeEntity, viewOf, type WriteCheck } from '../entities/writes'
import { notFound } from '../errors'
import type { JsonText } from '~storage/json-text'
import { ifMatchTag, newVersion, versionTag, versionText } from './if-match'
import { pageText } from './json'
import { itemAnswer, listAnswer, NOT_FOUND, pluralOf, WRITE_ERRORS } from './collection-schemas'
import { encodeCursor, parseFlat, parseListParams, parseMask, withEqualities } from '../query/list-query'
import { present } from '../query/present'
import { ITEM_PARAMS, listQuery, NoQuery, queryOf } from './query-schemas'
import type { Req } from './req'
import { defineRoute } from './route'
import type { Access } from './route-declaration'
import { answer, errors, IdParams, NoContent, type Responses } from './schemas'
import * as v from 'valibot'

interface Options<A extends Responses = Record<never, never>> {
  access?: Access
  /** Answers the entity's own rules add to those of the factory (a password policy's 412). */
  answers?: A
}

/** `a user`, `an extobj`, `an integration point`: the item as a summary names it. */
const anItem = (c: { name: string }) => {
  const words = c.name.replaceAll('_', ' ')
  return `${/^[aeiou]/i.test(words) ? 'an' : 'a'} ${words}`
}

/** `match` adds equality conditions taken from the request (a path segment) to the client's filter. */
export function list<D, const P extends v.GenericSchema | undefined = undefined>(
  collection: Collection<D>,
  options: Options & {
    /** The path's parameters, for a list narrowed by them (`match`). */
    params?: P
    match?: (req: Req) => Record<string, Literal>
    summary?: string
    description?: string
  } = {},
) {
  const shape = {
    fields: collection.fields,
    output: collection.listFields,
    limits: collection.limits,
    assembled: Object.keys(collection.table.assembled ?? {}),
  }
  const presents =
    `The ${pluralOf(collection)} of the domain the caller acts in, as their list fields present them ` +
    `(${collection.listFields.paths.join(', ')}), filtered, ordered and paged by the list parameters. ` +
    'A full page carries X-Next-After, the `after` of the next; `count=true` adds X-Total-Count.'
  return defineRoute({
    summary: options.summary ?? `List ${pluralOf(collection)}`,
    description: options.description ? `${options.description} ${presents}` : presents,
    access: options.access,
    domainKind: collection.domainKind,
    params: options.params as P,
    query: listQuery(),
    response: { 200: listAnswer(collection) },
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

export function read<D>(entity: Collection<D> & Partial<Pick<Entity, 'hooks'>>, options: Options = {}) {
  return defineRoute({
    summary: `Read ${anItem(entity)}`,
    description: 'The item whole (or the members a `mask` names), with a strong ETag; If-None-Match answers 304.',
    access: options.access,
    domainKind: entity.domainKind,
    params: IdParams,
    query: queryOf(ITEM_PARAMS),
    response: { 200: itemAnswer(entity), 304: NoContent, ...NOT_FOUND },
    async handle(req) {
      const id = req.params.id
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
  return versionText(await readEntity(req.ctx, entity as Entity, id), entity.hooks.live)
}

/**
 * If-Match (./if-match.ts), checked in the write's transaction: on the stored entity, or on its view
 * made there from the stored row (GET sends that view, so its tag is the view's).
 */
function ifMatch(req: Req, entity: Entity, id: string): WriteCheck<Doc> | undefined {
  const refuse = ifMatchTag(req, `${entity.name} ${id}`)
  const { view, live } = entity.hooks
  if (!refuse) return undefined
  return function* (current) {
    refuse(versionTag(view ? yield* view(req.ctx, current) : current, live))
  }
}

export function create<T extends Doc, D, B, P, const A extends Responses = Record<never, never>>(
  entity: Entity<T, D, B, P>,
  options: Options<A> = {},
) {
  return defineRoute({
    access: options.access,
    domainKind: entity.domainKind,
    summary: `Create ${anItem(entity)}`,
    description:
      'Answers the item whole, as stored, with the ETag a GET of it answers (for an If-Match). The id may be ' +
      'given (a UUID), else the service makes one.',
    query: NoQuery,
    body: entity.createBody,
    response: { 200: itemAnswer(entity), ...errors(409), ...(options.answers as A) },
    async handle(req) {
      const made = await createEntity(req.ctx, entity, await req.json())
      return newVersion(req, await viewOf(req.ctx, entity, made), entity.hooks.live)
    },
  })
}

export function patch<T extends Doc, D, B, P>(entity: Entity<T, D, B, P>, options: Options = {}) {
  return defineRoute({
    access: options.access,
    domainKind: entity.domainKind,
    summary: `Change ${anItem(entity)}`,
    description:
      'Changes the members given (a null member of `opts` or `ext` removes it) and answers the item whole, with ' +
      'its new ETag. With If-Match, only the version whose ETag it names is changed (412 otherwise).',
    params: IdParams,
    query: NoQuery,
    body: entity.patchBody,
    response: { 200: itemAnswer(entity), ...WRITE_ERRORS },
    async handle(req) {
      const id = req.params.id
      const doc = await patchEntity(req.ctx, entity, id, await req.json(), ifMatch(req, entity, id))
      return newVersion(req, await viewOf(req.ctx, entity, doc), entity.hooks.live)
    },
  })
}

export function remove<T extends Doc, D, B, P>(entity: Entity<T, D, B, P>, options: Options = {}) {
  return defineRoute({
    access: options.access,
    domainKind: entity.domainKind,
    summary: `Delete ${anItem(entity)}`,
    description: 'With If-Match, only the version whose ETag it names is deleted (412 otherwise).',
    params: IdParams,
    query: NoQuery,
    response: { 204: NoContent, ...NOT_FOUND, ...errors(409, 412) },
    async handle(req) {
      const id = req.params.id
      await removeEntity(req.ctx, entity, id, ifMatch(req, entity, id))
      return undefined
    },
  })
}

/** A LOOKUP's body: the key, a JSON string or number. */
export const LookupKey = v.union([v.string(), v.number()], 'must be a JSON string or number')
/** A LOOKUP's answer: the ids whose key fields equal the key. */
export const LookupAnswer = answer(v.array(v.string()))

/** LOOKUP: the body is a JSON string or number; the answer is the ids whose key fields equal it. */
export function lookup<D>(collection: Collection<D>, options: Options = {}) {
  return defineRoute({
    summary: `Look up ${pluralOf(collection)} by key`,
    description: `The ids of the ${pluralOf(collection)} whose ${collection.lookupFields.join(' or ')} equals the key; 404 when none does.`,
    access: options.access,
    domainKind: collection.domainKind,
    query: NoQuery,
    body: LookupKey,
    response: { 200: LookupAnswer, ...NOT_FOUND },
    handle: async (req) =>
      lookupIds(req.deps.repo(collection.table), req.ctx.domain, collection.lookupFields, await req.json()),
  })
}
