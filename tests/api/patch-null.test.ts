// The PATCH rule (docs/api/errors-and-lists.md): top-level fields are replaced, `opts` and `ext` are merged
// one level deep, and a null member of them removes it (for a model class: returns it to its
// default). A null where the field may not be null is a 400 naming it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
let domainId: string
const PROJECTS = '/rest/v1/domain/projects'
const CLASSES = '/rest/v1/design/classes'
beforeAll(async () => {
  t = await testService()
  domainId = (await t.createDomain('patch.master')).id
  token = await t.adminIn('patch.master')
})
afterAll(() => t.close())

const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token, body })
let codes = 0
/** A fresh project with the given opts and ext. */
async function project(opts: Record<string, unknown>, ext?: Record<string, unknown>) {
  const res = await call('POST', PROJECTS, { code: `p${++codes}`, name: 'Project', opts, ext })
  expect(res.status).toBe(200)
  return res.body as { id: string; opts: Record<string, unknown>; ext: Record<string, unknown> }
}
const lastJournal = async () => (await t.journal(domainId)).at(-1)!

describe('opts', () => {
  test('a null member returns to its default (comment: empty) and keeps the others: response, read-back and journal', async () => {
    const p = await project({ title: 'Kept', comment: 'to go' })
    const res = await call('PATCH', `${PROJECTS}/${p.id}`, { opts: { comment: null } })
    expect(res.status).toBe(200)
    expect(res.body.opts).toEqual({ title: 'Kept', comment: '' })
    expect((await call('GET', `${PROJECTS}/${p.id}`)).body.opts).toEqual({ title: 'Kept', comment: '' })
    const j = await lastJournal()
    expect(j).toMatchObject({ cmdtype: 'update', objtype: 'project', objid: p.id, fields: 'opts.comment' })
    expect(j.obj.opts).toEqual({ title: 'Kept', comment: '' })
  })

  test('a member given a value is set and the others stay (merged, not replaced)', async () => {
    const p = await project({ title: 'Old', comment: 'stays' })
    const res = await call('PATCH', `${PROJECTS}/${p.id}`, { opts: { title: 'New' } })
    expect(res.body.opts).toEqual({ title: 'New', comment: 'stays' })
    expect((await lastJournal()).fields).toBe('opts.title')
  })

  test('a null member already at its default changes nothing and journals nothing', async () => {
    const p = await project({ title: 'Only' })
    const before = (await t.journal(domainId)).length
    const res = await call('PATCH', `${PROJECTS}/${p.id}`, { opts: { comment: null } })
    expect(res.status).toBe(200)
    expect(res.body.opts).toEqual({ title: 'Only', comment: '' })
    expect((await t.journal(domainId)).length).toBe(before)
  })

  test('a null member the entity does not know is a 400 naming it', async () => {
    const p = await project({ title: 'x' })
    const res = await call('PATCH', `${PROJECTS}/${p.id}`, { opts: { colour: null } })
    expect([res.status, res.body.error_details]).toEqual([400, { field: 'opts.colour' }])
  })
})

describe('ext', () => {
  test('a null member removes it; the other client members and the server stamps stay', async () => {
    const p = await project({}, { keep: 1, drop: 'x' })
    const res = await call('PATCH', `${PROJECTS}/${p.id}`, { ext: { drop: null } })
    expect(res.status).toBe(200)
    expect(res.body.ext).toEqual({ keep: 1, ct: p.ext.ct, lwt: res.body.ext.lwt })
    expect((await call('GET', `${PROJECTS}/${p.id}`)).body.ext).toEqual(res.body.ext)
    const j = await lastJournal()
    expect(j).toMatchObject({ cmdtype: 'update', objid: p.id, fields: 'ext.drop' })
    expect(j.obj.ext).not.toHaveProperty('drop')
  })

  test('the merge is one level deep: an object member is replaced as a whole', async () => {
    const p = await project({}, { nested: { a: 1, b: 2 } })
    const res = await call('PATCH', `${PROJECTS}/${p.id}`, { ext: { nested: { b: 3 } } })
    expect(res.body.ext.nested).toEqual({ b: 3 })
  })
})

describe('top-level fields', () => {
  test('a null where the field may not be null is a 400 naming it, and changes nothing', async () => {
    const p = await project({ title: 'x' }, { k: 1 })
    for (const field of ['name', 'code', 'opts', 'ext']) {
      const res = await call('PATCH', `${PROJECTS}/${p.id}`, { [field]: null })
      expect([field, res.status, res.body.error_details]).toEqual([field, 400, { field }])
    }
    const read = (await call('GET', `${PROJECTS}/${p.id}`)).body
    expect([read.name, read.opts, read.ext.k]).toEqual(['Project', { title: 'x', comment: '' }, 1])
  })

  test('a field given a value is replaced', async () => {
    const p = await project({})
    const res = await call('PATCH', `${PROJECTS}/${p.id}`, { name: 'Renamed' })
    expect(res.body.name).toBe('Renamed')
    expect((await lastJournal()).fields).toBe('name')
  })
})

describe('model classes', () => {
  test('a null opts member returns it to its default: response, read-back and journal', async () => {
    const created = await call('POST', CLASSES, {
      classname: 'patch/items',
      properties: [{ name: 'kind', data_type: 'string' }],
      opts: { title: 'Items', max_limit: 500, lookup_properties: ['kind'] },
    })
    expect(created.status).toBe(200)
    const id = created.body.id
    const res = await call('PATCH', `${CLASSES}/${id}`, { opts: { max_limit: null, lookup_properties: null } })
    expect(res.status).toBe(200)
    expect(res.body.opts).toMatchObject({ title: 'Items', max_limit: 100, lookup_properties: [] })
    expect((await call('GET', `${CLASSES}/${id}`)).body.opts).toEqual(res.body.opts)
    const j = await lastJournal()
    expect(j).toMatchObject({ cmdtype: 'update', objtype: 'class', objid: id })
    expect(String(j.fields).split(',')).toEqual(['opts.lookup_properties', 'opts.max_limit'])
    expect(j.obj.opts).toMatchObject({ max_limit: 100, lookup_properties: [] })
  })

  test('the defaulted member takes effect: lists are capped by the default limit again', async () => {
    const created = await call('POST', CLASSES, {
      classname: 'patch/limited',
      properties: [{ name: 'n', data_type: 'long' }],
      opts: { max_limit: 2 },
    })
    const id = created.body.id
    for (const n of [1, 2, 3]) await call('POST', '/rest/v1/model/patch/limited', { n })
    expect((await call('GET', '/rest/v1/model/patch/limited?limit=3')).body).toHaveLength(2)
    expect((await call('PATCH', `${CLASSES}/${id}`, { opts: { max_limit: null } })).status).toBe(200)
    expect((await call('GET', '/rest/v1/model/patch/limited?limit=3')).body).toHaveLength(3)
  })
})
