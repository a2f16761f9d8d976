/**
 * Keeping the directory consistent inside write transactions: references checked, dependent docs
 * edited (and journaled), and the derived caches rebuilt, all in the transaction of the change.
 */
import type { TxStep } from '~storage/db'
import { allDocs, existingIds, existingRoleNames, replaceCaches } from '~storage/directory'
import type { Doc } from '~storage/doc'
import type { WriteContext } from '~storage/journal'
import type { Repository } from '~storage/repository'
import { badRequest } from '../http/errors'
import { computeCaches } from './caches'

/** Roles every domain has without defining them. */
export const BUILTIN_ROLES = ['admin', 'user'] as const
export const isBuiltinRole = (name: string) => (BUILTIN_ROLES as readonly string[]).includes(name)

/** An array member of a doc, or none. */
export const strings = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : [])

export function* rebuildCaches(domain: string): TxStep<void> {
  const users = yield* allDocs('users', domain)
  const groups = yield* allDocs('groups', domain)
  const caches = computeCaches(
    users.map((u) => ({ id: u.id as string, groups: strings(u.groups), roles: strings(u.roles) })),
    groups.map((g) => ({ id: g.id as string, parents: strings(g.parents), roles: strings(g.roles) })),
  )
  yield* replaceCaches(domain, caches)
}

export function* requireRoles(domain: string, names: unknown, field: string): TxStep<void> {
  const custom = strings(names).filter((n) => !isBuiltinRole(n))
  const found = yield* existingRoleNames(domain, custom)
  const missing = custom.find((n) => !found.has(n))
  if (missing !== undefined) throw badRequest(`${field}: there is no role '${missing}' in this domain`, field)
}

export function* requireIds(
  table: 'users' | 'groups' | 'roles',
  domain: string,
  ids: unknown,
  field: string,
): TxStep<void> {
  const list = strings(ids)
  const found = yield* existingIds(table, domain, list)
  const missing = list.find((id) => !found.has(id))
  if (missing !== undefined)
    throw badRequest(`${field}: there is no ${table.slice(0, -1)} ${missing} in this domain`, field)
}

/** Rewrites an array member of another directory entity (journaled as its update). */
export function* editList(
  repo: Repository,
  w: WriteContext,
  id: string,
  field: string,
  edit: (values: string[]) => string[],
): TxStep<void> {
  yield* repo.update(w, id, (doc: Doc) => ({ ...doc, [field]: edit(strings(doc[field])) }))
}

/** The same values without duplicates, in first-seen order. */
export const unique = (values: readonly string[]) => [...new Set(values)]
