// The cache computation on its own: deep groups and roles, relatives, subordination.
import { expect, test } from 'bun:test'
import { computeCaches, createsCycle } from '~/directory/caches'

// company > sales > north; company > support. ann in company, bob in sales, cid in north, dan in support.
const groups = [
  { id: 'company', parents: [], roles: ['staff'] },
  { id: 'sales', parents: ['company'], roles: ['seller'] },
  { id: 'north', parents: ['sales'], roles: [] },
  { id: 'support', parents: ['company'], roles: ['helper'] },
]
const users = [
  { id: 'ann', groups: ['company'], roles: ['admin'] },
  { id: 'bob', groups: ['sales'], roles: [] },
  { id: 'cid', groups: ['north'], roles: ['user'] },
  { id: 'dan', groups: ['support'], roles: [] },
  { id: 'eve', groups: [], roles: [] },
]
const caches = computeCaches(users, groups)
const user = (id: string) => caches.users.find((u) => u.id === id)
const group = (id: string) => caches.groups.find((g) => g.id === id)
const sub = (id: string) => caches.subordinations.find((s) => s.top === id)?.sub

test('a user is in every ancestor of its groups and holds their roles', () => {
  expect(user('cid')).toEqual({
    id: 'cid',
    direct_groups: ['north'],
    direct_roles: ['user'],
    deep_groups: ['company', 'north', 'sales'],
    deep_roles: ['seller', 'staff', 'user'],
  })
  expect(user('eve')).toEqual({ id: 'eve', direct_groups: [], direct_roles: [], deep_groups: [], deep_roles: [] })
})

test('a group knows its relatives, users and roles, direct and deep', () => {
  expect(group('sales')).toEqual({
    id: 'sales',
    direct_parents: ['company'],
    direct_children: ['north'],
    direct_users: ['bob'],
    direct_roles: ['seller'],
    deep_parents: ['company'],
    deep_children: ['north'],
    deep_users: ['bob', 'cid'],
    deep_roles: ['seller', 'staff'],
  })
  expect(group('company')!.deep_users).toEqual(['ann', 'bob', 'cid', 'dan'])
  expect(group('company')!.deep_children).toEqual(['north', 'sales', 'support'])
})

test("subordination: everyone in the groups below one's own groups, and oneself", () => {
  expect(sub('ann')).toEqual(['ann', 'bob', 'cid', 'dan'])
  expect(sub('bob')).toEqual(['bob', 'cid'])
  expect(sub('cid')).toEqual(['cid'])
  expect(sub('eve')).toEqual(['eve'])
})

test('cycles are detected before they are written', () => {
  expect(createsCycle('company', ['north'], groups)).toBe(true)
  expect(createsCycle('north', ['north'], groups)).toBe(true)
  expect(createsCycle('support', ['sales'], groups)).toBe(false)
})
