// List and LOOKUP shapes the original documents: order directions in any letter case and a single
// order item; `contains` for array fields (multi properties, cache arrays); misspelled parameters
// refused by name; LOOKUP with a number finds a string key and a model record by its id.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
const EXTOBJS = '/rest/v1/reference/extobjs'
const DEALS = '/rest/v1/model/fid/deals'
beforeAll(async () => {
  t = await testService()
  await t.createDomain('fid.master')
  token = await t.adminIn('fid.master')
  for (const type of ['b', 'a', 'c', '5']) await t.call('POST', EXTOBJS, { token, body: { type } })
  await t.call('POST', '/rest/v1/design/classes', {
    token,
    body: {
      classname: 'fid/deals',
      properties: [
        { name: 'code', data_type: 'string' },
        { name: 'tags', data_type: 'string', multi: true },
      ],
      opts: { lookup_properties: ['code'] },
    },
  })
})
afterAll(() => t.close())

const get = (path: string) => t.call('GET', path, { token })
const q = (v: unknown) => encodeURIComponent(JSON.stringify(v))

describe('order', () => {
  test.each([
    ['[{"type":"DESC"}]', ['c', 'b', 'a', '5']],
    ['[{"type":"Asc"}]', ['5', 'a', 'b', 'c']],
    ['"type"', ['5', 'a', 'b', 'c']],
    ['"-type"', ['c', 'b', 'a', '5']],
    ['{"type":"desc"}', ['c', 'b', 'a', '5']],
  ])('order=%s', async (order, expected) => {
    const res = await get(`${EXTOBJS}?mask=type&order=${encodeURIComponent(order)}`)
    expect([order, res.status]).toEqual([order, 200])
    expect(res.body.map((r: { type: string }) => r.type)).toEqual(expected)
  })
  test('a direction that is neither is a 400 naming order', async () => {
    expect((await get(`${EXTOBJS}?order=${q({ type: 'up' })}`)).body.error_details.field).toBe('order')
  })
})

describe('contains', () => {
  test('a multi property holding the value', async () => {
    const a = (await t.call('POST', DEALS, { token, body: { code: 'A', tags: ['hot', 'new'] } })).body
    await t.call('POST', DEALS, { token, body: { code: 'B', tags: ['cold'] } })
    await t.call('POST', DEALS, { token, body: { code: 'C' } })
    const res = await get(`${DEALS}?mask=id&filter=${q(['contains', ['property', 'tags'], 'hot'])}`)
    expect(res.body).toEqual([{ id: a.id }])
    const none = await get(`${DEALS}?mask=id&filter=${q(['not', ['contains', ['property', 'tags'], 'hot']])}`)
    expect(none.body).toHaveLength(2)
  })
  test("a cache's array: the users holding a role deep", async () => {
    const role = await t.call('POST', '/rest/v1/domain/roles', { token, body: { name: 'auditor' } })
    expect(role.status).toBe(200)
    const group = (
      await t.call('POST', '/rest/v1/domain/groups', { token, body: { code: 'audit', roles: ['auditor'] } })
    ).body
    const ann = (await t.call('POST', '/rest/v1/domain/users', { token, body: { login: 'ann', groups: [group.id] } }))
      .body
    await t.call('POST', '/rest/v1/domain/users', { token, body: { login: 'bob' } })
    const res = await get(
      `/rest/v1/domain/users_caches?mask=id&filter=${q(['contains', ['property', 'deep_roles'], 'auditor'])}`,
    )
    expect(res.body).toEqual([{ id: ann.id }])
  })
  test('contains needs a field first', async () => {
    expect((await get(`${DEALS}?filter=${q(['contains', 'tags', 'hot'])}`)).status).toBe(400)
  })
})

describe('parameters', () => {
  test.each([
    [`${EXTOBJS}?limt=5`, 'limt'],
    [`${EXTOBJS}?filtr=${q({ type: 'a' })}`, 'filtr'],
    [`${DEALS}?ofset=1`, 'ofset'],
    [`/rest/v1/journal/changes?params=${q({ dtstart: '2020-01-01' })}&lmit=1`, 'lmit'],
  ])('%s is a 400 naming the parameter', async (path, name) => {
    const res = await get(path)
    expect([res.status, res.body.error_details?.field]).toEqual([400, name])
    expect(res.body.error_message).toContain(`unknown query parameter '${name}'`)
  })
  test('a one-entity GET takes mask and flat only; _ parameters (cache busters) pass', async () => {
    const one = (await get(`${EXTOBJS}?mask=id&limit=1`)).body[0]
    expect((await get(`${EXTOBJS}/${one.id}?maks=id`)).body.error_details.field).toBe('maks')
    expect((await get(`${EXTOBJS}/${one.id}?_=1732400000`)).status).toBe(200)
    expect((await get(`${EXTOBJS}?_=1732400000`)).status).toBe(200)
  })
})

describe('LOOKUP', () => {
  test('a number finds a key stored as text, and text a key stored as a number', async () => {
    const five = await t.call('LOOKUP', EXTOBJS, { token, body: 5 })
    expect(five.status).toBe(200)
    expect(five.body).toHaveLength(1)
    expect((await t.call('LOOKUP', EXTOBJS, { token, body: '5' })).body).toEqual(five.body)
  })
  test('a model record is found by its id as well as by its lookup properties', async () => {
    const rec = (await t.call('POST', DEALS, { token, body: { code: 'LK' } })).body
    expect((await t.call('LOOKUP', DEALS, { token, body: rec.id })).body).toEqual([rec.id])
    expect((await t.call('LOOKUP', DEALS, { token, body: 'LK' })).body).toEqual([rec.id])
  })
})
