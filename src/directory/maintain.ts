/**
 * Keeping the directory consistent inside write transactions: references checked and dependent docs
 * edited (and journaled) in the transaction of the change; the derived caches follow (./refresh.ts).
 */
import type { TxStep } from '~storage/db'
import { type Doc, stringsOf } from '~storage/doc'
import type { Entity } from '../entities/entity'
import type { Unit } from '../entities/unit'
import { badRequest } from '../errors'
import { declaredRoles, isBuiltinRole } from './declarations'

/** An array member of a doc, or none. */
export const strings = stringsOf

export function* requireRoles(u: Unit, names: unknown, field: string): TxStep<void> {
  const custom = strings(names).filter((n) => !isBuiltinRole(n))
  const found = yield* u.ctx.deps.repo(declaredRoles.table).existing(u.w.domain, 'name', custom)
  const missing = custom.find((n) => !found.has(n))
  if (missing !== undefined) throw badRequest(`${field}: there is no role '${missing}' in this domain`, field)
}

/** Every id must name an entity of the domain; a 400 naming `field` otherwise. */
export function* requireIds(u: Unit, entity: Entity<Doc>, ids: unknown, field: string): TxStep<void> {
  const list = strings(ids)
  const found = yield* u.ctx.deps.repo(entity.table).existing(u.w.domain, 'id', list)
  const missing = list.find((id) => !found.has(id))
  if (missing !== undefined) throw badRequest(`${field}: there is no ${entity.name} ${missing} in this domain`, field)
}

/**
 * Rewrites an array member of another directory entity, journaled as its update. A dependent edit
 * does not run that entity's hook: the hook of the change that caused it keeps the derived data in
 * step once, for all of its edits.
 */
export function* editList(
  u: Unit,
  entity: Entity<Doc>,
  id: string,
  field: string,
  edit: (values: string[]) => string[],
): TxStep<void> {
  yield* u.ctx.deps.repo(entity.table).update(u.w, id, (doc) => ({ ...doc, [field]: edit(strings(doc[field])) }))
}

/** The same values without duplicates, in first-seen order. */
export const unique = (values: readonly string[]) => [...new Set(values)]
