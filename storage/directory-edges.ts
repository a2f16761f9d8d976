/**
 * The directory's membership as indexed edges, kept in step with the caches in the transaction of
 * every directory change (migration 0016):
 *
 *   dir_members (domain, grp, usr, direct)  the user is in the group or below it (deep); `direct`
 *                                           when the group is one of the user's own groups
 *   dir_role_holders (domain, role, usr)     the user holds the role itself (its `roles`)
 *
 * A change edits only the edges of the users it affects, so its cost does not grow with the size of
 * a group. The cache collections' member lists (a group's `direct_users` and `deep_users`, a
 * subordination's `sub`) are assembled from these edges when they are read (`AssembledField`), and
 * a `contains` filter on them is an indexed lookup.
 */
import { type TxStep, tx } from './db'
import type { AssembledField } from './table'
import { text } from './columns'

const slots = (n: number) => Array.from({ length: n }, () => '?').join(',')

/** The groups a user is in (deep), each with whether the user is in it directly. */
export function* membershipsOf(domain: string, user: string): TxStep<Map<string, boolean>> {
  const rows = yield* tx.all('SELECT grp, direct FROM dir_members WHERE domain = ? AND usr = ?', [domain, user])
  return new Map(rows.map((r) => [text(r[0]), r[1] === 1]))
}

/** Makes the user's membership edges exactly `wanted` (group -> direct), touching only what differs. */
export function* setMemberships(domain: string, user: string, wanted: ReadonlyMap<string, boolean>): TxStep<void> {
  const current = yield* membershipsOf(domain, user)
  for (const grp of current.keys())
    if (!wanted.has(grp))
      yield* tx.run('DELETE FROM dir_members WHERE domain = ? AND grp = ? AND usr = ?', [domain, grp, user])
  for (const [grp, direct] of wanted)
    if (current.get(grp) !== direct)
      yield* tx.run('INSERT OR REPLACE INTO dir_members (domain, grp, usr, direct) VALUES (?, ?, ?, ?)', [
        domain,
        grp,
        user,
        direct ? 1 : 0,
      ])
}

/** The users directly in any of the groups, by id. */
export function* directMembers(domain: string, groups: readonly string[]): TxStep<string[]> {
  if (groups.length === 0) return []
  const rows = yield* tx.all(
    `SELECT DISTINCT usr FROM dir_members WHERE domain = ? AND grp IN (${slots(groups.length)}) AND direct = 1 ORDER BY usr`,
    [domain, ...groups],
  )
  return rows.map((r) => text(r[0]))
}

/** Makes the user's role edges exactly `wanted`, given the roles it held (`held`). */
export function* setRoles(
  domain: string,
  user: string,
  held: readonly string[],
  wanted: readonly string[],
): TxStep<void> {
  for (const role of held)
    if (!wanted.includes(role))
      yield* tx.run('DELETE FROM dir_role_holders WHERE domain = ? AND role = ? AND usr = ?', [domain, role, user])
  for (const role of wanted)
    if (!held.includes(role))
      yield* tx.run('INSERT OR IGNORE INTO dir_role_holders (domain, role, usr) VALUES (?, ?, ?)', [domain, role, user])
}

/** The users holding the role themselves (not through a group), by id. */
export function* roleHolders(domain: string, role: string): TxStep<string[]> {
  const rows = yield* tx.all('SELECT usr FROM dir_role_holders WHERE domain = ? AND role = ? ORDER BY usr', [
    domain,
    role,
  ])
  return rows.map((r) => text(r[0]))
}

/** Removes every edge of a user (deleted), or of a group (deleted: its users were already refreshed). */
export function* dropEdges(domain: string, of: { user: string } | { group: string }): TxStep<void> {
  if ('user' in of) {
    yield* tx.run('DELETE FROM dir_members WHERE domain = ? AND usr = ?', [domain, of.user])
    yield* tx.run('DELETE FROM dir_role_holders WHERE domain = ? AND usr = ?', [domain, of.user])
  } else yield* tx.run('DELETE FROM dir_members WHERE domain = ? AND grp = ?', [domain, of.group])
}

/** Removes every edge of a domain (the domain is being deleted). */
export function* purgeEdges(domain: string): TxStep<void> {
  yield* tx.run('DELETE FROM dir_members WHERE domain = ?', [domain])
  yield* tx.run('DELETE FROM dir_role_holders WHERE domain = ?', [domain])
}

/** A JSON array of the values of `column` the subquery selects, in order (`[]` for none). */
const arrayOf = (select: string) => `(SELECT json_group_array(v) FROM (${select} ORDER BY v))`

/** A group's users, direct or deep: its rows in dir_members; those holding a user, from the user's rows. */
const groupUsers = (directOnly: boolean): AssembledField => {
  const direct = directOnly ? ' AND m.direct = 1' : ''
  return {
    value: (t) =>
      arrayOf(`SELECT m.usr AS v FROM dir_members m WHERE m.domain = ${t}.domain AND m.grp = ${t}.id${direct}`),
    contains: (t) => `${t}.id IN (SELECT m.grp FROM dir_members m WHERE m.domain = ? AND m.usr = ?${direct})`,
  }
}

/**
 * The users below a user (`top`): everyone in the groups under the groups the user is in directly
 * (their children and, deep, what is below those), and the user itself. The children come from the
 * group caches (`direct_children`).
 */
const below = (t: string) =>
  // CROSS JOIN keeps this order (the user's edges first); otherwise SQLite may read every edge of the domain
  `FROM dir_members d CROSS JOIN groups_caches g CROSS JOIN json_each(g.doc, '$.direct_children') c
   CROSS JOIN dir_members m
   WHERE d.domain = ${t}.domain AND d.usr = ${t}.id AND d.direct = 1 AND g.domain = d.domain AND g.id = d.grp
   AND m.domain = d.domain AND m.grp = c.value`

/**
 * The users above a user (`p.v`), the inverse of `below`: the user itself, and the direct members of
 * the parents of every group the user is in (deep). Starts from the user's own edges, so a `sub
 * contains` filter costs what the user's superiors cost, not what the domain's users do. A parent
 * that does not exist has no direct members (its edges, from `deep_parents`, are all deep), so it
 * adds no one, as `direct_children` leaves it out. A NULL value finds nothing (`id IN (NULL)` would be
 * NULL, and its NOT NULL too, where `not contains null` must hold for every row).
 */
const above = `WITH p(d, v) AS (SELECT ?, ?)
   SELECT p.v FROM p WHERE p.v IS NOT NULL
   UNION ALL SELECT s.usr FROM p CROSS JOIN dir_members m CROSS JOIN groups_caches h
     CROSS JOIN json_each(h.doc, '$.direct_parents') up CROSS JOIN dir_members s
   WHERE m.domain = p.d AND m.usr = p.v AND h.domain = p.d AND h.id = m.grp
     AND s.domain = p.d AND s.grp = up.value AND s.direct = 1`

export const GROUP_USERS: Record<'direct_users' | 'deep_users', AssembledField> = {
  direct_users: groupUsers(true),
  deep_users: groupUsers(false),
}

export const SUBORDINATES: Record<'sub', AssembledField> = {
  sub: {
    value: (t) => arrayOf(`SELECT ${t}.id AS v UNION SELECT m.usr AS v ${below(t)}`),
    contains: (t) => `${t}.id IN (${above})`,
  },
}
