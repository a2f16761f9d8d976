// /rest/v1/domain/projects: a working-domain collection (refused in the master domain).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
let domain: { id: string; name: string }
const base = '/rest/v1/domain/projects'
beforeAll(async () => {
  t = await testService()
  domain = await t.createDomain('acme.master')
  token = await t.adminIn('acme.master')
})
afterAll(() => t.close())

const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token, body })

test('the master domain does not serve projects: 403 saying which kind does', async () => {
  const masterToken = await t.login('master', 'admin', 'admin-Secret_1')
  const res = await t.call('GET', base, { token: masterToken })
  expect(res.status).toBe(403)
  expect(res.body.error_message).toContain('working domains')
})

describe('CRUD in a working domain', () => {
  test('create, read, list, lookup, patch, delete: responses, rows and journal', async () => {
    const created = await call('POST', base, { code: '5102', name: 'ProjectY', opts: { title: '', comment: '' } })
    expect(created.status).toBe(200)
    const p = created.body
    expect(p).toMatchObject({ code: '5102', name: 'ProjectY', opts: { title: '', comment: '' } })
    expect(await t.deps.db.get('SELECT code FROM projects WHERE domain = ? AND id = ?', [domain.id, p.id])).toEqual([
      '5102',
    ])
    expect((await t.journal(domain.id)).at(-1)).toMatchObject({ cmdtype: 'create', objtype: 'project', objid: p.id })

    expect((await call('GET', `${base}/${p.id}`)).body).toEqual(p)
    expect((await call('GET', base)).body).toEqual([
      { id: p.id, code: '5102', name: 'ProjectY', opts: { title: '' }, ext: { lwt: p.ext.lwt, ct: p.ext.ct } },
    ])
    expect((await call('LOOKUP', base, '5102')).body).toEqual([p.id])
    expect((await call('LOOKUP', base, p.id)).body).toEqual([p.id])

    const patched = await call('PATCH', `${base}/${p.id}`, { name: 'ProjectZ' })
    expect(patched.body).toMatchObject({ id: p.id, code: '5102', name: 'ProjectZ' })
    expect((await t.journal(domain.id)).at(-1)).toMatchObject({ cmdtype: 'update', fields: 'name' })

    expect((await call('DELETE', `${base}/${p.id}`)).status).toBe(204)
    expect(await t.deps.db.get('SELECT 1 FROM projects WHERE id = ?', [p.id])).toBeUndefined()
    expect((await t.journal(domain.id)).at(-1)).toMatchObject({ cmdtype: 'delete', objid: p.id })
  })

  test('code and name are required; code is unique in the domain (409 naming code)', async () => {
    expect((await call('POST', base, { name: 'x' })).body.error_details).toEqual({ field: 'code' })
    expect((await call('POST', base, { code: 'x' })).body.error_details).toEqual({ field: 'name' })
    await call('POST', base, { code: 'dup', name: 'a' })
    const dup = await call('POST', base, { code: 'dup', name: 'b' })
    expect(dup.status).toBe(409)
    expect(dup.body.error_details).toEqual({ field: 'code' })
    const other = (await call('POST', base, { code: 'other', name: 'c' })).body
    const clash = await call('PATCH', `${base}/${other.id}`, { code: 'dup' })
    expect(clash.status).toBe(409)
  })
})
