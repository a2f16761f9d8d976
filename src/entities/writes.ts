/**
 * Create, patch and remove for any entity: validation, the entity's hooks, and one write
 * transaction holding the row, its journal record and whatever the hooks keep in step with it.
 * Routes (and later the websocket) call these; nothing else writes entities.
 */
import { isPlainObject, type Doc } from '~storage/doc'
import { badRequest, notFound } from '../http/errors'
import { isUuid, NIL_UUID, type Req } from '../http/req'
import type { Change, Entity } from './entity'
import { validate } from './validate'

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

export function bodyObject(body: unknown): Doc {
  if (!isPlainObject(body)) throw badRequest('body must be a JSON object', 'body')
  return body
}

function newId(value: unknown): string {
  if (!isUuid(value)) throw badRequest(`id must be a UUID, got ${JSON.stringify(value)}`, 'id')
  if (value === NIL_UUID) throw badRequest('id must not be the nil UUID', 'id')
  return value.toLowerCase()
}

function stored(entity: Entity, input: Doc): Doc {
  const doc = { ...input }
  for (const f of entity.virtual) delete doc[f]
  return doc
}

export async function createEntity(req: Req, entity: Entity, body: unknown): Promise<Doc> {
  const { id: givenId, ...rest } = bodyObject(body)
  const id = givenId === undefined ? Bun.randomUUIDv7() : newId(givenId)
  let input: Doc = validate(entity.create, rest)
  let hidden = {}
  if (entity.hooks.prepare) ({ input, hidden = {} } = await entity.hooks.prepare(req, input))
  let doc: Doc = { id, ...stored(entity, input) }
  if (entity.finish) doc = entity.finish(doc)
  const repo = req.deps.repo(entity.table)
  const w = req.writeContext()
  const hook = entity.hooks.inTransaction
  const after = await req.deps.db.write(function* () {
    const created = yield* repo.insert(w, doc, hidden)
    if (hook) yield* hook(req, w, { after: created, input: { id, ...input } })
    return created
  })
  await entity.hooks.afterCommit?.(req, { after, input })
  req.deps.events.kick()
  return after
}

export async function patchEntity(req: Req, entity: Entity, id: string, body: unknown): Promise<Doc> {
  const { id: bodyId, ...rest } = bodyObject(body)
  if (bodyId !== undefined && String(bodyId).toLowerCase() !== id)
    throw badRequest(`${entity.name} id cannot be changed`, 'id')
  let input: Doc = validate(entity.patch, rest)
  let hidden: Record<string, unknown> = {}
  if (entity.hooks.prepare) ({ input, hidden = {} } = await entity.hooks.prepare(req, input))
  const changes = stored(entity, input)
  const repo = req.deps.repo(entity.table)
  const w = req.writeContext()
  const hook = entity.hooks.inTransaction
  const change = await req.deps.db.write(function* () {
    let before: Doc | undefined
    const after = yield* repo.update(w, id, (current, hiddenValues) => {
      before = current
      Object.assign(hiddenValues, hidden)
      const next = applyPatch(current, changes)
      return entity.finish ? entity.finish(next) : next
    })
    if (!after) return undefined
    const c: Change = { before: before!, after, input: { id, ...input } }
    if (hook) yield* hook(req, w, c)
    return c
  })
  if (!change) throw notFound(`${entity.name} ${id} not found`)
  await entity.hooks.afterCommit?.(req, change)
  req.deps.events.kick()
  return change.after!
}

export async function removeEntity(req: Req, entity: Entity, id: string): Promise<void> {
  const repo = req.deps.repo(entity.table)
  const w = req.writeContext()
  const hook = entity.hooks.inTransaction
  const change = await req.deps.db.write(function* () {
    const removed = yield* repo.remove(w, id)
    if (!removed) return undefined
    const c: Change = { before: removed }
    if (hook) yield* hook(req, w, c)
    return c
  })
  if (!change) throw notFound(`${entity.name} ${id} not found`)
  await entity.hooks.afterCommit?.(req, change)
  req.deps.events.kick()
}

/** One entity as the caller may see it, or 404. */
export async function readEntity(req: Req, entity: Entity, id: string): Promise<Doc> {
  const doc = await req.deps.repo(entity.table).get(req.domain, id)
  if (!doc) throw notFound(`${entity.name} ${id} not found`)
  return entity.hooks.view ? entity.hooks.view(req, doc) : doc
}
