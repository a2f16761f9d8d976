// Keyset paging over fields that are null or missing in some rows (found by fuzzing): the server's
// own X-Next-After of a descending order whose last row held a NULL was a 500 ("datatype mismatch":
// the cursor's arguments no longer lined up with their placeholders), and a cursor that does not fit
// the order (hand-made, or of another order) was a 500 instead of a 400 naming `after`.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { BadCursor, compileAfter, type OrderItem } from '~storage/query'
import type { SqlValue } from '~storage/db'
import { testService, type TestService } from '../helpers/service'

const PROJECTS = '/rest/v1/domain/projects'
const cursor = (values: unknown[]) => Buffer.from(JSON.stringify(values)).toString('base64url')

test('compileAfter binds exactly one argument per placeholder, whatever the directions and NULLs', () => {
  const resolve = (path: string) => (path === 'id' ? 'id' : `json_extract(doc, '$.${path}')`)
  const values: SqlValue[] = [null, '', 'a', 0]
  for (const [d1, d2] of [
    [false, false],
    [false, true],
    [true, false],
    [true, true],
  ] as const) {
    const order: OrderItem[] = [
      { field: 'a', desc: d1 },
      { field: 'b', desc: d2 },
    ]
    for (const a of values)
      for (const b of values) {
        const args: SqlValue[] = []
        const sql = compileAfter(order, [a, b, 'some-id'], resolve, 'id', args)
        expect([order, a, b, args.length]).toEqual([order, a, b, sql.split('?').length - 1])
      }
  }
})

test('compileAfter refuses a cursor that does not hold one value per order term and the id', () => {
  const order: OrderItem[] = [{ field: 'code', desc: true }]
  for (const after of [[], ['a'], [null], ['a', 'id', 'more']])
    expect(() => compileAfter(order, after, (p) => p, 'id', [])).toThrow(BadCursor)
  // the id in the order is the tie-breaker itself: its value is the last
  expect(() => compileAfter([{ field: 'id', desc: true }], ['x'], (p) => p, 'id', [])).not.toThrow()
})

let t: TestService
let token: string
type Value = string | number | null
/**
 * The values of every project by id: opts.comment (the server stores "" when it is not given) and
 * ext.c, ext.n (missing, JSON null, empty, ties, numbers and text mixed; both read as NULL when
 * missing or null).
 */
const rows = new Map<string, Record<string, Value>>()

beforeAll(async () => {
  t = await testService()
  await t.createDomain('keysetnulls.master')
  token = await t.adminIn('keysetnulls.master')
  const comments = [undefined, 'b', undefined, '', 'a', undefined, 'a', '', 'c']
  const cs = [undefined, 'b', null, '', 'a', undefined, 'a', null, 'c']
  const ns = [undefined, 1, null, 0, 'x', 1, undefined, null, 0]
  for (const [i, comment] of comments.entries()) {
    const ext = { ...(cs[i] === undefined ? {} : { c: cs[i] }), ...(ns[i] === undefined ? {} : { n: ns[i] }) }
    const body = { code: `p${i}`, name: `P${i}`, opts: comment === undefined ? {} : { comment }, ext }
    const res = await t.call('POST', PROJECTS, { token, body })
    expect([res.status, res.body]).toEqual([200, expect.anything()])
    rows.set(res.body.id, { 'opts.comment': comment ?? '', 'ext.c': cs[i] ?? null, 'ext.n': ns[i] ?? null })
  }
})
afterAll(() => t.close())

/** Every page of `limit`, each asked with the X-Next-After of the one before. */
async function pages(order: string, limit: number): Promise<string[]> {
  const ids: string[] = []
  let after: string | null = null
  for (let n = 0; n < 50; n++) {
    const res = await t.request(
      'GET',
      `${PROJECTS}?mask=id&limit=${limit}&order=${encodeURIComponent(order)}${after ? `&after=${after}` : ''}`,
      { token },
    )
    expect([res.status, n]).toEqual([200, n])
    ids.push(...((await res.json()) as { id: string }[]).map((r) => r.id))
    after = res.headers.get('x-next-after')
    if (!after) return ids
  }
  throw new Error('paging did not end')
}

/** SQLite's order of the values: NULL first, then numbers, then text (reversed descending: NULL last). */
function compare(a: Value, b: Value): number {
  const rank = (v: unknown) => (v === null ? 0 : typeof v === 'number' ? 1 : 2)
  if (rank(a) !== rank(b)) return rank(a) - rank(b)
  return a === b ? 0 : (a as string | number) < (b as string | number) ? -1 : 1
}

test.each([
  ['-opts.comment,-ext.zz'], // the fuzzer's: its cursors hold "" then NULL
  ['opts.comment,ext.zz'],
  ['-opts.comment,-ext.c'],
  ['-ext.c'],
  ['ext.c'],
  ['-ext.n,-ext.c'],
  ['ext.n,-ext.c'],
  ['-ext.n,ext.c'],
  ['-ext.zz,-ext.c,ext.n'],
])(
  'order %s: pages of 2 give every row once, in the order, NULLs first ascending and last descending',
  async (order) => {
    const whole = await t.call('GET', `${PROJECTS}?mask=id&limit=1000&order=${encodeURIComponent(order)}`, { token })
    const expected: string[] = whole.body.map((r: { id: string }) => r.id)
    expect(expected.toSorted()).toEqual([...rows.keys()].toSorted())
    // the whole list is in the order asked, as SQLite orders (ties on every field in any order: the id decides)
    const terms = order.split(',').map((f) => ({ desc: f.startsWith('-'), key: f.replace(/^-/, '') }))
    const value = (id: string, key: string) => rows.get(id)![key] ?? null
    for (let i = 1; i < expected.length; i++) {
      const [a, b] = [expected[i - 1]!, expected[i]!]
      const first = terms.map((o) => compare(value(a, o.key), value(b, o.key)) * (o.desc ? -1 : 1)).find((c) => c !== 0)
      expect(first ?? -1).toBeLessThan(0)
    }
    expect(await pages(order, 2)).toEqual(expected)
  },
)

test('a cursor that does not fit the order is a 400 naming after, never a 500', async () => {
  const ownCursor = (await t.request('GET', `${PROJECTS}?order=-opts.comment,-ext.zz&limit=1`, { token })).headers.get(
    'x-next-after',
  )!
  const own = JSON.parse(Buffer.from(ownCursor, 'base64url').toString()) as unknown[]
  expect(own).toHaveLength(3)
  for (const [order, after] of [
    ['-code', 'W10'], // []
    ['-code', 'WyJhIl0'], // ["a"]
    ['-code', 'W251bGxd'], // [null]
    ['code', cursor(['a'])],
    ['-code', cursor(['a', 'x', 'y'])],
    ['-opts.comment,-ext.zz', cursor(own.slice(1))],
    ['-opts.comment', ownCursor], // a cursor of another order
  ]) {
    const res = await t.call('GET', `${PROJECTS}?order=${encodeURIComponent(order!)}&after=${after}`, { token })
    expect([order, after, res.status, res.body.error_code, res.body.error_details?.field]).toEqual([
      order,
      after,
      400,
      1400,
      'after',
    ])
  }
})
