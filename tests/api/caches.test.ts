// The caches over HTTP: refreshed by every directory change, listed with the common parameters;
// PATCH of a user cache changes only direct_groups and answers the id and the changed members.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
let company: string, sales: string, ann: string, bob: string
beforeAll(async () => {
  t = await testService()
  await t.createDomain('cache.master')
  token = await t.adminIn('cache.master')
  await call('POST', '/rest/v1/domain/roles', { name: 'seller' })
  company = (await call('POST', '/rest/v1/domain/groups', { code: 'company' })).body.id
  sales = (await call('POST', '/rest/v1/domain/groups', { code: 'sales', parents: [company], roles: ['seller'] })).body
    .id
  ann = (await call('POST', '/rest/v1/domain/users', { login: 'ann', groups: [company] })).body.id
  bob = (await call('POST', '/rest/v1/domain/users', { login: 'bob', groups: [sales], roles: ['user'] })).body.id
})
afterAll(() => t.close())
const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token, body })
const q = (v: unknown) => encodeURIComponent(JSON.stringify(v))

test('users_caches: list fields, one item, list parameters', async () => {
  const one = await call('GET', `/rest/v1/domain/users_caches/${bob}`)
  expect(one.body).toEqual({
    id: bob,
    direct_groups: [sales],
    direct_roles: ['user'],
    deep_groups: [company, sales].sort(),
    deep_roles: ['seller', 'user'],
  })
  const list = await call('GET', `/rest/v1/domain/users_caches?mask=id,deep_roles&order=["id"]`)
  expect(list.body).toEqual(
    [
      { id: ann, deep_roles: [] },
      { id: bob, deep_roles: ['seller', 'user'] },
    ].sort((a, b) => (a.id < b.id ? -1 : 1)),
  )
  expect(
    (
      await call(
        'GET',
        `/rest/v1/domain/users_caches?filter=${encodeURIComponent(JSON.stringify({ id: ann }))}&mask=id`,
      )
    ).body,
  ).toEqual([{ id: ann }])
  expect((await call('GET', '/rest/v1/domain/users_caches/0192a3b4-0000-7000-8000-000000000001')).status).toBe(404)
})

test('groups_caches and subordinations_caches (sub includes top)', async () => {
  expect((await call('GET', `/rest/v1/domain/groups_caches/${company}`)).body).toMatchObject({
    direct_children: [sales],
    deep_users: [ann, bob].sort(),
  })
  expect((await call('GET', `/rest/v1/domain/subordinations_caches/${ann}`)).body).toEqual({
    top: ann,
    sub: [ann, bob].sort(),
  })
  expect((await call('GET', `/rest/v1/domain/subordinations_caches/${bob}`)).body).toEqual({ top: bob, sub: [bob] })
  const list = await call('GET', '/rest/v1/domain/subordinations_caches?order=["top"]')
  expect(list.body.map((s: { top: string }) => s.top)).toEqual([ann, bob].sort())
  // the member lists filter like any array field
  const having = async (path: string, field: string, id: string) =>
    (
      await call(
        'GET',
        `/rest/v1/domain/${path}?filter=${encodeURIComponent(JSON.stringify(['contains', ['property', field], id]))}`,
      )
    ).body.map((d: { id?: string; top?: string }) => d.id ?? d.top)
  expect(await having('groups_caches', 'deep_users', bob)).toEqual([company, sales].sort())
  expect(await having('groups_caches', 'direct_users', bob)).toEqual([sales])
  expect(await having('subordinations_caches', 'sub', bob)).toEqual([ann, bob].sort())
  expect(await having('subordinations_caches', 'sub', ann)).toEqual([ann])
  // a mask without the member list answers without it; with it, with it
  const sub = encodeURIComponent(JSON.stringify(['contains', ['property', 'sub'], bob]))
  const tops = await call('GET', `/rest/v1/domain/subordinations_caches?filter=${sub}&mask=top&order=["top"]`)
  expect(tops.body).toEqual([ann, bob].sort().map((top) => ({ top })))
  const users = await call('GET', `/rest/v1/domain/groups_caches?mask=id,deep_users&filter=${q({ id: company })}`)
  expect(users.body).toEqual([{ id: company, deep_users: [ann, bob].sort() }])
})

test('a directory change refreshes the caches at once', async () => {
  await call('PATCH', `/rest/v1/domain/groups/${company}`, { roles: ['seller'] })
  expect((await call('GET', `/rest/v1/domain/users_caches/${ann}`)).body.deep_roles).toEqual(['seller'])
  await call('PATCH', `/rest/v1/domain/groups/${company}`, { roles: [] })
  expect((await call('GET', `/rest/v1/domain/users_caches/${ann}`)).body.deep_roles).toEqual([])
})

test('PATCH users_caches applies direct_groups only and answers the id and the changed members', async () => {
  const res = await call('PATCH', `/rest/v1/domain/users_caches/${ann}`, {
    direct_groups: [sales],
    direct_roles: ['admin'],
    deep_roles: ['x'],
  })
  expect(res.status).toBe(200)
  expect(res.body).toEqual({
    id: ann,
    direct_groups: [sales],
    deep_groups: [company, sales].sort(),
    deep_roles: ['seller'],
  })
  expect((await call('GET', `/rest/v1/domain/users_caches/${ann}`)).body.direct_roles).toEqual([])
  const journal = (
    await t.journal((await t.deps.db.get("SELECT id FROM domains WHERE name = 'cache.master'"))![0] as string)
  ).at(-1)
  expect(journal).toMatchObject({ cmdtype: 'update', objtype: 'user', objid: ann, fields: 'groups' })
  // nothing to change: only the id
  expect((await call('PATCH', `/rest/v1/domain/users_caches/${ann}`, { deep_roles: [] })).body).toEqual({ id: ann })
})

test('PATCH users_caches: id cannot change, groups must exist', async () => {
  expect((await call('PATCH', `/rest/v1/domain/users_caches/${ann}`, { id: bob })).body.error_details).toEqual({
    field: 'id',
  })
  const missing = await call('PATCH', `/rest/v1/domain/users_caches/${ann}`, {
    direct_groups: ['0192a3b4-0000-7000-8000-000000000001'],
  })
  expect(missing.status).toBe(400)
  expect(missing.body.error_details).toEqual({ field: 'direct_groups' })
  expect(
    (await call('PATCH', '/rest/v1/domain/users_caches/0192a3b4-0000-7000-8000-000000000001', { direct_groups: [] }))
      .status,
  ).toBe(404)
})
