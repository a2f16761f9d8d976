/** Groups (/rest/v1/domain/groups): nested through `parents`, carrying roles; `members` are the users in them. */
import * as v from 'valibot'
import { allDocs, idsContaining, usersInGroup } from '~storage/directory'
import type { Doc } from '~storage/doc'
import type { TableSpec } from '~storage/repository'
import { COMMON_FIELDS, defineEntity, ext, opts, requiredText, text, withDefaults } from '../entities/entity'
import { badRequest } from '../http/errors'
import { usersTable } from '../identity/directory'
import { createsCycle } from './caches'
import { editList, rebuildCaches, requireIds, requireRoles, strings, unique } from './maintain'
import { roleList, uuidList } from './schemas'

export const groupsTable: TableSpec = { table: 'groups', objtype: 'group', columns: { code: 'code' } }

export const groups = defineEntity({
  name: 'group',
  table: groupsTable,
  fields: [...COMMON_FIELDS, 'code', 'name', 'description', 'parents', 'roles'],
  listFields: ['id', 'code', 'name', 'description', 'parents', 'roles', 'opts.title', 'ext.lwt', 'ext.ct'],
  lookupFields: ['id', 'code'],
  create: {
    code: requiredText(255),
    name: v.optional(text(255)),
    description: v.optional(text(4096)),
    parents: v.optional(uuidList),
    roles: v.optional(roleList),
    /** Users in the group: stored as each user's `groups`, accepted here for convenience. */
    members: v.optional(uuidList),
    opts: opts(),
    ext,
  },
  virtual: ['members'],
  finish: (doc: Doc) => withDefaults(doc, { description: '', parents: [], roles: [] }),
  hooks: {
    *inTransaction(req, w, change) {
      const users = req.deps.repo(usersTable)
      const id = (change.after ?? change.before)!.id as string
      if (change.after) {
        const parents = strings(change.after.parents)
        yield* requireIds('groups', w.domain, parents, 'parents')
        const all = (yield* allDocs('groups', w.domain)).map((g) => ({
          id: g.id as string,
          parents: strings(g.parents),
          roles: [],
        }))
        if (createsCycle(id, parents, all)) throw badRequest('parents: a group cannot be inside itself', 'parents')
        yield* requireRoles(w.domain, change.after.roles, 'roles')
        const members = change.input?.members
        if (members !== undefined) {
          yield* requireIds('users', w.domain, members, 'members')
          const wanted = new Set(members as string[])
          const current = new Set(yield* idsContaining('users', 'groups', w.domain, id))
          for (const u of wanted)
            if (!current.has(u)) yield* editList(users, w, u, 'groups', (gs) => unique([...gs, id]))
          for (const u of current)
            if (!wanted.has(u)) yield* editList(users, w, u, 'groups', (gs) => gs.filter((g) => g !== id))
        }
      } else {
        // a deleted group leaves its users and its child groups
        for (const u of yield* idsContaining('users', 'groups', w.domain, id))
          yield* editList(users, w, u, 'groups', (gs) => gs.filter((g) => g !== id))
        const groupsRepo = req.deps.repo(groupsTable)
        for (const g of yield* idsContaining('groups', 'parents', w.domain, id))
          yield* editList(groupsRepo, w, g, 'parents', (ps) => ps.filter((p) => p !== id))
      }
      yield* rebuildCaches(w.domain)
    },
    async view(req, doc) {
      return { ...doc, members: await usersInGroup(req.deps.db, req.domain, doc.id as string) }
    },
    async afterCommit(req) {
      await req.deps.access.invalidate(req.domain)
    },
  },
})
