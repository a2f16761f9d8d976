/**
 * Roles (/rest/v1/domain/roles): a named set of routes (path pattern + methods) a user or group
 * can hold, inheriting the routes of its parent. `admin` and `user` are built in: `admin` grants
 * everything in its domain, `user` the endpoints every signed-in user may call.
 */
import * as v from 'valibot'
import type { TxStep } from '~storage/db'
import { roleHolders } from '~storage/directory-edges'
import { COMMON_FIELDS, defineEntity, ext, opts, text, withDefaults } from '../entities/entity'
import { ancestorsOf, byParentId } from '../entities/tree'
import type { Unit } from '../entities/unit'
import { badRequest } from '../errors'
import { METHODS } from '../values'
import { NIL_UUID } from '../ids'
import { groups } from './groups'
import { BUILTIN_ROLES, editList, isBuiltinRole } from './maintain'
import { type Affected, refreshCaches } from './refresh'
import { roleName, uuid } from './schemas'
import { users } from './users'

const route = v.strictObject({
  path: v.pipe(
    v.string(),
    v.regex(/^\/[A-Za-z0-9_\-./*:]*$/, 'a path pattern starts with / (use * for one segment, ** for any)'),
    v.maxLength(512),
  ),
  methods: v.pipe(
    v.array(v.picklist([...METHODS, 'WEBSOCKET', '*'], `methods are ${[...METHODS, 'WEBSOCKET'].join(', ')} or *`)),
    v.minLength(1),
  ),
})

const ROUTES = v.pipe(v.array(route), v.maxLength(500))

/**
 * Users and groups holding `from` hold `to` instead, or lose it when `to` is null (journaled
 * updates); answers what the caches must follow. The users holding it are found through their edges.
 */
function* replaceRole(u: Unit, from: string, to: string | null): TxStep<Affected> {
  const swap = (rs: string[]) => (to ? rs.map((r) => (r === from ? to : r)) : rs.filter((r) => r !== from))
  const holders = yield* roleHolders(u.w.domain, from)
  for (const id of holders) yield* editList(u, users, id, 'roles', swap)
  const holding = yield* u.ctx.deps.repo(groups.table).idsContaining(u.w.domain, 'roles', from)
  for (const id of holding) yield* editList(u, groups, id, 'roles', swap)
  return { users: holders, groups: holding.length > 0 }
}

export const roles = defineEntity({
  name: 'role',
  table: { table: 'roles', objtype: 'role', columns: { name: 'name' } },
  path: '/rest/v1/domain/roles',
  fields: [...COMMON_FIELDS, 'name', 'description', 'parent_id', 'routes'],
  listFields: ['id', 'name', 'description', 'parent_id', 'opts.title', 'ext.lwt', 'ext.ct'],
  lookupFields: ['id', 'name'],
  create: {
    name: roleName,
    description: v.optional(text(4096)),
    parent_id: v.optional(uuid),
    routes: v.optional(ROUTES),
    opts: opts(),
    ext,
  },
  doc: { description: v.string(), parent_id: v.pipe(uuid, v.description('the nil UUID: no parent')), routes: ROUTES },
  finish(doc) {
    if (isBuiltinRole(doc.name)) throw badRequest(`name: ${BUILTIN_ROLES.join(' and ')} are built-in roles`, 'name')
    return withDefaults(doc, { description: '', parent_id: NIL_UUID, routes: [] })
  },
  hooks: {
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
  },
})
