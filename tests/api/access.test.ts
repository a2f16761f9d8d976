// Authorization: roles grant routes (path patterns + methods, inherited); admin grants everything in
// its domain; every signed-in user reaches the any-authorized endpoints; changes apply at once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let admin: string
let domain: { id: string; name: string }
beforeAll(async () => {
  t = await testService()
  domain = await t.createDomain('acl.master')
  admin = await t.adminIn('acl.master')
})
afterAll(() => t.close())
const asAdmin = (method: string, path: string, body?: unknown) => t.call(method, path, { token: admin, body })

async function userWith(login: string, body: Record<string, unknown>): Promise<string> {
  await asAdmin('POST', '/rest/v1/domain/users', { login, pwd: `${login}-Pass1`, ...body })
  return t.login('acl.master', login, `${login}-Pass1`)
}

describe('roles grant routes', () => {
  test('a plain user reaches only the any-authorized endpoints', async () => {
    const token = await userWith('plain', { roles: ['user'] })
    for (const path of ['/rest/v1/iam/sessions/current', '/rest/v1/user/info', '/rest/v1/iam/roles']) {
      expect([path, (await t.call('GET', path, { token })).status]).toEqual([path, 200])
    }
    for (const [method, path] of [
      ['GET', '/rest/v1/reference/extobjs'],
      ['GET', '/rest/v1/domain/users'],
      ['POST', '/rest/v1/domain/projects'],
    ]) {
      const res = await t.call(method!, path!, { token, body: {} })
      expect([path, res.status]).toEqual([path, 403])
      expect(res.body.error_message).toContain(`no role of this session grants ${method} ${path}`)
    }
  })

  test('path patterns: * one segment, ** any depth; methods limit what is granted', async () => {
    await asAdmin('POST', '/rest/v1/domain/roles', {
      name: 'projreader',
      routes: [
        { path: '/rest/v1/domain/projects', methods: ['GET', 'LOOKUP'] },
        { path: '/rest/v1/domain/projects/*', methods: ['GET'] },
      ],
    })
    const p = (await asAdmin('POST', '/rest/v1/domain/projects', { code: 'p1', name: 'P1' })).body.id
    const token = await userWith('reader', { roles: ['projreader'] })
    expect((await t.call('GET', '/rest/v1/domain/projects', { token })).status).toBe(200)
    expect((await t.call('GET', `/rest/v1/domain/projects/${p}`, { token })).status).toBe(200)
    expect((await t.call('LOOKUP', '/rest/v1/domain/projects', { token, body: 'p1' })).status).toBe(200)
    expect((await t.call('PATCH', `/rest/v1/domain/projects/${p}`, { token, body: { name: 'x' } })).status).toBe(403)
    expect((await t.call('POST', '/rest/v1/domain/projects', { token, body: { code: 'p2', name: 'P2' } })).status).toBe(
      403,
    )
    expect((await t.call('GET', '/rest/v1/reference/extobjs', { token })).status).toBe(403)
  })

  test('roles come through groups and from parent roles; changes apply to live sessions at once', async () => {
    const base = (
      await asAdmin('POST', '/rest/v1/domain/roles', {
        name: 'refread',
        routes: [{ path: '/rest/v1/reference/**', methods: ['GET'] }],
      })
    ).body.id
    await asAdmin('POST', '/rest/v1/domain/roles', {
      name: 'refwrite',
      parent_id: base,
      routes: [{ path: '/rest/v1/reference/extobjs', methods: ['POST'] }],
    })
    const group = (await asAdmin('POST', '/rest/v1/domain/groups', { code: 'writers' })).body.id
    const token = await userWith('writer', { groups: [group] })
    expect((await t.call('GET', '/rest/v1/reference/extobjs', { token })).status).toBe(403)
    await asAdmin('PATCH', `/rest/v1/domain/groups/${group}`, { roles: ['refwrite'] })
    expect((await t.call('GET', '/rest/v1/reference/extobjs', { token })).status).toBe(200) // inherited from refread
    const created = await t.call('POST', '/rest/v1/reference/extobjs', { token, body: { type: 'w' } })
    expect(created.status).toBe(200)
    expect((await t.call('GET', `/rest/v1/reference/extobjs/${created.body.id}`, { token })).status).toBe(200)
    expect((await t.call('DELETE', `/rest/v1/reference/extobjs/${created.body.id}`, { token })).status).toBe(403)
    await asAdmin('PATCH', `/rest/v1/domain/groups/${group}`, { roles: [] })
    expect((await t.call('GET', '/rest/v1/reference/extobjs', { token })).status).toBe(403)
  })

  test('admin grants everything in its own domain', async () => {
    const token = await userWith('boss', { roles: ['admin'] })
    expect((await t.call('GET', '/rest/v1/domain/users', { token })).status).toBe(200)
    expect((await t.call('GET', '/rest/v1/domain/domains', { token })).status).toBe(403) // a master-domain endpoint
    expect((await t.call('GET', '/rest/v1/iam/sessions/current', { token })).body.domains).toEqual([
      { domain: 'acl.master', is_master: false },
    ])
  })
})

describe('endpoints every signed-in user may call', () => {
  test("GET /iam/roles lists the domain's roles as [{role}]", async () => {
    const roles = (await asAdmin('GET', '/rest/v1/iam/roles')).body
    expect(roles).toContainEqual({ role: 'admin' })
    expect(roles).toContainEqual({ role: 'user' })
    expect(roles).toContainEqual({ role: 'projreader' })
  })

  test('user/info: groups direct or cascaded, roles direct or via groups, SIP accounts, avatar', async () => {
    const top = (
      await asAdmin('POST', '/rest/v1/domain/groups', {
        code: 'top',
        description: 'Top',
        opts: { title: 'Top group' },
        roles: ['projreader'],
      })
    ).body.id
    const mid = (await asAdmin('POST', '/rest/v1/domain/groups', { code: 'mid', parents: [top] })).body.id
    const token = await userWith('ivy', {
      name: 'Ivy',
      roles: ['user'],
      groups: [mid],
      opts: { email: 'ivy@example.com' },
    })
    const ivy = (await t.call('GET', '/rest/v1/iam/sessions/current', { token })).body.user_id
    const sip = (await asAdmin('POST', '/rest/v1/uc/sipusers', { login: 'ivy.sip', phonenumber: '414', iduser: ivy }))
      .body.id
    const info = await t.call('GET', '/rest/v1/user/info', { token })
    expect(info.body).toEqual({
      id: ivy,
      domain: 'acl.master',
      login: 'ivy',
      name: 'Ivy',
      email: 'ivy@example.com',
      avatar: false,
      groups: [
        { id: top, code: 'top', description: 'Top', opts: { title: 'Top group' } },
        { id: mid, code: 'mid', description: '', opts: { title: '' } },
      ],
      roles: ['projreader', 'user'],
      sip_accounts: [{ id: sip, login: 'ivy.sip', phonenumber: '414' }],
    })
  })

  test('PATCH user/info changes the name only, journaled as an update of the user', async () => {
    const token = await userWith('jay', { name: 'Jay' })
    const res = await t.call('PATCH', '/rest/v1/user/info', { token, body: { name: 'Jay Jones' } })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ name: 'Jay Jones' })
    expect((await t.call('GET', '/rest/v1/user/info', { token })).body.name).toBe('Jay Jones')
    expect((await t.journal(domain.id)).at(-1)).toMatchObject({
      cmdtype: 'update',
      objtype: 'user',
      fields: 'name',
      modifiername: 'Jay',
    })
    for (const body of [{ login: 'other' }, { name: 'x', roles: ['admin'] }, { name: 5 }]) {
      expect((await t.call('PATCH', '/rest/v1/user/info', { token, body })).status).toBe(400)
    }
    expect((await t.call('GET', '/rest/v1/user/info', { token })).body.login).toBe('jay')
  })

  test("webapps come from metadata files, filtered by the user's roles", async () => {
    const dir = join(t.dir, 'webapps')
    mkdirSync(dir, { recursive: true })
    const app = (name: string, order: number, roles: string[]) =>
      writeFileSync(
        join(dir, `${name}.json`),
        JSON.stringify({
          name,
          description: `${name} app`,
          order,
          icon: `/icons/${name}.svg`,
          'fa-icon': 'fa-star',
          roles,
          url: `/apps/${name}/`,
          extra: 1,
        }),
      )
    app('console', 1, ['admin'])
    app('projects', 2, ['projreader'])
    app('phone', 3, [])
    writeFileSync(join(dir, 'broken.json'), '{not json')
    t.clock.advance(10_000) // past the metadata reload interval
    const reader = await t.login('acl.master', 'reader', 'reader-Pass1')
    const apps = (await t.call('GET', '/rest/v1/iam/sessions/current', { token: reader })).body.webapps
    expect(apps.map((a: { name: string }) => a.name)).toEqual(['projects', 'phone'])
    expect(apps[0]).toEqual({
      name: 'projects',
      description: 'projects app',
      order: 2,
      icon: '/icons/projects.svg',
      'fa-icon': 'fa-star',
      roles: ['projreader'],
      url: '/apps/projects/',
      extra: 1,
    })
    const adminApps = (await t.call('GET', '/rest/v1/iam/sessions/current', { token: admin })).body.webapps
    expect(adminApps.map((a: { name: string }) => a.name)).toEqual(['console', 'projects', 'phone'])
  })
})

test('a master administrator loses its reach into working domains when it loses admin at home', async () => {
  const master = await t.login('master', 'admin', 'admin-Secret_1')
  const helperId = (
    await t.call('POST', '/rest/v1/domain/users', {
      token: master,
      body: { login: 'helper', pwd: 'helper-Pass1', roles: ['admin'] },
    })
  ).body.id
  const helper = await t.login('master', 'helper', 'helper-Pass1')
  expect(
    (await t.call('PATCH', '/rest/v1/iam/sessions/current', { token: helper, body: { domain: 'acl.master' } })).status,
  ).toBe(204)
  expect((await t.call('GET', '/rest/v1/domain/users', { token: helper })).status).toBe(200)
  await t.call('PATCH', `/rest/v1/domain/users/${helperId}`, { token: master, body: { roles: ['user'] } })
  expect((await t.call('GET', '/rest/v1/domain/users', { token: helper })).status).toBe(403)
})
