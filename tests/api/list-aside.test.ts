// Lists that read many rows run in the reader thread (LIST_ASIDE_MIN_ROWS): a filter or order no
// index serves over a large table, or member lists assembled for the page. They answer exactly what
// the same list answers on the event loop, within the domain, with what was just written; the rest
// of the lists stay on the event loop.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { extobjs } from '~/reference/extobjs'
import type { Row, SqlValue } from '~storage/db'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
let domain: string
let aside = 0
const q = (v: unknown) => encodeURIComponent(JSON.stringify(v))
const get = (path: string) => t.call('GET', path, { token })
const ROWS = 30

beforeAll(async () => {
  t = await testService({ env: { LIST_ASIDE_MIN_ROWS: '20', LIST_SCAN_MAX_RECORDS: '25' } })
  domain = (await t.createDomain('aside.master')).id
  token = await t.adminIn('aside.master')
  const db = t.service.deps.db
  const original = db.allAside.bind(db)
  db.allAside = (sql: string, args: SqlValue[]): Promise<Row[]> => {
    // the table's size, counted there too, is not the list
    if (!sql.startsWith('SELECT count(*) FROM (SELECT 1 FROM')) aside++
    return original(sql, args)
  }
  for (let i = 0; i < ROWS; i++)
    await t.call('POST', '/rest/v1/reference/extobjs', {
      token,
      body: { type: `k${i % 3}`, value: { n: i }, opts: { title: `t${i}` } },
    })
  await t.call('POST', '/rest/v1/design/classes', {
    token,
    body: { classname: 'aside/items', properties: [{ name: 'n', data_type: 'long' }] },
  })
  for (let i = 0; i < ROWS; i++) await t.call('POST', '/rest/v1/model/aside/items', { token, body: { n: i } })
  // the same values in another domain, which no list of this one may show
  await t.createDomain('other.master')
  const other = await t.adminIn('other.master')
  await t.call('POST', '/rest/v1/reference/extobjs', { token: other, body: { type: 'k0', value: { n: 7 } } })
})
afterAll(() => t.close())

/** The list's answer and whether it ran aside. */
async function listed(path: string) {
  const before = aside
  const res = await get(path)
  expect(res.status).toBe(200)
  return { body: res.body, count: res.headers.get('x-total-count'), aside: aside > before }
}

test('a filter no index serves runs aside, answering what the event loop answers', async () => {
  const filter = q(['>=', ['property', 'value.n'], 25])
  const page = await listed(`/rest/v1/reference/extobjs?filter=${filter}&order=${q(['value.n'])}&count=true`)
  expect(page.aside).toBe(true)
  expect(page.body.map((d: { opts: { title: string } }) => d.opts.title)).toEqual(['t25', 't26', 't27', 't28', 't29'])
  expect(page.count).toBe('5')
  const onLoop = await t.service.deps.repo(extobjs.table).list(domain, {
    filter: { op: '>=', left: { field: 'value.n' }, right: { value: 25 } },
    order: [{ field: 'value.n', desc: false }],
    offset: 0,
    limit: 100,
  })
  expect(page.body.map((d: { id: string }) => d.id)).toEqual(onLoop.map((d) => d.id))
  // written just before: in the next list
  await t.call('POST', '/rest/v1/reference/extobjs', { token, body: { type: 'k9', value: { n: 99 } } })
  const after = await listed(`/rest/v1/reference/extobjs?filter=${filter}&mask=id`)
  expect(after.aside).toBe(true)
  expect(after.body).toHaveLength(6)
  // another domain's row with the same value is not this domain's
  const seven = await listed(`/rest/v1/reference/extobjs?filter=${q({ 'value.n': 7 })}`)
  expect(seven.body).toHaveLength(1)
})

test('indexed filters, plain pages and small tables stay on the event loop', async () => {
  expect((await listed(`/rest/v1/reference/extobjs?filter=${q({ type: 'k1' })}`)).aside).toBe(false)
  expect((await listed('/rest/v1/reference/extobjs?limit=5')).aside).toBe(false)
  // its count reads the domain's rows: aside
  expect(await listed('/rest/v1/reference/extobjs?limit=5&count=true')).toMatchObject({ aside: true, count: '31' })
  // the domain has a handful of roles: a scan of them is cheap
  expect((await listed(`/rest/v1/domain/roles?filter=${q({ description: 'x' })}`)).aside).toBe(false)
})

test('member lists assembled for a page or one cache run aside; a mask without them does not', async () => {
  await t.call('POST', '/rest/v1/domain/groups', { token, body: { code: 'g' } })
  const whole = await listed('/rest/v1/domain/groups_caches')
  expect(whole.aside).toBe(true)
  expect(whole.body[0]).toMatchObject({ direct_users: [], deep_users: [] })
  // one cache read whole assembles its lists aside too
  const one = await listed(`/rest/v1/domain/groups_caches/${whole.body[0].id}`)
  expect(one).toMatchObject({ aside: true, body: whole.body[0] })
  const ids = await listed('/rest/v1/domain/groups_caches?mask=id')
  expect(ids.aside).toBe(false)
  expect(Object.keys(ids.body[0])).toEqual(['id'])
  // filtered by a member over a large table (the test's LIST_ASIDE_MIN_ROWS is 20): aside, mask or not
  for (let i = 0; i < 21; i++) await t.call('POST', '/rest/v1/domain/groups', { token, body: { code: `g${i}` } })
  const byMember = q(['contains', ['property', 'direct_users'], '0192a3b4-0000-7000-8000-000000000001'])
  const filtered = await listed(`/rest/v1/domain/groups_caches?mask=id&filter=${byMember}`)
  expect(filtered).toMatchObject({ aside: true, body: [] })
})

test('a class list no index serves runs aside within its budgets, and is refused beyond them as before', async () => {
  const items = '/rest/v1/model/aside/items'
  const small = await listed(`${items}?filter=${q(['<', ['property', 'n'], 10])}&order=${q(['n'])}&limit=5&mask=n`)
  expect(small.aside).toBe(true)
  expect(small.body).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })))
  const counted = await listed(`${items}?filter=${q(['<', ['property', 'n'], 10])}&limit=5&mask=n&count=true`)
  expect([counted.aside, counted.count, counted.body.length]).toEqual([true, '10', 5])
  // the rare match lies beyond the first 25 records (LIST_SCAN_MAX_RECORDS): refused, naming the index
  const rare = await get(`${items}?filter=${q({ n: 29 })}`)
  expect(rare.status).toBe(400)
  expect(rare.body.error_message).toContain('["n"]')
})
