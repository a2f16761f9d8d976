/**
 * Create, update and remove for any entity, in two phases: `prepare*` validates and runs the
 * entity's async preparation outside any transaction; the `*Step` functions are transaction steps
 * (row, journal record, the entity's hook) that compose inside one `commit` (entities/unit.ts).
 * `createEntity`, `patchEntity` and `removeEntity` are both phases in one transaction of their own.
 */
import type { SqlValue, TxStep } from '~storage/db'
import { type Doc, isPlainObject } from '~storage/doc'
import type { Ctx } from '../context'
import { badRequest, notFound } from '../errors'
import { givenId, newId } from '../ids'
import type { Change, Entity, LongWrites } from './entity'
import { commit, commitLong, type Unit } from './unit'
import { validate } from './validate'

/** Top-level members merged one level deep by PATCH (null removes a key); others are replaced. */
const MERGED_MEMBERS = new Set(['opts', 'ext'])

/** `changes` laid over `current`: a member that is null is removed. */
export function mergeMembers(current: Doc, changes: Doc): Doc {
  const merged: Doc = { ...current }
  for (const [k, value] of Object.entries(changes)) {
    if (value === null) delete merged[k]
    else merged[k] = value
  }
  return merged
}

export function applyPatch(current: Doc, changes: Doc): Doc {
  const next: Doc = { ...current }
  for (const [key, value] of Object.entries(changes)) {
    if (MERGED_MEMBERS.has(key) && isPlainObject(value)) {
      next[key] = mergeMembers(isPlainObject(current[key]) ? current[key] : {}, value)
    } else next[key] = value
  }
  return next
}

export function bodyObject(body: unknown): Doc {
  if (!isPlainObject(body)) throw badRequest('body must be a JSON object', 'body')
  return body
}

/** The body's `id` must be absent or equal to the addressed one. */
export function sameId(body: Doc, id: string, field = 'id', what = 'id'): void {
  if (body[field] !== undefined && String(body[field]).toLowerCase() !== id)
    throw badRequest(`${what} cannot be changed`, field)
}

export interface Prepared<T extends Doc> {
  entity: Entity<T>
  /** The new doc (create) or the changes to lay over the current one (patch). */
  doc: Doc
  /** The validated input, virtual fields included (hooks act on them). */
  input: Doc
  hidden: Record<string, SqlValue>
}

function stored(entity: Entity<Doc>, input: Doc): Doc {
  const doc = { ...input }
  for (const f of entity.virtual) delete doc[f]
  return doc
}

async function prepareInput<T extends Doc>(ctx: Ctx, entity: Entity<T>, input: Doc) {
  if (!entity.hooks.prepare) return { input, hidden: {} }
  const prepared = await entity.hooks.prepare(ctx, input)
  return { input: prepared.input, hidden: prepared.hidden ?? {} }
}

export async function prepareCreate<T extends Doc>(ctx: Ctx, entity: Entity<T>, body: unknown): Promise<Prepared<T>> {
  const { id: requested, ...rest } = bodyObject(body)
  const id = requested === undefined ? newId() : givenId(requested)
  const { input, hidden } = await prepareInput(ctx, entity, validate(entity.create, rest))
  let doc = { id, ...stored(entity, input) } as unknown as T
  if (entity.finish) doc = entity.finish(doc)
  return { entity, doc, input: { id, ...input }, hidden }
}

export async function preparePatch<T extends Doc>(ctx: Ctx, entity: Entity<T>, id: string, body: unknown) {
  const rest = bodyObject(body)
  sameId(rest, id, 'id', `${entity.name} id`)
  const { id: _id, ...changes } = rest
  const { input, hidden } = await prepareInput(ctx, entity, validate(entity.patch, changes))
  return { entity, doc: stored(entity, input), input: { id, ...input }, hidden } satisfies Prepared<T>
}

export function* insertStep<T extends Doc>(u: Unit, p: Prepared<T>): TxStep<T> {
  const created = (yield* u.ctx.deps.repo(p.entity.table).insert(u.w, p.doc, p.hidden)) as T
  if (p.entity.hooks.inTransaction) yield* p.entity.hooks.inTransaction(u, { after: created, input: p.input })
  return created
}

/**
 * Replaces the stored doc by `change(current)` (the entity's `finish` applied) and runs the hook;
 * undefined when there is no such entity.
 */
export function* updateStep<T extends Doc>(
  u: Unit,
  entity: Entity<T>,
  id: string,
  change: (current: T) => Doc,
  options: { hidden?: Record<string, SqlValue>; input?: Doc } = {},
): TxStep<T | undefined> {
  let before: T | undefined
  const after = (yield* u.ctx.deps.repo(entity.table).update(u.w, id, (current, hiddenValues) => {
    before = current as T
    Object.assign(hiddenValues, options.hidden)
    const next = change(current as T) as T
    return entity.finish ? entity.finish(next) : next
  })) as T | undefined
  if (!after) return undefined
  const c: Change<T> = { before, after, input: options.input }
  if (entity.hooks.inTransaction) yield* entity.hooks.inTransaction(u, c)
  return after
}

/**
 * A condition on the entity as the write's transaction finds it, before the change (If-Match): it
 * throws to refuse the write. A step, so that it may read what the entity's view adds.
 */
export type WriteCheck<T> = (current: T) => TxStep<void>

/** Runs the check on the stored entity, if there is one (an absent entity is the write's 404). */
function* checkStep<T extends Doc>(u: Unit, entity: Entity<T>, id: string, check?: WriteCheck<T>): TxStep<void> {
  if (!check) return
  const current = yield* u.ctx.deps.repo(entity.table).current(u.w.domain, id, Date.parse(u.w.now))
  if (current) yield* check(current as T)
}

/** PATCH semantics: the prepared changes merged into the current doc. */
export function* patchStep<T extends Doc>(
  u: Unit,
  p: Prepared<T>,
  id: string,
  check?: WriteCheck<T>,
): TxStep<T | undefined> {
  yield* checkStep(u, p.entity, id, check)
  return yield* updateStep(u, p.entity, id, (current) => applyPatch(current, p.doc), {
    hidden: p.hidden,
    input: p.input,
  })
}

export function* removeStep<T extends Doc>(
  u: Unit,
  entity: Entity<T>,
  id: string,
  check?: WriteCheck<T>,
): TxStep<T | undefined> {
  yield* checkStep(u, entity, id, check)
  const removed = (yield* u.ctx.deps.repo(entity.table).remove(u.w, id)) as T | undefined
  if (removed && entity.hooks.inTransaction) yield* entity.hooks.inTransaction(u, { before: removed })
  return removed
}

export async function createEntity<T extends Doc>(ctx: Ctx, entity: Entity<T>, body: unknown): Promise<T> {
  const prepared = await prepareCreate(ctx, entity, body)
  return commit(ctx, (u) => insertStep(u, prepared))
}

/** `check` sees the entity as stored, in the write's transaction, and may refuse the change (If-Match). */
export async function patchEntity<T extends Doc>(
  ctx: Ctx,
  entity: Entity<T>,
  id: string,
  body: unknown,
  check?: WriteCheck<T>,
): Promise<T> {
  const prepared = await preparePatch(ctx, entity, id, body)
  const after = await commitAs(ctx, entity.long, 'patch', id, (u) => patchStep(u, prepared, id, check))
  if (!after) throw notFound(`${entity.name} ${id} not found`)
  return after
}

export async function removeEntity<T extends Doc>(
  ctx: Ctx,
  entity: Entity<T>,
  id: string,
  check?: WriteCheck<T>,
): Promise<void> {
  if (!(await commitAs(ctx, entity.long, 'remove', id, (u) => removeStep(u, entity, id, check))))
    throw notFound(`${entity.name} ${id} not found`)
}

/** A change of one entity: long work when the entity says its changes can be large. */
function commitAs<R>(
  ctx: Ctx,
  long: LongWrites | undefined,
  op: 'patch' | 'remove',
  id: string,
  body: (u: Unit) => TxStep<R>,
): Promise<R> {
  const kind = long?.[op]
  if (!kind) return commit(ctx, body)
  return commitLong(ctx, { kind, key: id, gates: long.gatesOwnDomain ? [id] : [] }, body)
}

/** One entity as the caller may see it, or 404. */
export async function readEntity<T extends Doc>(ctx: Ctx, entity: Entity<T>, id: string): Promise<Doc> {
  const doc = (await ctx.deps.repo(entity.table).get(ctx.domain, id)) as T | undefined
  if (!doc) throw notFound(`${entity.name} ${id} not found`)
  return viewOf(ctx, entity, doc)
}

/** The entity shaped by its view, outside any transaction (an answer to a read or a write). */
export function viewOf<T extends Doc>(ctx: Ctx, entity: Entity<T>, doc: T): Promise<Doc> {
  const { view } = entity.hooks
  return view ? ctx.deps.db.read(() => view(ctx, doc)) : Promise.resolve(doc)
}
