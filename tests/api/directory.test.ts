// The directory of a working domain: users, groups, roles, SIP accounts. Every write checked in the
// response, the stored row and the journal; references and cascades kept consistent.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MASKED } from '~storage/doc'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
let domain: { id: string; name: string }
beforeAll(async () => {
  t = await testService()
  domain = await t.createDomain('dir.master')
  token = await t.adminIn('dir.master')
})
afterAll(() => t.close())

const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token, body })
const last = async () => (await t.journal(domain.id)).at(-1)!
const row = async (table: string, id: string) => {
  const r = await t.deps.db.get(`SELECT doc FROM ${table} WHERE domain = ? AND id = ?`, [domain.id, id])
  return r ? JSON.parse(r[0] as string) : null
}

describe('users', () => {
  test('create: login, name, email; the password is hashed, never stored in the doc, masked in the journal', async () => {
    const res = await call('POST', '/rest/v1/domain/users', {
      login: 'ann',
      name: 'Ann',
      pwd: 'ann-Pass1',
      opts: { email: 'ann@example.com' },
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      login: 'ann',
      name: 'Ann',
      groups: [],
      roles: [],
      opts: { email: 'ann@example.com' },
    })
    expect(res.body).not.toHaveProperty('pwd')
    expect(await row('users', res.body.id)).toEqual(res.body)
    const hash = (await t.deps.db.get('SELECT pwd_hash FROM users WHERE id = ?', [res.body.id]))![0] as string
    expect(hash).toStartWith('$argon2id$')
    expect(await last()).toMatchObject({
      cmdtype: 'create',
      objtype: 'user',
      objid: res.body.id,
      obj: { login: 'ann', pwd: MASKED },
    })
    expect(JSON.stringify(await t.journal(domain.id))).not.toContain('ann-Pass1')
    expect((await call('GET', `/rest/v1/domain/users/${res.body.id}`)).body).not.toHaveProperty('pwd')
    // and the password works
    expect(await t.login('dir.master', 'ann', 'ann-Pass1')).toBeTruthy()
  })

  test('login is unique in the domain (409 naming login); bad values are named', async () => {
    await call('POST', '/rest/v1/domain/users', { login: 'dup' })
    expect((await call('POST', '/rest/v1/domain/users', { login: 'dup' })).body).toMatchObject({
      error_code: 1409,
      error_details: { field: 'login' },
    })
    const cases: [unknown, string][] = [
      [{}, 'login'],
      [{ login: 'has space' }, 'login'],
      [{ login: 'x', opts: { email: 'not-mail' } }, 'opts.email'],
      [{ login: 'x', roles: ['Bad Role'] }, 'roles.0'],
      [{ login: 'x', roles: ['nonexistent'] }, 'roles'],
      [{ login: 'x', groups: ['0192a3b4-0000-7000-8000-000000000001'] }, 'groups'],
      [{ login: 'x', groups: ['nope'] }, 'groups.0'],
    ]
    for (const [body, field] of cases)
      expect([field, (await call('POST', '/rest/v1/domain/users', body)).body.error_details?.field]).toEqual([
        field,
        field,
      ])
  })

  test('the password policy applies: allowed symbols and minimum length (412, 1501, field pwd)', async () => {
    const symbols = await call('POST', '/rest/v1/domain/users', { login: 'p1', pwd: 'bad pass word' })
    expect(symbols.status).toBe(412)
    expect(symbols.body).toMatchObject({ error_code: 1501, error_details: { field: 'pwd' } })
    const short = await call('POST', '/rest/v1/domain/users', { login: 'p1', pwd: 'Ab1' })
    expect(short.body).toMatchObject({ error_code: 1501, error_details: { field: 'pwd' } })
    expect(short.body.error_message).toContain('at least 8')
  })

  test("a new password ends the account's other sessions; deleting a user ends all of them", async () => {
    const id = (await call('POST', '/rest/v1/domain/users', { login: 'bob', pwd: 'bob-Pass1' })).body.id
    const s1 = await t.login('dir.master', 'bob', 'bob-Pass1')
    const s2 = await t.login('dir.master', 'bob', 'bob-Pass1', 'cookie')
    await call('PATCH', `/rest/v1/domain/users/${id}`, { pwd: 'bob-Pass2' })
    expect(await last()).toMatchObject({ cmdtype: 'update', fields: 'pwd' })
    expect((await t.call('GET', '/rest/v1/user/info', { token: s1 })).status).toBe(401)
    expect((await t.call('GET', '/rest/v1/user/info', { cookie: s2 })).status).toBe(401)
    const s3 = await t.login('dir.master', 'bob', 'bob-Pass2')
    expect((await t.call('GET', '/rest/v1/user/info', { token: s3 })).status).toBe(200)
    expect((await call('DELETE', `/rest/v1/domain/users/${id}`)).status).toBe(204)
    expect((await t.call('GET', '/rest/v1/user/info', { token: s3 })).status).toBe(401)
    expect(await last()).toMatchObject({ cmdtype: 'delete', objtype: 'user', objid: id })
  })
})

describe('groups and roles', () => {
  let parent: string
  let child: string
  let carol: string
  test('nested groups with roles; members are the users whose groups hold the group', async () => {
    await call('POST', '/rest/v1/domain/roles', {
      name: 'auditor',
      routes: [{ path: '/rest/v1/journal/changes', methods: ['GET'] }],
    })
    parent = (await call('POST', '/rest/v1/domain/groups', { code: 'company', roles: ['auditor'] })).body.id
    const c = await call('POST', '/rest/v1/domain/groups', { code: 'sales', parents: [parent] })
    expect(c.body).toMatchObject({ code: 'sales', parents: [parent], roles: [], members: [] })
    child = c.body.id
    carol = (await call('POST', '/rest/v1/domain/users', { login: 'carol', groups: [child] })).body.id
    expect((await call('GET', `/rest/v1/domain/groups/${child}`)).body.members).toEqual([carol])
  })

  test('members given to a group are written to the users (journaled as user updates)', async () => {
    const dave = (await call('POST', '/rest/v1/domain/users', { login: 'dave' })).body.id
    const res = await call('PATCH', `/rest/v1/domain/groups/${child}`, { members: [dave] })
    expect(res.body.members).toEqual([dave])
    expect((await row('users', dave)).groups).toEqual([child])
    expect((await row('users', carol)).groups).toEqual([])
    const records = (await t.journal(domain.id)).slice(-2)
    expect(records.map((r) => [r.objtype, r.objid, r.fields])).toEqual([
      ['user', dave, 'groups'],
      ['user', carol, 'groups'],
    ])
    await call('PATCH', `/rest/v1/domain/groups/${child}`, { members: [carol, dave] })
  })

  test('a group cannot be inside itself; parents and roles must exist', async () => {
    expect((await call('PATCH', `/rest/v1/domain/groups/${parent}`, { parents: [child] })).body.error_details).toEqual({
      field: 'parents',
    })
    expect((await call('PATCH', `/rest/v1/domain/groups/${parent}`, { parents: [parent] })).body.error_details).toEqual(
      { field: 'parents' },
    )
    expect((await call('POST', '/rest/v1/domain/groups', { code: 'x', roles: ['ghost'] })).body.error_details).toEqual({
      field: 'roles',
    })
    expect((await call('POST', '/rest/v1/domain/groups', { code: 'company' })).body).toMatchObject({
      error_code: 1409,
      error_details: { field: 'code' },
    })
  })

  test('roles: built-in names refused, lowercase names, parents must exist and not loop', async () => {
    expect((await call('POST', '/rest/v1/domain/roles', { name: 'admin' })).body.error_details).toEqual({
      field: 'name',
    })
    expect((await call('POST', '/rest/v1/domain/roles', { name: 'Auditor' })).body.error_details).toEqual({
      field: 'name',
    })
    expect(
      (await call('POST', '/rest/v1/domain/roles', { name: 'r1', routes: [{ path: 'no-slash', methods: ['GET'] }] }))
        .body.error_details,
    ).toEqual({ field: 'routes.0.path' })
    expect(
      (await call('POST', '/rest/v1/domain/roles', { name: 'r1', routes: [{ path: '/x', methods: ['FETCH'] }] })).body
        .error_details,
    ).toEqual({ field: 'routes.0.methods.0' })
    const a = (await call('POST', '/rest/v1/domain/roles', { name: 'ra' })).body.id
    const b = (await call('POST', '/rest/v1/domain/roles', { name: 'rb', parent_id: a })).body.id
    expect((await call('PATCH', `/rest/v1/domain/roles/${a}`, { parent_id: b })).body.error_details).toEqual({
      field: 'parent_id',
    })
    expect((await call('LOOKUP', '/rest/v1/domain/roles', 'rb')).body).toEqual([b])
  })

  test('renaming a role renames it for its holders; deleting it removes it from them', async () => {
    const id = (await call('LOOKUP', '/rest/v1/domain/roles', 'auditor')).body[0]
    await call('PATCH', `/rest/v1/domain/roles/${id}`, { name: 'inspector' })
    expect((await row('groups', parent)).roles).toEqual(['inspector'])
    expect((await call('GET', `/rest/v1/domain/users_caches/${carol}`)).body.deep_roles).toEqual(['inspector'])
    await call('DELETE', `/rest/v1/domain/roles/${id}`)
    expect((await row('groups', parent)).roles).toEqual([])
    expect((await call('GET', `/rest/v1/domain/users_caches/${carol}`)).body.deep_roles).toEqual([])
  })

  test('deleting a group takes it out of its users and child groups', async () => {
    await call('DELETE', `/rest/v1/domain/groups/${parent}`)
    expect((await row('groups', child)).parents).toEqual([])
    expect((await call('GET', `/rest/v1/domain/groups_caches/${child}`)).body.deep_parents).toEqual([])
  })
})

describe('SIP accounts', () => {
  test('iduser must name a user of the domain; pwd is shown to administrators only', async () => {
    const user = (await call('POST', '/rest/v1/domain/users', { login: 'erin', pwd: 'erin-Pass1', roles: ['user'] }))
      .body.id
    expect(
      (await call('POST', '/rest/v1/uc/sipusers', { login: '101', iduser: '0192a3b4-0000-7000-8000-000000000001' }))
        .body.error_details,
    ).toEqual({ field: 'iduser' })
    const res = await call('POST', '/rest/v1/uc/sipusers', {
      login: '101',
      phonenumber: '101',
      iduser: user,
      pwd: 'sip-secret',
    })
    expect(res.body).toMatchObject({ login: '101', phonenumber: '101', iduser: user, pwd: 'sip-secret' })
    expect((await call('GET', `/rest/v1/uc/sipusers/${res.body.id}`)).body.pwd).toBe('sip-secret')
    expect(await last()).toMatchObject({ objtype: 'sipuser', obj: { pwd: MASKED } })
    expect((await call('GET', '/rest/v1/uc/sipusers')).body[0]).not.toHaveProperty('pwd')
    // a role that may read SIP accounts still does not see the password
    await call('POST', '/rest/v1/domain/roles', {
      name: 'sipreader',
      routes: [{ path: '/rest/v1/uc/sipusers/*', methods: ['GET'] }],
    })
    await call('PATCH', `/rest/v1/domain/users/${user}`, { roles: ['user', 'sipreader'] })
    const erin = await t.login('dir.master', 'erin', 'erin-Pass1')
    const seen = await t.call('GET', `/rest/v1/uc/sipusers/${res.body.id}`, { token: erin })
    expect(seen.status).toBe(200)
    expect(seen.body).not.toHaveProperty('pwd')
    // deleting the user leaves the account unattached
    await call('DELETE', `/rest/v1/domain/users/${user}`)
    expect((await row('sipusers', res.body.id)).iduser).toBe('00000000-0000-0000-0000-000000000000')
  })

  test('SIP accounts are a working-domain collection', async () => {
    const master = await t.login('master', 'admin', 'admin-Secret_1')
    expect((await t.call('GET', '/rest/v1/uc/sipusers', { token: master })).status).toBe(403)
  })
})
