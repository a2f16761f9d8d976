// A class list ordered by what no index serves, over more records than LIST_SORT_MAX_RECORDS, is
// refused with the index to declare; declaring it (opts.indexes) makes the same list work.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
let classId: string
const BASE = '/rest/v1/model/sb/items'
const q = (v: unknown) => encodeURIComponent(JSON.stringify(v))
beforeAll(async () => {
  t = await testService({ env: { LIST_SORT_MAX_RECORDS: '30' } })
  await t.createDomain('sb.master')
  token = await t.adminIn('sb.master')
  classId = (
    await t.call('POST', '/rest/v1/design/classes', {
      token,
      body: {
        classname: 'sb/items',
        properties: [
          { name: 'kind', data_type: 'string' },
          { name: 'n', data_type: 'long' },
        ],
      },
    })
  ).body.id
  for (let i = 0; i < 40; i++) await t.call('POST', BASE, { token, body: { kind: `k${i % 2}`, n: i } })
})
afterAll(() => t.close())

test('refused beyond the budget, naming the index; unordered lists and small classes are served', async () => {
  const refused = await t.call('GET', `${BASE}?filter=${q({ kind: 'k1' })}&order=${q(['-n'])}&limit=5`, { token })
  expect(refused.status).toBe(400)
  expect(refused.body.error_details).toEqual({ field: 'order', index: ['kind', 'n'] })
  expect(refused.body.error_message).toContain('opts.indexes')
  expect((await t.call('GET', `${BASE}?filter=${q({ kind: 'k1' })}&limit=5`, { token })).status).toBe(200)
  expect((await t.call('GET', `${BASE}?order=${q(['id'])}&limit=5`, { token })).status).toBe(200)
})

test('once the index is declared the same list is served, newest n first', async () => {
  const patched = await t.call('PATCH', `/rest/v1/design/classes/${classId}`, {
    token,
    body: { opts: { indexes: [['kind', 'n']] } },
  })
  expect(patched.status).toBe(200)
  const res = await t.call('GET', `${BASE}?filter=${q({ kind: 'k1' })}&order=${q(['-n'])}&limit=3&mask=n`, { token })
  expect(res.status).toBe(200)
  expect(res.body).toEqual([{ n: 39 }, { n: 37 }, { n: 35 }])
})

test('a list without an order is judged as such, whatever was asked before with the same statement', async () => {
  // a filter served by the index on n leaves id order to a sort; ordered by id, the list's statement
  // is the one without an order: whichever comes first, the ordered one is refused, the other served
  const classname = 'sb/byn'
  await t.call('POST', '/rest/v1/design/classes', {
    token,
    body: { classname, properties: [{ name: 'n', data_type: 'long' }], opts: { indexes: [['n']] } },
  })
  for (let i = 0; i < 40; i++) await t.call('POST', `/rest/v1/model/${classname}`, { token, body: { n: i } })
  const list = (order: string) =>
    t.call('GET', `/rest/v1/model/${classname}?filter=${q(['<', ['property', 'n'], 30])}${order}&limit=5`, { token })
  const statuses = [await list(''), await list(`&order=${q(['id'])}`), await list('')].map((r) => r.status)
  expect(statuses).toEqual([200, 400, 200])
})
