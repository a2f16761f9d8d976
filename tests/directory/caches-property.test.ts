// The caches kept change by change equal the full computation: random directories (users, groups
// nested as a DAG, roles) changed at random through the real write path, and after every change
// each cache row, as GET and lists read it (and `contains` filters on the assembled lists), is
// compared with computeCaches over the directory as it then is.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import fc from 'fast-check'
import { type Ctx, systemCtx } from '~/context'
import { computeCaches } from '~/directory/caches'
import { groupsCaches, subordinationsCaches, usersCaches } from '~/directory/cache-collections'
import { groups } from '~/directory/groups'
import { strings } from '~/directory/maintain'
import { roles } from '~/directory/roles'
import { users } from '~/directory/users'
import type { Entity } from '~/entities/entity'
import { createEntity, patchEntity, removeEntity } from '~/entities/writes'
import { ApiError } from '~/errors'
import type { Doc } from '~storage/doc'
import type { FilterNode } from '~storage/query'
import type { TableSpec } from '~storage/table'
import { testService, type TestService } from '../helpers/service'

let t: TestService
beforeAll(async () => {
  t = await testService({ kv: 'memory', licence: { domains: 1000 } })
})
afterAll(() => t.close())

/** A change, its choices as numbers resolved against the directory when it is applied. */
type Op =
  | { kind: 'createUser'; groups: number[]; roles: number[] }
  | { kind: 'deleteUser'; user: number }
  | { kind: 'setUserGroups'; user: number; groups: number[] }
  | { kind: 'setUserRoles'; user: number; roles: number[] }
  | { kind: 'createGroup'; parents: number[]; roles: number[]; members: number[] }
  | { kind: 'deleteGroup'; group: number }
  | { kind: 'setParents'; group: number; parents: number[] }
  | { kind: 'setGroupRoles'; group: number; roles: number[] }
  | { kind: 'setMembers'; group: number; members: number[] }
  | { kind: 'createRole' }
  | { kind: 'renameRole'; role: number }
  | { kind: 'deleteRole'; role: number }

const pick = fc.nat(1000)
const picks = fc.array(pick, { maxLength: 3 })
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('createUser' as const), groups: picks, roles: picks }) },
  fc.record({ kind: fc.constant('deleteUser' as const), user: pick }),
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('setUserGroups' as const), user: pick, groups: picks }) },
  fc.record({ kind: fc.constant('setUserRoles' as const), user: pick, roles: picks }),
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('createGroup' as const), parents: picks, roles: picks, members: picks }),
  },
  fc.record({ kind: fc.constant('deleteGroup' as const), group: pick }),
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('setParents' as const), group: pick, parents: picks }) },
  fc.record({ kind: fc.constant('setGroupRoles' as const), group: pick, roles: picks }),
  fc.record({ kind: fc.constant('setMembers' as const), group: pick, members: picks }),
  fc.record({ kind: fc.constant('createRole' as const) }),
  fc.record({ kind: fc.constant('renameRole' as const), role: pick }),
  fc.record({ kind: fc.constant('deleteRole' as const), role: pick }),
)

const ids = async (ctx: Ctx, entity: Entity) =>
  (await ctx.deps.db.read(() => ctx.deps.repo(entity.table).all(ctx.domain))).map((d) => d.id as string)

let roleSeq = 0
/** Applies a change; one the service refuses (a cycle of groups) must leave everything as it was. */
async function apply(ctx: Ctx, o: Op): Promise<void> {
  const us = await ids(ctx, users)
  const gs = await ids(ctx, groups)
  const rs = (await ctx.deps.db.read(() => ctx.deps.repo(roles.table).all(ctx.domain))).map((d) => d as Doc)
  const roleNames = [...rs.map((r) => r.name as string), 'admin', 'user']
  const of = <T>(list: T[], n: number) => list[n % list.length]!
  const many = <T>(list: T[], ns: number[]) => (list.length ? [...new Set(ns.map((n) => of(list, n)))] : [])
  try {
    switch (o.kind) {
      case 'createUser':
        await createEntity(ctx, users, {
          login: `u${crypto.randomUUID().slice(0, 8)}`,
          groups: many(gs, o.groups),
          roles: many(roleNames, o.roles),
        })
        return
      case 'deleteUser':
        if (us.length) await removeEntity(ctx, users, of(us, o.user))
        return
      case 'setUserGroups':
        if (us.length) await patchEntity(ctx, users, of(us, o.user), { groups: many(gs, o.groups) })
        return
      case 'setUserRoles':
        if (us.length) await patchEntity(ctx, users, of(us, o.user), { roles: many(roleNames, o.roles) })
        return
      case 'createGroup':
        await createEntity(ctx, groups, {
          code: `g${crypto.randomUUID().slice(0, 8)}`,
          parents: many(gs, o.parents),
          roles: many(roleNames, o.roles),
          members: many(us, o.members),
        })
        return
      case 'deleteGroup':
        if (gs.length) await removeEntity(ctx, groups, of(gs, o.group))
        return
      case 'setParents':
        if (gs.length) await patchEntity(ctx, groups, of(gs, o.group), { parents: many(gs, o.parents) })
        return
      case 'setGroupRoles':
        if (gs.length) await patchEntity(ctx, groups, of(gs, o.group), { roles: many(roleNames, o.roles) })
        return
      case 'setMembers':
        if (gs.length) await patchEntity(ctx, groups, of(gs, o.group), { members: many(us, o.members) })
        return
      case 'createRole':
        await createEntity(ctx, roles, { name: `r${roleSeq++}` })
        return
      case 'renameRole':
        if (rs.length) await patchEntity(ctx, roles, of(rs, o.role).id as string, { name: `r${roleSeq++}` })
        return
      case 'deleteRole':
        if (rs.length) await removeEntity(ctx, roles, of(rs, o.role).id as string)
        return
    }
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 400 && /inside itself/.test(err.message))) throw err
  }
}

const byKey = (key: string) => (a: Doc, b: Doc) => ((a[key] as string) < (b[key] as string) ? -1 : 1)
const everything = { filter: null, order: [], offset: 0, limit: 1000 }
const contains = (field: string, value: string | null): FilterNode => ({ op: 'contains', field, value })

/** Every cache row as GET and the list read it, and what `contains` finds, against computeCaches. */
async function check(ctx: Ctx): Promise<void> {
  const { deps, domain } = ctx
  const read = async (e: Entity) => (await deps.db.read(() => deps.repo(e.table).all(domain))).map((d) => d as Doc)
  const expected = computeCaches(
    (await read(users)).map((d) => ({ id: d.id as string, groups: strings(d.groups), roles: strings(d.roles) })),
    (await read(groups)).map((d) => ({ id: d.id as string, parents: strings(d.parents), roles: strings(d.roles) })),
  )
  const cases: [TableSpec, Doc[], string][] = [
    [usersCaches.table, expected.users, 'id'],
    [groupsCaches.table, expected.groups, 'id'],
    [subordinationsCaches.table, expected.subordinations, 'top'],
  ]
  for (const [table, want, key] of cases) {
    const repo = deps.repo(table)
    want.sort(byKey(key))
    expect({ table: table.table, rows: (await repo.list(domain, everything)).sort(byKey(key)) }).toEqual({
      table: table.table,
      rows: want,
    })
    const one = want.at(-1)
    if (one) expect(await repo.get(domain, one[key] as string)).toEqual(one)
  }
  // the assembled lists answer `contains` (and its negation) from their edges, for every user, for
  // an unknown id and for null
  for (const user of [...expected.users.map((u) => u.id as string), 'nobody', null]) {
    for (const [table, field, key, rows] of [
      [groupsCaches.table, 'direct_users', 'id', expected.groups],
      [groupsCaches.table, 'deep_users', 'id', expected.groups],
      [subordinationsCaches.table, 'sub', 'top', expected.subordinations],
    ] as const) {
      const repo = deps.repo(table)
      const holds = (r: Doc) => user !== null && (r[field] as string[]).includes(user)
      const found = await repo.list(domain, { ...everything, filter: contains(field, user) })
      const notFound = await repo.list(domain, { ...everything, filter: { op: 'not', arg: contains(field, user) } })
      expect({
        field,
        user,
        found: found.map((d) => d[key]).sort(),
        notFound: notFound.map((d) => d[key]).sort(),
      }).toEqual({
        field,
        user,
        found: rows.filter(holds).map((r) => r[key]),
        notFound: rows.filter((r) => !holds(r)).map((r) => r[key]),
      })
    }
  }
}

/** A directory to start from (roles, groups whose parents come first, users in them), then changes. */
const scenario = fc.record({
  roles: fc.integer({ min: 1, max: 5 }),
  groups: fc.array(fc.record({ parents: picks, roles: picks }), { minLength: 2, maxLength: 8 }),
  users: fc.array(fc.record({ groups: picks, roles: picks }), { minLength: 3, maxLength: 15 }),
  changes: fc.array(op, { minLength: 5, maxLength: 30 }),
})

let domainSeq = 0
test('incremental caches equal computeCaches after every change', async () => {
  await fc.assert(
    fc.asyncProperty(scenario, async ({ roles: roleCount, groups: gs, users: us, changes }) => {
      const domain = await t.createDomain(`prop${domainSeq++}.master`)
      const ctx = systemCtx(t.deps, domain.id, 'property')
      for (let i = 0; i < roleCount; i++) await apply(ctx, { kind: 'createRole' })
      for (const g of gs) await apply(ctx, { kind: 'createGroup', ...g, members: [] })
      for (const u of us) await apply(ctx, { kind: 'createUser', ...u })
      await check(ctx)
      for (const o of changes) {
        await apply(ctx, o)
        await check(ctx)
      }
    }),
    { numRuns: 40 },
  )
}, 60_000)
