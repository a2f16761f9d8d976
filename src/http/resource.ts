/**
 * Route factories for standard collections: `export const GET = list(projects)` and friends.
 * Each reads the request, calls the entity's repository scoped to the session's domain, and
 * shapes the answer. Entity-specific rules live in the entity definition, not here.
 */
import { isPlainObject, type Doc } from '~storage/doc'
import type { FilterNode, Literal } from '~storage/query'
import type { Entity } from '../entities/entity'
import { validate } from '../entities/validate'
import { ApiError, badRequest, notFound } from './errors'
import { JsonText } from './json'
import { parseFlat, parseListParams, parseMask } from './list-query'
import { present } from './present'
import { isUuid, NIL_UUID, type Req } from './req'
import { defineRoute, type Access, type RouteDef } from './route'

interface Options {
  access?: Access
}

/** Top-level members merged one level deep by PATCH (null removes a key); others are replaced. */
const MERGED_MEMBERS = new Set(['opts', 'ext'])

export function applyPatch(current: Doc, changes: Doc): Doc {
  const next: Doc = { ...current }
  for (const [key, value] of Object.entries(changes)) {
    if (MERGED_MEMBERS.has(key) && isPlainObject(value) && isPlainObject(current[key])) {
      const merged: Doc = { ...(current[key] as Doc) }
      for (const [k, val] of Object.entries(value)) {
        if (val === null) delete merged[k]
        else merged[k] = val
      }
      next[key] = merged
    } else next[key] = value
  }
  return next
}

function withEqualities(filter: FilterNode | null, equal: Record<string, Literal>): FilterNode {
  const conds: FilterNode[] = Object.entries(equal).map(([field, value]) => ({ op: '==', left: { field }, right: { value } }))
  return { op: 'and', args: filter ? [...conds, filter] : conds }
}

function bodyObject(body: unknown): Doc {
  if (!isPlainObject(body)) throw badRequest('body must be a JSON object', 'body')
  return body
}

/** `match` adds equality conditions taken from the request (a path segment) to the client's filter. */
export function list(entity: Entity, options: Options & { match?: (req: Req) => Record<string, Literal> } = {}): RouteDef {
  const shape = { fields: entity.fields, output: entity.listFields, limits: entity.limits }
  return defineRoute({
    access: options.access,
    domainKind: entity.domainKind,
    async handle(req) {
      const { query, mask, flat } = parseListParams(req.query, shape)
      if (options.match) query.filter = withEqualities(query.filter, options.match(req))
      const docs = await req.deps.repo(entity.table).list(req.domain, query)
      const paths = mask ?? entity.listFields.paths
      return docs.map((d) => present(d, paths, flat))
    },
  })
}

export function read(entity: Entity, options: Options = {}): RouteDef {
  return defineRoute({
    access: options.access,
    domainKind: entity.domainKind,
    async handle(req) {
      const id = req.uuidParam('id')
      const mask = req.query.mask === undefined ? null : parseMask(req.query.mask, entity.fields)
      const flat = parseFlat(req.query.flat)
      const repo = req.deps.repo(entity.table)
      if (!mask && !flat) {
        const text = await repo.getText(req.domain, id)
        if (text === undefined) throw notFound(`${entity.name} ${id} not found`)
        return new JsonText(text)
      }
      const doc = await repo.get(req.domain, id)
      if (!doc) throw notFound(`${entity.name} ${id} not found`)
      return present(doc, mask, flat)
    },
  })
}

export function create(entity: Entity, options: Options = {}): RouteDef {
  return defineRoute({
    access: options.access,
    domainKind: entity.domainKind,
    async handle(req) {
      const { id: givenId, ...body } = bodyObject(await req.json())
      const id = givenId === undefined ? Bun.randomUUIDv7() : newId(givenId)
      let doc: Doc = { id, ...validate(entity.create, body) }
      if (entity.finish) doc = entity.finish(doc)
      return req.deps.repo(entity.table).create(req.writeContext(), doc)
    },
  })
}

function newId(value: unknown): string {
  if (!isUuid(value)) throw badRequest(`id must be a UUID, got ${JSON.stringify(value)}`, 'id')
  if (value === NIL_UUID) throw badRequest('id must not be the nil UUID', 'id')
  return value.toLowerCase()
}

export function patch(entity: Entity, options: Options = {}): RouteDef {
  return defineRoute({
    access: options.access,
    domainKind: entity.domainKind,
    async handle(req) {
      const id = req.uuidParam('id')
      const { id: bodyId, ...body } = bodyObject(await req.json())
      if (bodyId !== undefined && String(bodyId).toLowerCase() !== id) throw badRequest('id cannot be changed', 'id')
      const changes = validate(entity.patch, body)
      const doc = await req.deps.repo(entity.table).modify(req.writeContext(), id, (current) => {
        const next = applyPatch(current, changes)
        return entity.finish ? entity.finish(next) : next
      })
      if (!doc) throw notFound(`${entity.name} ${id} not found`)
      return doc
    },
  })
}

export function remove(entity: Entity, options: Options = {}): RouteDef {
  return defineRoute({
    access: options.access,
    domainKind: entity.domainKind,
    async handle(req) {
      const id = req.uuidParam('id')
      if (!(await req.deps.repo(entity.table).delete(req.writeContext(), id))) throw notFound(`${entity.name} ${id} not found`)
      return undefined
    },
  })
}

/** LOOKUP: the body is a JSON string or number; the answer is the ids whose key fields equal it. */
export function lookup(entity: Entity, options: Options = {}): RouteDef {
  return defineRoute({
    access: options.access,
    domainKind: entity.domainKind,
    async handle(req) {
      const key = await req.json()
      if (typeof key !== 'string' && typeof key !== 'number') throw badRequest('LOOKUP body must be a JSON string or number', 'body')
      const fields = entity.lookupFields.filter((f) => f !== 'id' || isUuid(key))
      const ids = fields.length ? await req.deps.repo(entity.table).lookup(req.domain, fields, typeof key === 'string' && isUuid(key) ? key.toLowerCase() : key) : []
      if (ids.length === 0) throw new ApiError(404, 'lookup failed')
      return ids
    },
  })
}
