/** Groups (/rest/v1/domain/groups): nested through `parents`, carrying roles; `members` are the users in them. */
import * as v from 'valibot'
import type { TxStep } from '~storage/db'
import { type Doc, stringsOf } from '~storage/doc'
import { directMembers } from '~storage/directory-edges'
import type { Ctx } from '../context'
import { COMMON_FIELDS, defineEntity, ext, opts, requiredText, text, withDefaults } from '../entities/entity'
import { badRequest } from '../errors'
import { Uuid } from '../values'
import { createsCycle } from './caches'
import { editList, requireIds, requireRoles, strings, unique } from './maintain'
import { refreshCaches } from './refresh'
import { roleList, uuidList } from './schemas'
import { users } from './users'

const sameList = (a: unknown, b: unknown) => JSON.stringify(strings(a)) === JSON.stringify(strings(b))

export const groups = defineEntity({
  name: 'group',
  table: { table: 'groups', objtype: 'group', columns: { code: 'code' } },
  path: '/rest/v1/domain/groups',
  fields: [...COMMON_FIELDS, 'code', 'name', 'description', 'parents', 'roles'],
  listFields: ['id', 'code', 'name', 'description', 'parents', 'roles', 'opts.title', 'ext.lwt', 'ext.ct'],
  lookupFields: ['id', 'code'],
  // moving or deleting a group refreshes the caches of all its deep users: seconds for a large one
  long: { patch: 'group change', remove: 'group deletion' },
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
  doc: {
    description: v.string(),
    parents: uuidList,
    roles: roleList,
    members: v.pipe(v.array(Uuid), v.description('the users whose groups hold this one')),
  },
  finish: (doc) => withDefaults(doc, { description: '', parents: [], roles: [] }),
  hooks: {
    *inTransaction(u, change): TxStep<void> {
      const repo = u.ctx.deps.repo(groups.table)
      const domain = u.w.domain
      const id = (change.after ?? change.before)!.id
      const { before, after } = change
      // users whose own groups change; the members of groups that move or change roles follow
      const touched: string[] = []
      if (after) {
        const parents = strings(after.parents)
        yield* requireIds(u, groups, parents, 'parents')
        const all = (yield* repo.all(domain)).map((g) => ({
          id: g.id,
          parents: strings(g.parents),
          roles: [],
        }))
        if (createsCycle(id, parents, all)) throw badRequest('parents: a group cannot be inside itself', 'parents')
        yield* requireRoles(u, after.roles, 'roles')
        const members = change.input?.members
        if (members !== undefined) {
          yield* requireIds(u, users, members, 'members')
          const wanted = new Set(stringsOf(members))
          const current = new Set(yield* directMembers(domain, [id]))
          for (const m of wanted)
            if (!current.has(m)) {
              yield* editList(u, users, m, 'groups', (gs) => unique([...gs, id]))
              touched.push(m)
            }
          for (const m of current)
            if (!wanted.has(m)) {
              yield* editList(u, users, m, 'groups', (gs) => gs.filter((g) => g !== id))
              touched.push(m)
            }
        }
      } else {
        // a deleted group leaves its users and its child groups
        for (const m of yield* directMembers(domain, [id])) {
          yield* editList(u, users, m, 'groups', (gs) => gs.filter((g) => g !== id))
          touched.push(m)
        }
        for (const g of yield* repo.idsContaining(domain, 'parents', id)) {
          yield* editList(u, groups, g, 'parents', (ps) => ps.filter((p) => p !== id))
        }
      }
      const graphChanged =
        !before || !after || !sameList(before.parents, after.parents) || !sameList(before.roles, after.roles)
      yield* refreshCaches(u, { users: touched, groups: graphChanged })
    },
    *view(ctx: Ctx, doc): TxStep<Doc> {
      // the group's members are the users whose groups hold it: its direct membership edges
      return { ...doc, members: yield* directMembers(ctx.domain, [doc.id]) }
    },
  },
})
