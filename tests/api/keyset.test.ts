// Keyset paging: a full page carries X-Next-After; ?after= with the same order continues exactly
// after its last row (no row skipped or repeated), whatever the order's directions, ties and nulls.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
const EXTOBJS = '/rest/v1/reference/extobjs'
beforeAll(async () => {
  t = await testService()
  await t.createDomain('keys.master')
  token = await t.adminIn('keys.master')
  for (let i = 0; i < 230; i++) {
    const value = i % 7 === 0 ? {} : { n: i % 11, s: i % 3 === 0 ? null : `s${i % 5}` }
    await t.call('POST', EXTOBJS, { token, body: { type: `t${i % 4}`, value } })
  }
})
afterAll(() => t.close())

async function pages(order: string | null, limit: number): Promise<string[]> {
  const ids: string[] = []
  let after: string | null = null
  for (let n = 0; n < 100; n++) {
    const query = [
      `mask=id`,
      `limit=${limit}`,
      order ? `order=${encodeURIComponent(order)}` : '',
      after ? `after=${after}` : '',
    ]
    const res = await t.request('GET', `${EXTOBJS}?${query.filter(Boolean).join('&')}`, { token })
    expect(res.status).toBe(200)
    const page = (await res.json()) as { id: string }[]
    ids.push(...page.map((r) => r.id))
    after = res.headers.get('x-next-after')
    if (!after) return ids
  }
  throw new Error('paging did not end')
}

test.each([
  [null],
  ['["type"]'],
  ['["-type"]'],
  ['["value.n","-type"]'],
  ['["-value.n"]'],
  ['["value.s","value.n"]'],
  ['[{"value.s":"desc"},"type"]'],
])('order %s: pages of 37 joined are the one list, in its order', async (order) => {
  const whole = await t.call(
    'GET',
    `${EXTOBJS}?mask=id&limit=1000${order ? `&order=${encodeURIComponent(order)}` : ''}`,
    {
      token,
    },
  )
  const expected = whole.body.map((r: { id: string }) => r.id)
  expect(expected).toHaveLength(230)
  expect(await pages(order, 37)).toEqual(expected)
})

test('a cursor that is no cursor is a 400 naming after', async () => {
  for (const bad of ['%%%', Buffer.from('{"a":1}').toString('base64url'), Buffer.from('[[1]]').toString('base64url')]) {
    const res = await t.call('GET', `${EXTOBJS}?after=${bad}`, { token })
    expect([res.status, res.body.error_details.field]).toEqual([400, 'after'])
  }
})
