/**
 * Roles (/rest/v1/domain/roles): a named set of routes (path pattern + methods) a user or group
 * can hold, inheriting the routes of its parent. `admin` and `user` are built in: `admin` grants
 * everything in its domain, `user` the endpoints every signed-in user may call.
 */
import * as v from 'valibot'
import type { TxStep } from '~storage/db'
import { allDocs, idsContaining } from '~storage/directory'
import type { Doc } from '~storage/doc'
import type { WriteContext } from '~storage/journal'
import type { TableSpec } from '~storage/repository'
import { COMMON_FIELDS, defineEntity, ext, opts, text, withDefaults } from '../entities/entity'
import { badRequest } from '../http/errors'
import { NIL_UUID, type Req } from '../http/req'
import { METHODS } from '../http/route'
import { usersTable } from '../identity/directory'
import { groupsTable } from './groups'
import { BUILTIN_ROLES, editList, isBuiltinRole, rebuildCaches } from './maintain'
import { roleName, uuid } from './schemas'

export const rolesTable: TableSpec = { table: 'roles', objtype: 'role', columns: { name: 'name' } }

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

/** Users and groups holding `from` hold `to` instead, or lose it when `to` is null (journaled updates). */
function* replaceRole(req: Req, w: WriteContext, from: string, to: string | null): TxStep<void> {
  const swap = (rs: string[]) => (to ? rs.map((r) => (r === from ? to : r)) : rs.filter((r) => r !== from))
  for (const u of yield* idsContaining('users', 'roles', w.domain, from))
    yield* editList(req.deps.repo(usersTable), w, u, 'roles', swap)
  for (const g of yield* idsContaining('groups', 'roles', w.domain, from))
    yield* editList(req.deps.repo(groupsTable), w, g, 'roles', swap)
}

export const roles = defineEntity({
  name: 'role',
  table: rolesTable,
  fields: [...COMMON_FIELDS, 'name', 'description', 'parent_id', 'routes'],
  listFields: ['id', 'name', 'description', 'parent_id', 'opts.title', 'ext.lwt', 'ext.ct'],
  lookupFields: ['id', 'name'],
  create: {
    name: roleName,
    description: v.optional(text(4096)),
    parent_id: v.optional(uuid),
    routes: v.optional(v.pipe(v.array(route), v.maxLength(500))),
    opts: opts(),
    ext,
  },
  finish(doc: Doc) {
    if (isBuiltinRole(doc.name as string))
      throw badRequest(`name: ${BUILTIN_ROLES.join(' and ')} are built-in roles`, 'name')
    return withDefaults(doc, { description: '', parent_id: NIL_UUID, routes: [] })
  },
  hooks: {
    *inTransaction(req, w, change) {
      const all = yield* allDocs('roles', w.domain)
      const byId = new Map(all.map((r) => [r.id as string, r]))
      if (change.after) {
        const id = change.after.id as string
        const parent = change.after.parent_id as string
        if (parent !== NIL_UUID) {
          if (!byId.has(parent)) throw badRequest(`parent_id: there is no role ${parent} in this domain`, 'parent_id')
          for (
            let p: string | undefined = parent, n = 0;
            p && p !== NIL_UUID && n <= all.length;
            p = byId.get(p)?.parent_id as string, n++
          ) {
            if (p === id) throw badRequest('parent_id: a role cannot inherit from itself', 'parent_id')
          }
        }
        // holders follow a renamed role
        if (change.before && change.before.name !== change.after.name) {
          yield* replaceRole(req, w, change.before.name as string, change.after.name as string)
        }
      } else {
        const gone = change.before!
        yield* replaceRole(req, w, gone.name as string, null)
        for (const child of all.filter((r) => r.parent_id === gone.id)) {
          yield* req.deps.repo(rolesTable).update(w, child.id as string, (doc) => ({ ...doc, parent_id: NIL_UUID }))
        }
      }
      yield* rebuildCaches(w.domain)
    },
    async afterCommit(req) {
      await req.deps.access.invalidate(req.domain)
    },
  },
})
