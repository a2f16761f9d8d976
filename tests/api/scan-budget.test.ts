// A class list filtered by what no index serves, over more records than LIST_SCAN_MAX_RECORDS,
// reads only that many records in list order: a page they fill is answered (exactly as without the
// budget), one they leave short is refused with the index to declare; declaring it serves the list.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
let classId: string
const BASE = '/rest/v1/model/scan/items'
const q = (v: unknown) => encodeURIComponent(JSON.stringify(v))
const list = (query: string) => t.call('GET', `${BASE}?${query}`, { token })
beforeAll(async () => {
  t = await testService({ env: { LIST_SCAN_MAX_RECORDS: '30' } })
  await t.createDomain('scan.master')
  token = await t.adminIn('scan.master')
  classId = (
    await t.call('POST', '/rest/v1/design/classes', {
      token,
      body: {
        classname: 'scan/items',
        properties: [
          { name: 'kind', data_type: 'string' },
          { name: 'n', data_type: 'long' },
        ],
      },
    })
  ).body.id
  // 60 records: every other one common, and a rare kind only at the end (beyond the first 30)
  for (let i = 0; i < 60; i++)
    await t.call('POST', BASE, { token, body: { kind: i === 55 ? 'rare' : `k${i % 2}`, n: i } })
})
afterAll(() => t.close())

test('a common match fills its page within the budget and is answered, pages after it too', async () => {
  const first = await list(`filter=${q({ kind: 'k1' })}&limit=5&mask=n`)
  expect(first.status).toBe(200)
  expect(first.body).toEqual([1, 3, 5, 7, 9].map((n) => ({ n })))
  const after = first.headers.get('x-next-after')!
  const second = await list(`filter=${q({ kind: 'k1' })}&limit=5&mask=n&after=${encodeURIComponent(after)}`)
  expect(second.body).toEqual([11, 13, 15, 17, 19].map((n) => ({ n })))
  expect((await list(`filter=${q(['>', ['property', 'n'], 2])}&limit=3&mask=n`)).body).toEqual([
    { n: 3 },
    { n: 4 },
    { n: 5 },
  ])
})

test('a match the budget does not reach is refused, naming the filter and the index', async () => {
  for (const query of [`filter=${q({ kind: 'rare' })}&limit=5`, `filter=${q({ kind: 'k1' })}&limit=5&offset=20`]) {
    const refused = await list(query)
    expect(refused.status).toBe(400)
    expect(refused.body.error_details).toEqual({ field: 'filter', index: ['kind'] })
    expect(refused.body.error_message).toContain('opts.indexes')
  }
})

test('the budget counts in the list order: descending, or by another order, a late record comes first', async () => {
  for (const order of ['-id', '-n']) {
    // within the first 30 in this order; a page of 1 is full, a page of 5 might go on beyond them
    const rare = await list(`filter=${q({ kind: 'rare' })}&order=${q([order])}&limit=1&mask=n`)
    expect([order, rare.status, rare.body]).toEqual([order, 200, [{ n: 55 }]])
    expect((await list(`filter=${q({ kind: 'rare' })}&order=${q([order])}&limit=5`)).status).toBe(400)
    const common = await list(`filter=${q({ kind: 'k0' })}&order=${q([order])}&limit=3&mask=n`)
    expect([order, common.body]).toEqual([order, [{ n: 58 }, { n: 56 }, { n: 54 }]])
  }
  const early = await list(`filter=${q({ kind: 'k1' })}&order=${q(['n'])}&limit=3&mask=n`)
  expect(early.body).toEqual([{ n: 1 }, { n: 3 }, { n: 5 }])
  expect((await list(`filter=${q({ kind: 'rare' })}&order=${q(['n'])}&limit=3`)).status).toBe(400)
})

test('once the index is declared the same lists are served', async () => {
  const patched = await t.call('PATCH', `/rest/v1/design/classes/${classId}`, {
    token,
    body: { opts: { indexes: [['kind']] } },
  })
  expect(patched.status).toBe(200)
  const rare = await list(`filter=${q({ kind: 'rare' })}&limit=5&mask=n`)
  expect(rare.status).toBe(200)
  expect(rare.body).toEqual([{ n: 55 }])
  expect((await list(`filter=${q({ kind: 'k1' })}&limit=5&offset=20&mask=n`)).body).toEqual(
    [41, 43, 45, 47, 49].map((n) => ({ n })),
  )
})
