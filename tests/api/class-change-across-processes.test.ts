// Two app processes on one file (WORKERS > 1), without a KV between them: B learns of A's class
// changes only when its write finds, in its own transaction, that the domain's model generation
// moved on. Its records are then written and read with the class as A left it: defaults filled,
// new types checked, a deleted class not found (a 500 "no such table" before). A write B admitted
// for a domain A then deleted is refused, and leaves no row of it.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ManualClock } from '~/clock'
import { testService, type TestService } from '../helpers/service'

let a: TestService
let b: TestService
let tokA: string
let tokB: string
let classId: string
let domainId: string
beforeAll(async () => {
  const clock = new ManualClock(Date.now())
  a = await testService({ kv: 'memory', clock })
  b = await testService({ kv: 'memory', clock, dataDir: a.dir })
  domainId = (await a.createDomain('classes-across.master')).id
  tokA = await a.adminIn('classes-across.master')
  tokB = await b.adminIn('classes-across.master')
  const res = await a.call('POST', '/rest/v1/design/classes', {
    token: tokA,
    body: { classname: 'items', properties: [{ name: 'n', data_type: 'int' }] },
  })
  classId = res.body.id
  // B reads, and so keeps, the class as it is now
  expect((await b.call('POST', '/rest/v1/model/items', { token: tokB, body: { n: 1 } })).status).toBe(200)
})
afterAll(async () => {
  await b.close()
  await a.close()
})

const changeClass = async (body: unknown) =>
  expect((await a.call('PATCH', `/rest/v1/design/classes/${classId}`, { token: tokA, body })).status).toBe(200)

test('a property A added with a default: B fills it', async () => {
  await changeClass({
    properties: [
      { name: 'n', data_type: 'int' },
      { name: 'tag', data_type: 'string', default: 'fresh' },
    ],
  })
  const created = await b.call('POST', '/rest/v1/model/items', { token: tokB, body: { n: 2 } })
  expect(created.status).toBe(200)
  expect(created.body.tag).toBe('fresh')
  const read = await a.call('GET', `/rest/v1/model/items/${created.body.id}`, { token: tokA })
  expect(read.body.tag).toBe('fresh')
})

test("a property's type A changed: B checks values against the new type", async () => {
  const created = await b.call('POST', '/rest/v1/model/items', { token: tokB, body: { n: 3 } })
  await changeClass({
    properties: [
      { name: 'n', data_type: 'string' },
      { name: 'tag', data_type: 'string', default: 'fresh' },
    ],
  })
  const patched = await b.call('PATCH', `/rest/v1/model/items/${created.body.id}`, { token: tokB, body: { n: 4 } })
  expect(patched.status).toBe(400)
  expect(patched.body.error_details.field).toBe('n')
  const written = await b.call('PATCH', `/rest/v1/model/items/${created.body.id}`, { token: tokB, body: { n: 'four' } })
  expect(written.status).toBe(200)
  expect(written.body.n).toBe('four')
})

test('a class A deleted: B finds no class, where it answered 500', async () => {
  const kept = await b.call('POST', '/rest/v1/model/items', { token: tokB, body: { n: 'x' } })
  expect(kept.status).toBe(200)
  expect((await a.call('DELETE', `/rest/v1/design/classes/${classId}`, { token: tokA })).status).toBe(204)
  const refused = await b.call('POST', '/rest/v1/model/items', { token: tokB, body: { n: 'y' } })
  expect(refused.status).toBe(404)
  expect(refused.body.error_message).toContain('no class items')
  expect((await b.call('GET', `/rest/v1/model/items/${kept.body.id}`, { token: tokB })).status).toBe(404)
  expect((await b.call('GET', '/rest/v1/model/items', { token: tokB })).status).toBe(404)
})

test('a domain A deleted: a write B admits afterwards is refused and leaves no row', async () => {
  // B's caches still hold the domain and its session: the write passes admission and meets the transaction
  expect((await b.call('GET', '/rest/v1/reference/extobjs', { token: tokB })).status).toBe(200)
  const master = await a.login(a.config.masterDomain, 'admin', 'admin-Secret_1')
  expect((await a.call('DELETE', `/rest/v1/domain/domains/${domainId}`, { token: master })).status).toBe(204)
  const refused = await b.call('POST', '/rest/v1/reference/extobjs', { token: tokB, body: { type: 'late', value: {} } })
  expect(refused.status).toBe(401)
  expect(refused.body.error_message).toContain('no longer exists')
  expect(await a.deps.db.all('SELECT id FROM extobjs WHERE domain = ?', [domainId])).toEqual([])
})
