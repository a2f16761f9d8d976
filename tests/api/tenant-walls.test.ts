// Tenants are walls: two working domains with look-alike data; nothing one domain's requests do
// (list, get, patch, delete, lookup, filter, journal, caches, references, guessed ids) reaches the other.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

let t: TestService
interface Tenant {
  id: string
  token: string
  ids: Record<string, string>
}
let north: Tenant
let south: Tenant

const COLLECTIONS = {
  project: '/rest/v1/domain/projects',
  extobj: '/rest/v1/reference/extobjs',
  user: '/rest/v1/domain/users',
  group: '/rest/v1/domain/groups',
  role: '/rest/v1/domain/roles',
  sipuser: '/rest/v1/uc/sipusers',
} as const
type Kind = keyof typeof COLLECTIONS
const KEYS: Record<Kind, string> = {
  project: 'p-1',
  extobj: 'shared-type',
  user: 'ann',
  group: 'staff',
  role: 'clerk',
  sipuser: '100',
}

beforeAll(async () => {
  t = await testService()
  for (const name of ['north', 'south'] as const) {
    const d = await t.createDomain(`${name}.master`)
    // the domain's own administrator, not the master one: the walls hold for domain admins
    await t.createUser(d.id, 'boss', 'boss-Pass1', ['admin'])
    const token = await t.login(`${name}.master`, 'boss', 'boss-Pass1')
    const post = async (kind: Kind, body: Record<string, unknown>) =>
      (await t.call('POST', COLLECTIONS[kind], { token, body })).body.id as string
    const ids: Record<string, string> = {}
    ids.role = await post('role', { name: KEYS.role })
    ids.group = await post('group', { code: KEYS.group, roles: [KEYS.role] })
    ids.user = await post('user', { login: KEYS.user, pwd: 'ann-Pass1', groups: [ids.group] })
    ids.project = await post('project', { code: KEYS.project, name: `${name} project` })
    ids.extobj = await post('extobj', { type: KEYS.extobj, value: { secret: `${name}-secret` } })
    ids.sipuser = await post('sipuser', { login: KEYS.sipuser, iduser: ids.user, pwd: `${name}-sip` })
    await t.call('PATCH', '/rest/v1/domain/settings/password_policy', {
      token,
      body: { value: { min_length: name === 'north' ? 10 : 12 } },
    })
    if (name === 'north') north = { id: d.id, token, ids }
    else south = { id: d.id, token, ids }
  }
})
afterAll(() => t.close())

const kinds = Object.keys(COLLECTIONS) as Kind[]
const stored = async (kind: Kind, tenant: Tenant) => {
  const table = {
    project: 'projects',
    extobj: 'extobjs',
    user: 'users',
    group: 'groups',
    role: 'roles',
    sipuser: 'sipusers',
  }[kind]
  const row = await t.deps.db.get(`SELECT doc, version FROM ${table} WHERE domain = ? AND id = ?`, [
    tenant.id,
    tenant.ids[kind]!,
  ])
  return row ? { doc: row[0], version: row[1] } : null
}

describe.each(kinds)('%s', (kind) => {
  const url = COLLECTIONS[kind]
  test("the list holds only the own domain's item, whatever the filter says", async () => {
    const ids = (await t.call('GET', `${url}?mask=id`, { token: north.token })).body.map((x: { id: string }) => x.id)
    expect(ids).toContain(north.ids[kind])
    expect(ids).not.toContain(south.ids[kind])
    const byForeignId = await t.call(
      'GET',
      `${url}?filter=${encodeURIComponent(JSON.stringify({ id: south.ids[kind] }))}`,
      { token: north.token },
    )
    expect(byForeignId.body).toEqual([])
    const either = ['or', ['==', ['property', 'id'], south.ids[kind]], ['!=', ['property', 'id'], 'x']]
    const wide = await t.call('GET', `${url}?filter=${encodeURIComponent(JSON.stringify(either))}&mask=id`, {
      token: north.token,
    })
    expect(wide.body.map((x: { id: string }) => x.id)).not.toContain(south.ids[kind])
  })

  test('a guessed id of the other domain: GET, PATCH and DELETE answer 404 and change nothing', async () => {
    const before = await stored(kind, south)
    const target = `${url}/${south.ids[kind]}`
    expect((await t.call('GET', target, { token: north.token })).status).toBe(404)
    const patchBody = {
      project: { name: 'hijacked' },
      extobj: { type: 'hijacked' },
      user: { name: 'hijacked' },
      group: { description: 'hijacked' },
      role: { description: 'hijacked' },
      sipuser: { phonenumber: '666' },
    }[kind]
    expect((await t.call('PATCH', target, { token: north.token, body: patchBody })).status).toBe(404)
    expect((await t.call('DELETE', target, { token: north.token })).status).toBe(404)
    expect(await stored(kind, south)).toEqual(before)
  })

  test('LOOKUP of the shared key finds only the own item', async () => {
    expect((await t.call('LOOKUP', url, { token: north.token, body: KEYS[kind] })).body).toEqual([north.ids[kind]])
    expect((await t.call('LOOKUP', url, { token: north.token, body: south.ids[kind] })).status).toBe(404)
  })

  test("the journal of one domain does not show the other's object", async () => {
    const params = encodeURIComponent(JSON.stringify({ objtype: kind, objid: south.ids[kind] }))
    expect((await t.call('GET', `/rest/v1/journal/changes?params=${params}`, { token: north.token })).body).toEqual([])
    const all = await t.call(
      'GET',
      `/rest/v1/journal/changes?params=${encodeURIComponent(JSON.stringify({ dtstart: '2000-01-01T00:00:00Z' }))}&mask=objid`,
      { token: north.token },
    )
    expect(all.body.map((r: { objid: string }) => r.objid)).not.toContain(south.ids[kind])
  })

  test("creating with the other domain's id makes a separate item and leaves theirs alone", async () => {
    const before = await stored(kind, south)
    const body = {
      project: { code: 'p-x', name: 'x' },
      extobj: { type: 'x' },
      user: { login: 'x' },
      group: { code: 'x' },
      role: { name: 'xrole' },
      sipuser: { login: 'x' },
    }[kind]
    const res = await t.call('POST', url, { token: north.token, body: { ...body, id: south.ids[kind] } })
    expect(res.status).toBe(200)
    expect(await stored(kind, south)).toEqual(before)
    await t.call('DELETE', `${url}/${south.ids[kind]}`, { token: north.token })
    expect(await stored(kind, south)).toEqual(before)
  })
})

describe('references and derived data', () => {
  test("references to the other domain's users, groups and roles are refused", async () => {
    const tok = north.token
    expect(
      (await t.call('POST', '/rest/v1/domain/users', { token: tok, body: { login: 'z1', groups: [south.ids.group] } }))
        .body.error_details,
    ).toEqual({ field: 'groups' })
    expect(
      (await t.call('POST', '/rest/v1/domain/groups', { token: tok, body: { code: 'z2', parents: [south.ids.group] } }))
        .body.error_details,
    ).toEqual({ field: 'parents' })
    expect(
      (await t.call('POST', '/rest/v1/domain/groups', { token: tok, body: { code: 'z3', members: [south.ids.user] } }))
        .body.error_details,
    ).toEqual({ field: 'members' })
    expect(
      (await t.call('POST', '/rest/v1/domain/roles', { token: tok, body: { name: 'z4', parent_id: south.ids.role } }))
        .body.error_details,
    ).toEqual({ field: 'parent_id' })
    expect(
      (await t.call('POST', '/rest/v1/uc/sipusers', { token: tok, body: { login: 'z5', iduser: south.ids.user } })).body
        .error_details,
    ).toEqual({ field: 'iduser' })
    expect(
      (
        await t.call('PATCH', `/rest/v1/domain/users_caches/${north.ids.user}`, {
          token: tok,
          body: { direct_groups: [south.ids.group] },
        })
      ).status,
    ).toBe(400)
  })

  test('caches of the other domain are out of reach', async () => {
    const tok = north.token
    for (const path of ['users_caches', 'subordinations_caches']) {
      expect((await t.call('GET', `/rest/v1/domain/${path}/${south.ids.user}`, { token: tok })).status).toBe(404)
      const list = await t.call('GET', `/rest/v1/domain/${path}`, { token: tok })
      expect(JSON.stringify(list.body)).not.toContain(south.ids.user)
    }
    expect((await t.call('GET', `/rest/v1/domain/groups_caches/${south.ids.group}`, { token: tok })).status).toBe(404)
    // a member list filtered by the other domain's user finds nothing (its edges are looked up in this domain)
    for (const [path, field] of [
      ['subordinations_caches', 'sub'],
      ['groups_caches', 'deep_users'],
    ]) {
      const filter = encodeURIComponent(JSON.stringify(['contains', ['property', field], south.ids.user]))
      expect((await t.call('GET', `/rest/v1/domain/${path}?filter=${filter}`, { token: tok })).body).toEqual([])
    }
    expect(JSON.stringify((await t.call('GET', '/rest/v1/domain/groups_caches', { token: tok })).body)).not.toContain(
      south.ids.group,
    )
    expect(
      (
        await t.call('PATCH', `/rest/v1/domain/users_caches/${south.ids.user}`, {
          token: tok,
          body: { direct_groups: [] },
        })
      ).status,
    ).toBe(404)
    expect(
      (await t.call('GET', `/rest/v1/domain/users_caches/${south.ids.user}`, { token: south.token })).body
        .direct_groups,
    ).toEqual([south.ids.group])
  })

  test('settings, roles lists, user info and secrets stay in their domain', async () => {
    expect(
      (await t.call('GET', '/rest/v1/domain/settings/password_policy', { token: north.token })).body.value,
    ).toEqual({ min_length: 10 })
    expect(
      (await t.call('GET', '/rest/v1/domain/settings/password_policy', { token: south.token })).body.value,
    ).toEqual({ min_length: 12 })
    const roles = (await t.call('GET', '/rest/v1/iam/roles', { token: north.token })).body
    expect(roles.filter((r: { role: string }) => r.role === KEYS.role)).toHaveLength(1)
    const ann = await t.login('north.master', 'ann', 'ann-Pass1')
    const info = (await t.call('GET', '/rest/v1/user/info', { token: ann })).body
    expect(info.groups.map((g: { id: string }) => g.id)).toEqual([north.ids.group])
    expect(info.sip_accounts.map((a: { id: string }) => a.id)).toEqual([north.ids.sipuser])
    const everything = JSON.stringify(
      await Promise.all(
        Object.values(COLLECTIONS).map(async (u) => (await t.call('GET', u, { token: north.token })).body),
      ),
    )
    expect(everything).not.toContain('south')
    expect(
      (await t.call('GET', `/rest/v1/reference/extobjs/${north.ids.extobj}`, { token: north.token })).body.value,
    ).toEqual({ secret: 'north-secret' })
  })

  test("an account with the same id as one of another domain cannot touch that one's sessions", async () => {
    const masterAdmin = await t.login('master', 'admin', 'admin-Secret_1')
    const adminId = (await t.call('GET', '/rest/v1/iam/sessions/current', { token: masterAdmin })).body.user_id
    const mirror = await t.call('POST', '/rest/v1/domain/users', {
      token: north.token,
      body: { id: adminId, login: 'mirror', pwd: 'mirror-Pass1' },
    })
    expect(mirror.status).toBe(200)
    for (let i = 0; i < 11; i++) await t.login('north.master', 'mirror', 'mirror-Pass1') // past the per-user cap
    expect((await t.call('DELETE', `/rest/v1/domain/users/${adminId}`, { token: north.token })).status).toBe(204)
    expect((await t.call('GET', '/rest/v1/iam/sessions/current', { token: masterAdmin })).status).toBe(200)
  })

  test('a session of one domain cannot switch into the other, nor manage domains', async () => {
    expect(
      (await t.call('PATCH', '/rest/v1/iam/sessions/current', { token: north.token, body: { domain: 'south.master' } }))
        .status,
    ).toBe(403)
    expect((await t.call('GET', '/rest/v1/domain/domains', { token: north.token })).status).toBe(403)
  })
})
