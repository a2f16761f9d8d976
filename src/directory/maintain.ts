/**
 * Keeping the directory consistent inside write transactions: references checked, dependent docs
 * edited (and journaled), and the derived caches rebuilt, all in the transaction of the change;
 * after the commit, every process drops its cached view of the domain's access.
 */
import type { TxStep } from '~storage/db'
import type { Doc } from '~storage/doc'
import type { Entity } from '../entities/entity'
import type { Unit } from '../entities/unit'
import { badRequest } from '../errors'
import { computeCaches } from './caches'
import { groupsCaches, subordinationsCaches, usersCaches } from './caches-api'
import { groups } from './groups'
import { roles } from './roles'
import { users } from './users'

/** Roles every domain has without defining them. */
export const BUILTIN_ROLES = ['admin', 'user'] as const
export const isBuiltinRole = (name: string) => (BUILTIN_ROLES as readonly string[]).includes(name)

/** An array member of a doc, or none. */
export const strings = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : [])

/** Rebuilds the domain's caches in this transaction; its access caches drop after the commit. */
export function* rebuildCaches(u: Unit): TxStep<void> {
  const { repo, access } = u.ctx.deps
  const domain = u.w.domain
  const all = computeCaches(
    (yield* repo(users.table).all(domain)).map((d) => ({
      id: d.id as string,
      groups: strings(d.groups),
      roles: strings(d.roles),
    })),
    (yield* repo(groups.table).all(domain)).map((d) => ({
      id: d.id as string,
      parents: strings(d.parents),
      roles: strings(d.roles),
    })),
  )
  yield* repo(usersCaches.table).replaceAll(domain, all.users)
  yield* repo(groupsCaches.table).replaceAll(domain, all.groups)
  yield* repo(subordinationsCaches.table).replaceAll(domain, all.subordinations)
  u.afterCommit(`access:${domain}`, () => access.invalidate(domain))
}

export function* requireRoles(u: Unit, names: unknown, field: string): TxStep<void> {
  const custom = strings(names).filter((n) => !isBuiltinRole(n))
  const found = yield* u.ctx.deps.repo(roles.table).existing(u.w.domain, 'name', custom)
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
