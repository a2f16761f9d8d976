// /rest/v1/domain/domains: working domains managed from the master domain.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let master: string
const base = '/rest/v1/domain/domains'
beforeAll(async () => {
  t = await testService()
  master = await t.login('master', 'admin', 'admin-Secret_1')
})
afterAll(() => t.close())
const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token: master, body })

describe('CRUD', () => {
  test("create: the name ends with the master domain's name; defaults; journal in the master domain", async () => {
    const res = await call('POST', base, { name: 'Acme.Master', opts: { title: 'ACME' } })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      name: 'acme.master',
      solution: 'platform',
      opts: { title: 'ACME', isblocked: false },
    })
    expect((await t.journal(t.master.id)).at(-1)).toMatchObject({
      cmdtype: 'create',
      objtype: 'domain',
      objid: res.body.id,
    })
    expect((await call('GET', `${base}/${res.body.id}`)).body).toEqual(res.body)
    expect((await call('LOOKUP', base, 'acme.master')).body).toEqual([res.body.id])
    expect((await call('LOOKUP', base, res.body.id)).body).toEqual([res.body.id])
    const list = await call('GET', base)
    expect(list.body).toEqual([
      {
        id: res.body.id,
        name: 'acme.master',
        solution: 'platform',
        opts: { title: 'ACME', isblocked: false },
        ext: { lwt: res.body.ext.lwt, ct: res.body.ext.ct },
      },
    ])
  })

  test('bad names are refused, naming the field', async () => {
    for (const name of ['acme', 'acme.other', 'master', 'bad_name.master', '-x.master', '']) {
      const res = await call('POST', base, { name })
      expect([name, res.status, res.body.error_details?.field]).toEqual([name, 400, 'name'])
    }
    expect((await call('POST', base, { name: 'acme.master' })).body).toMatchObject({
      error_code: 1409,
      error_details: { field: 'name' },
    })
  })

  test('a domain cannot be renamed', async () => {
    const id = (await call('POST', base, { name: 'fixed.master' })).body.id
    expect((await call('PATCH', `${base}/${id}`, { name: 'moved.master' })).body.error_details).toEqual({
      field: 'name',
    })
    expect((await call('PATCH', `${base}/${id}`, { solution: 'pbx' })).body.solution).toBe('pbx')
  })

  test('the endpoint is served in the master domain only', async () => {
    const token = await t.adminIn('acme.master')
    const res = await t.call('GET', base, { token })
    expect(res.status).toBe(403)
    expect(res.body.error_message).toBe('this endpoint is served in the master domain only')
  })
})

describe('blocking and deleting', () => {
  test('a blocked domain refuses sign-ins and requests; unblocking restores them', async () => {
    const d = (await call('POST', base, { name: 'blocky.master' })).body
    await t.createUser(d.id, 'user1', 'user1-Pass1', ['admin'])
    const before = await t.login('blocky.master', 'user1', 'user1-Pass1')
    await call('PATCH', `${base}/${d.id}`, { opts: { isblocked: true } })
    const login = await t.call('POST', '/rest/v1/iam/sessions', {
      body: { domain: 'blocky.master', login: 'user1', pwd: 'user1-Pass1', session_type: 'token' },
    })
    expect(login.status).toBe(403)
    expect(login.body.error_message).toBe('domain blocky.master is blocked')
    expect((await t.call('GET', '/rest/v1/domain/users', { token: before })).status).toBe(403)
    // a master administrator may still enter it, to manage it
    expect((await t.call('GET', '/rest/v1/domain/users', { token: await t.adminIn('blocky.master') })).status).toBe(200)
    await call('PATCH', `${base}/${d.id}`, { opts: { isblocked: false } })
    expect((await t.call('GET', '/rest/v1/domain/users', { token: before })).status).toBe(200)
  })

  test('deleting a domain deletes everything it holds, journal included; its sessions end', async () => {
    const d = (await call('POST', base, { name: 'doomed.master' })).body
    await t.createUser(d.id, 'user1', 'user1-Pass1', ['admin'])
    const token = await t.login('doomed.master', 'user1', 'user1-Pass1')
    const visitor = await t.adminIn('doomed.master')
    await t.call('POST', '/rest/v1/reference/extobjs', { token, body: { type: 'x' } })
    await t.call('POST', '/rest/v1/domain/projects', { token, body: { code: 'c', name: 'n' } })
    const counted = async () =>
      (
        await t.deps.db.all(
          'SELECT (SELECT count(*) FROM extobjs WHERE domain = ?) + (SELECT count(*) FROM projects WHERE domain = ?) + (SELECT count(*) FROM users WHERE domain = ?) + (SELECT count(*) FROM journal WHERE domain = ?) + (SELECT count(*) FROM users_caches WHERE domain = ?)',
          [d.id, d.id, d.id, d.id, d.id],
        )
      )[0]![0]
    expect(await counted()).toBeGreaterThan(4)
    expect((await call('DELETE', `${base}/${d.id}`)).status).toBe(204)
    expect(await counted()).toBe(0)
    expect((await t.journal(t.master.id)).at(-1)).toMatchObject({ cmdtype: 'delete', objtype: 'domain', objid: d.id })
    const after = await t.call('GET', '/rest/v1/reference/extobjs', { token })
    expect(after.status).toBe(401)
    expect(after.body.error_message).toBe('session not found or expired')
    // a master administrator who had switched into it finds the domain gone
    const visiting = await t.call('GET', '/rest/v1/reference/extobjs', { token: visitor })
    expect([visiting.status, visiting.body.error_message]).toEqual([401, 'the domain of this session no longer exists'])
    expect((await call('GET', `${base}/${d.id}`)).status).toBe(404)
  })
})
