/**
 * The roles' rules: a parent that exists and makes no cycle; the users and groups holding a role
 * follow its renaming and lose it with its deletion, and a deleted role's children lose their
 * parent; caches refreshed. The entity's shape (and the built-in roles) is in ./declarations.ts.
 */
import type { TxStep } from '~storage/db'
import { roleHolders } from '~storage/directory-edges'
import { withHooks } from '../entities/entity'
import { ancestorsOf, byParentId } from '../entities/tree'
import type { Unit } from '../entities/unit'
import { badRequest } from '../errors'
import { NIL_UUID } from '../ids'
import { declaredGroups, declaredRoles, declaredUsers } from './declarations'
import { editList } from './maintain'
import { type Affected, refreshCaches } from './refresh'

/**
 * Users and groups holding `from` hold `to` instead, or lose it when `to` is null (journaled
 * updates); answers what the caches must follow. The users holding it are found through their edges.
 */
function* replaceRole(u: Unit, from: string, to: string | null): TxStep<Affected> {
  const swap = (rs: string[]) => (to ? rs.map((r) => (r === from ? to : r)) : rs.filter((r) => r !== from))
  const holders = yield* roleHolders(u.w.domain, from)
  for (const id of holders) yield* editList(u, declaredUsers, id, 'roles', swap)
  const holding = yield* u.ctx.deps.repo(declaredGroups.table).idsContaining(u.w.domain, 'roles', from)
  for (const id of holding) yield* editList(u, declaredGroups, id, 'roles', swap)
  return { users: holders, groups: holding.length > 0 }
}

export const roles = withHooks(declaredRoles, {
  *inTransaction(u, change): TxStep<void> {
    const repo = u.ctx.deps.repo(roles.table)
    const all = yield* repo.all(u.w.domain)
    const byId = new Map(all.map((r) => [r.id, r]))
    // a role's routes reach open sessions through the access caches, which refreshCaches drops
    let affected: Affected = {}
    if (change.after) {
      const { id, parent_id: parent } = change.after
      if (parent && parent !== NIL_UUID) {
        if (!byId.has(parent)) throw badRequest(`parent_id: there is no role ${parent} in this domain`, 'parent_id')
        if (ancestorsOf(parent, byParentId(byId)).includes(id))
          throw badRequest('parent_id: a role cannot inherit from itself', 'parent_id')
      }
      // holders follow a renamed role
      if (change.before && change.before.name !== change.after.name) {
        affected = yield* replaceRole(u, change.before.name, change.after.name)
      }
    } else {
      const gone = change.before!
      affected = yield* replaceRole(u, gone.name, null)
      for (const child of all.filter((r) => r.parent_id === gone.id)) {
        yield* repo.update(u.w, child.id, (doc) => ({ ...doc, parent_id: NIL_UUID }))
      }
    }
    yield* refreshCaches(u, affected)
  },
})
