/**
 * Caches derived from the directory (SPEC "Caches"): for each user its direct and deep groups and
 * roles, for each group its relatives, users and roles, and for each user the users subordinate
 * to it. A pure computation over the domain's users and groups: the definition the caches kept
 * change by change (./refresh.ts) are tested against, and what computes the group caches.
 *
 * Rules: a member of a group is a member of all its ancestors (deep groups), and holds the roles of
 * every deep group. Subordination: a user is the superior of everyone in the groups below the
 * groups it belongs to directly; `sub` always includes the user itself.
 */
import type { Doc } from '~storage/doc'

export interface DirectoryUser {
  id: string
  groups: string[]
  roles: string[]
}
export interface DirectoryGroup {
  id: string
  parents: string[]
  roles: string[]
}

export interface Caches {
  users: Doc[]
  groups: Doc[]
  subordinations: Doc[]
}

const sorted = (s: Iterable<string>) => [...new Set(s)].sort()

/** Everything reachable from `start` by `next` (not including start unless reached again). */
function closure(start: string, next: (id: string) => readonly string[]): Set<string> {
  const seen = new Set<string>()
  const stack = [...next(start)]
  while (stack.length) {
    const id = stack.pop()!
    if (seen.has(id)) continue
    seen.add(id)
    stack.push(...next(id))
  }
  return seen
}

export function computeCaches(users: DirectoryUser[], groups: DirectoryGroup[]): Caches {
  const byId = new Map(groups.map((g) => [g.id, g]))
  const children = new Map<string, string[]>(groups.map((g) => [g.id, []]))
  for (const g of groups) for (const p of g.parents) children.get(p)?.push(g.id)
  const directUsers = new Map<string, string[]>(groups.map((g) => [g.id, []]))
  for (const u of users) for (const g of u.groups) directUsers.get(g)?.push(u.id)

  const ancestors = new Map(groups.map((g) => [g.id, closure(g.id, (id) => byId.get(id)?.parents ?? [])]))
  const descendants = new Map(groups.map((g) => [g.id, closure(g.id, (id) => children.get(id) ?? [])]))
  const groupDeepRoles = (id: string) => [id, ...(ancestors.get(id) ?? [])].flatMap((g) => byId.get(g)?.roles ?? [])

  const groupCaches = groups.map((g) => {
    const deepChildren = descendants.get(g.id)!
    return {
      id: g.id,
      direct_parents: sorted(g.parents),
      direct_children: sorted(children.get(g.id)!),
      direct_users: sorted(directUsers.get(g.id)!),
      direct_roles: sorted(g.roles),
      deep_parents: sorted(ancestors.get(g.id)!),
      deep_children: sorted(deepChildren),
      deep_users: sorted([g.id, ...deepChildren].flatMap((c) => directUsers.get(c) ?? [])),
      deep_roles: sorted(groupDeepRoles(g.id)),
    }
  })

  const userCaches = users.map((u) => {
    const known = u.groups.filter((g) => byId.has(g))
    const deepGroups = sorted(known.flatMap((g) => [g, ...(ancestors.get(g) ?? [])]))
    return {
      id: u.id,
      direct_groups: sorted(u.groups),
      direct_roles: sorted(u.roles),
      deep_groups: deepGroups,
      deep_roles: sorted([...u.roles, ...deepGroups.flatMap((g) => byId.get(g)?.roles ?? [])]),
    }
  })

  const subordinations = users.map((u) => ({
    top: u.id,
    sub: sorted([
      u.id,
      ...u.groups.flatMap((g) => [...(descendants.get(g) ?? [])].flatMap((c) => directUsers.get(c) ?? [])),
    ]),
  }))

  return { users: userCaches, groups: groupCaches, subordinations }
}

/** True when making `parents` the parents of `groupId` would put the group inside itself. */
export function createsCycle(groupId: string, parents: readonly string[], groups: DirectoryGroup[]): boolean {
  const byId = new Map(groups.map((g) => [g.id, g]))
  if (parents.includes(groupId)) return true
  return parents.some((p) => p === groupId || closure(p, (id) => byId.get(id)?.parents ?? []).has(groupId))
}
