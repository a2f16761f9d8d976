/**
 * The groups' rules: parents that exist and make no cycle, roles that exist, members kept as each
 * user's `groups`, a deleted group left by its users and child groups, caches refreshed. The
 * entity's shape is in ./declarations.ts.
 */
import type { TxStep } from '~storage/db'
import { type Doc, stringsOf } from '~storage/doc'
import { directMembers } from '~storage/directory-edges'
import type { Ctx } from '../context'
import { withHooks } from '../entities/entity'
import { badRequest } from '../errors'
import { createsCycle } from './caches'
import { declaredGroups, declaredUsers } from './declarations'
import { editList, requireIds, requireRoles, strings, unique } from './maintain'
import { refreshCaches } from './refresh'

const sameList = (a: unknown, b: unknown) => JSON.stringify(strings(a)) === JSON.stringify(strings(b))

export const groups = withHooks(declaredGroups, {
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
        yield* requireIds(u, declaredUsers, members, 'members')
        const wanted = new Set(stringsOf(members))
        const current = new Set(yield* directMembers(domain, [id]))
        for (const m of wanted)
          if (!current.has(m)) {
            yield* editList(u, declaredUsers, m, 'groups', (gs) => unique([...gs, id]))
            touched.push(m)
          }
        for (const m of current)
          if (!wanted.has(m)) {
            yield* editList(u, declaredUsers, m, 'groups', (gs) => gs.filter((g) => g !== id))
            touched.push(m)
          }
      }
    } else {
      // a deleted group leaves its users and its child groups
      for (const m of yield* directMembers(domain, [id])) {
        yield* editList(u, declaredUsers, m, 'groups', (gs) => gs.filter((g) => g !== id))
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
})
