/**
 * The directory caches kept in step change by change, in the transaction of the change: a change
 * recomputes only what it affects, so its cost follows the size of the change, not of the domain.
 *
 * - Groups: their caches (relatives and roles, no users) depend on the group graph alone. A change
 *   to a group (created, deleted, new parents or roles) recomputes them from the domain's groups
 *   (`computeCaches` over the groups) and writes those that differ.
 * - Users: a user's cache depends on its own groups and roles and on the caches of its groups
 *   (their ancestors and roles). The users refreshed are the ones the change names (the user
 *   changed, the members a group gained or lost, the holders of a renamed role) and the direct
 *   members of every group whose ancestors or roles changed.
 * - Membership lists (a group's users, a superior's subordinates) are the edges of
 *   storage/directory-edges.ts: refreshing a user rewrites only its own edges, and the lists are
 *   assembled from the edges when read.
 *
 * tests/directory/caches-property.test.ts compares the result with the full `computeCaches` over
 * random directories and random changes.
 */
import type { TxStep } from '~storage/db'
import { directMembers, dropEdges, setMemberships, setRoles } from '~storage/directory-edges'
import { type Doc, str } from '~storage/doc'
import type { Unit } from '../entities/unit'
import { computeCaches } from './caches'
import { groupsCaches, subordinationsCaches, usersCaches } from './cache-collections'
import { declaredGroups, declaredUsers } from './declarations'
import { strings } from './maintain'

export interface Affected {
  /** Users created, deleted, or whose own groups or roles changed. */
  users?: Iterable<string>
  /** A group was created or deleted, or its parents or roles changed. */
  groups?: boolean
}

const CHUNK = 500
const byId = (docs: Doc[]) => new Map(docs.map((d) => [str(d, 'id'), d]))
const sorted = (s: Iterable<string>) => [...new Set(s)].sort()
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** Brings the caches up to date with a change; the domain's access caches drop after the commit. */
export function* refreshCaches(u: Unit, affected: Affected): TxStep<void> {
  const domain = u.w.domain
  const refresh = new Set(affected.users ?? [])
  const groupCaches = affected.groups ? yield* refreshGroups(u, refresh) : undefined
  // read in chunks: a group that moves may refresh thousands of users
  const ids = [...refresh].sort()
  for (let at = 0; at < ids.length; at += CHUNK) {
    const chunk = ids.slice(at, at + CHUNK)
    const docs = byId(yield* u.ctx.deps.repo(declaredUsers.table).getMany(domain, chunk))
    const before = byId(yield* u.ctx.deps.repo(usersCaches.table).getMany(domain, chunk))
    for (const id of chunk) yield* refreshUser(u, id, docs.get(id), before.get(id), groupCaches)
  }
  const { access } = u.ctx.deps
  u.afterCommit(`access:${domain}`, () => access.invalidate(domain))
}

/**
 * Recomputes the group caches, writes those that changed, adds to `refresh` the direct members of
 * the groups whose ancestors or roles changed (or that are gone), and answers every group's cache.
 */
function* refreshGroups(u: Unit, refresh: Set<string>): TxStep<Map<string, Doc>> {
  const { repo } = u.ctx.deps
  const domain = u.w.domain
  const graph = (yield* repo(declaredGroups.table).all(domain)).map((d) => ({
    id: str(d, 'id'),
    parents: strings(d.parents),
    roles: strings(d.roles),
  }))
  const fresh = computeCaches([], graph).groups.map(({ direct_users, deep_users, ...rest }) => rest as Doc)
  const stored = byId(yield* repo(groupsCaches.table).all(domain))
  const current = byId(fresh)
  const changed = fresh.filter((d) => !same(d, stored.get(str(d, 'id'))))
  const gone = [...stored.keys()].filter((id) => !current.has(id))
  yield* repo(groupsCaches.table).putDerived(domain, changed, gone)
  // a user's cache follows the ancestors and roles of its own groups, not their children
  const moved = changed
    .filter((d) => {
      const before = stored.get(str(d, 'id'))
      return !before || !same(before.deep_parents, d.deep_parents) || !same(before.deep_roles, d.deep_roles)
    })
    .map((d) => str(d, 'id'))
  for (const id of yield* directMembers(domain, [...moved, ...gone])) refresh.add(id)
  for (const id of gone) yield* dropEdges(domain, { group: id })
  return current
}

/**
 * Rewrites one user's cache row and edges from its doc (none: deleted, they go) and its groups'
 * caches; `before` is its cache row as stored.
 */
function* refreshUser(
  u: Unit,
  id: string,
  user: Doc | undefined,
  before: Doc | undefined,
  groupCaches: Map<string, Doc> | undefined,
): TxStep<void> {
  const { repo } = u.ctx.deps
  const domain = u.w.domain
  if (!user) {
    yield* repo(usersCaches.table).putDerived(domain, [], [id])
    yield* repo(subordinationsCaches.table).putDerived(domain, [], [id])
    yield* dropEdges(domain, { user: id })
    return
  }
  const own = sorted(strings(user.groups))
  const roles = sorted(strings(user.roles))
  // groups that do not exist count as direct groups only (as in computeCaches)
  let known: Doc[]
  if (groupCaches) known = own.map((g) => groupCaches.get(g)).filter((d) => d !== undefined)
  else known = yield* repo(groupsCaches.table).getMany(domain, own)
  const deep = sorted(known.flatMap((g) => [str(g, 'id'), ...strings(g.deep_parents)]))
  const cache = {
    id,
    direct_groups: own,
    direct_roles: roles,
    deep_groups: deep,
    deep_roles: sorted([...roles, ...known.flatMap((g) => strings(g.deep_roles))]),
  }
  if (!same(cache, before)) yield* repo(usersCaches.table).putDerived(domain, [cache])
  if (!before) yield* repo(subordinationsCaches.table).putDerived(domain, [{ top: id }])
  const edges = new Map(deep.map((g) => [g, false]))
  for (const g of known) edges.set(str(g, 'id'), true)
  yield* setMemberships(domain, id, edges)
  yield* setRoles(domain, id, before ? strings(before.direct_roles) : [], roles)
}
