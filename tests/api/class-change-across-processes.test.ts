// Two app processes on one file (APP_PROCESSES > 1), without a KV between them: B learns of A's class
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

test('a value only the changed class accepts: B, not yet knowing of the change, writes it', async () => {
  const made = await a.call('POST', '/rest/v1/design/classes', {
    token: tokA,
    body: { classname: 'flip', properties: [{ name: 'k', data_type: 'string' }] },
  })
  const created = await b.call('POST', '/rest/v1/model/flip', { token: tokB, body: { k: '7' } })
  expect(created.status).toBe(200)
  const changed = await a.call('PATCH', `/rest/v1/design/classes/${made.body.id}`, {
    token: tokA,
    body: { properties: [{ name: 'k', data_type: 'int' }] },
  })
  expect(changed.status).toBe(200)
  // B's rules still say string: the 400 they give is checked against the database's generation first
  const written = await b.call('PATCH', `/rest/v1/model/flip/${created.body.id}`, { token: tokB, body: { k: 6 } })
  expect(written.status).toBe(200)
  expect(written.body.k).toBe(6)
})

test('a class A created: B finds it', async () => {
  await b.call('GET', '/rest/v1/model/items', { token: tokB }) // B holds the classes as they are
  const made = await a.call('POST', '/rest/v1/design/classes', {
    token: tokA,
    body: { classname: 'newer', properties: [{ name: 'x', data_type: 'int' }] },
  })
  expect(made.status).toBe(200)
  const created = await b.call('POST', '/rest/v1/model/newer', { token: tokB, body: { x: 1 } })
  expect(created.status).toBe(200)
  expect((await b.call('GET', '/rest/v1/model/nothing-here', { token: tokB })).status).toBe(404)
})

test('a domain deleted and created again with its id: B does not take its old classes for the new ones', async () => {
  const X = '5b1c0f3e-9a77-4c55-8c1e-0123456789ab'
  const name = 'again.master'
  const master = await a.login(a.config.masterDomain, 'admin', 'admin-Secret_1')
  const make = async (type: string) => {
    const made = await a.call('POST', '/rest/v1/domain/domains', {
      token: master,
      body: { id: X, name, opts: { title: name } },
    })
    expect(made.status).toBe(200)
    const token = await a.adminIn(name)
    const body = {
      id: 'a1b2c3d4-0000-4000-8000-000000000001',
      classname: 'things',
      properties: [{ name: 'n', data_type: type }],
    }
    expect((await a.call('POST', '/rest/v1/design/classes', { token, body })).status).toBe(200)
  }
  await make('int')
  const tokX = await b.adminIn(name)
  expect((await b.call('POST', '/rest/v1/model/things', { token: tokX, body: { n: 1 } })).status).toBe(200)
  expect((await a.call('DELETE', `/rest/v1/domain/domains/${X}`, { token: master })).status).toBe(204)
  await make('string')
  const tokX2 = await b.adminIn(name)
  const refused = await b.call('POST', '/rest/v1/model/things', { token: tokX2, body: { n: 5 } })
  expect(refused.status).toBe(400)
  expect(refused.body.error_details.field).toBe('n')
})

test("a class with expiring records A deleted: B's expiry pass ends without failing, and the next one works", async () => {
  const expiring = (classname: string) =>
    a.call('POST', '/rest/v1/design/classes', {
      token: tokA,
      body: {
        classname,
        properties: [
          { name: 'ts', data_type: 'long' },
          { name: 'ttl', data_type: 'int' },
        ],
        opts: { expires_mode: 'create', expires_ts_property: 'ts', expires_ttl_property: 'ttl' },
      },
    })
  await expiring('lasting') // so the domain still has records that expire
  const made = await expiring('passing')
  expect((await b.call('POST', '/rest/v1/model/passing', { token: tokB, body: { ttl: 1 } })).status).toBe(200)
  expect((await b.call('POST', '/rest/v1/model/lasting', { token: tokB, body: { ttl: 1 } })).status).toBe(200)
  expect((await a.call('DELETE', `/rest/v1/design/classes/${made.body.id}`, { token: tokA })).status).toBe(204)
  b.clock.advance(2000)
  expect(await b.run('model-expiry')).toBe(1) // the lasting class's record; the pass failed on the dropped table
  expect(await b.run('model-expiry')).toBe(0)
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
  // (and B found the domain in an earlier write transaction, which must not answer for the next)
  const before = await b.call('POST', '/rest/v1/reference/extobjs', { token: tokB, body: { type: 'early', value: {} } })
  expect(before.status).toBe(200)
  const master = await a.login(a.config.masterDomain, 'admin', 'admin-Secret_1')
  expect((await a.call('DELETE', `/rest/v1/domain/domains/${domainId}`, { token: master })).status).toBe(204)
  const refused = await b.call('POST', '/rest/v1/reference/extobjs', { token: tokB, body: { type: 'late', value: {} } })
  expect(refused.status).toBe(401)
  expect(refused.body.error_message).toContain('no longer exists')
  expect(await a.deps.db.all('SELECT id FROM extobjs WHERE domain = ?', [domainId])).toEqual([])
})
