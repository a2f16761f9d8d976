// /rest/v1/model/<classname>: records of each storage mode, validated by data type, journaled,
// expiring by the test clock, and announced as modelevents.data_changed.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { PlatformEvent } from '~/events/event'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
let domain: { id: string; name: string }
beforeAll(async () => {
  t = await testService()
  domain = await t.createDomain('rec.master')
  token = await t.adminIn('rec.master')
})
afterAll(() => t.close())
const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token, body })
const defineClass = async (body: Record<string, unknown>) => {
  const res = await call('POST', '/rest/v1/design/classes', body)
  if (res.status !== 200) throw new Error(res.text)
  return res.body
}

describe('runtime records', () => {
  const url = '/rest/v1/model/shop/items'
  beforeAll(async () => {
    await defineClass({
      classname: 'shop/items',
      properties: [
        { name: 'title', data_type: 'string', required: true },
        { name: 'qty', data_type: 'int', default: 1 },
        { name: 'price', data_type: 'float' },
        { name: 'tags', data_type: 'string', multi: true },
        { name: 'state', data_type: 'enum', items: ['new', 'sold'], default: 'new' },
        { name: 'meta', data_type: 'any' },
      ],
      opts: { lookup_properties: ['title'], max_limit: 3 },
    })
  })

  test('create fills defaults; GET, PUT, PATCH, DELETE; each change journaled', async () => {
    const created = await call('POST', url, { title: 'Lamp', price: 9.5, tags: ['home'] })
    expect(created.body).toMatchObject({ title: 'Lamp', qty: 1, price: 9.5, tags: ['home'], state: 'new' })
    const id = created.body.id
    expect((await t.journal(domain.id)).at(-1)).toMatchObject({
      cmdtype: 'create',
      objtype: 'model/shop/items',
      objid: id,
      obj: created.body,
    })
    expect((await call('GET', `${url}/${id}`)).body).toEqual(created.body)
    const patched = await call('PATCH', `${url}/${id}`, { qty: 3, price: null })
    expect(patched.body).toEqual({ id, title: 'Lamp', qty: 3, tags: ['home'], state: 'new' })
    expect((await t.journal(domain.id)).at(-1)).toMatchObject({ cmdtype: 'update', fields: 'price,qty' })
    const replaced = await call('PUT', `${url}/${id}`, { title: 'Desk lamp', meta: { w: 40 } })
    expect(replaced.body).toEqual({ id, title: 'Desk lamp', qty: 1, state: 'new', meta: { w: 40 } })
    expect((await call('DELETE', `${url}/${id}`)).status).toBe(204)
    expect((await call('GET', `${url}/${id}`)).status).toBe(404)
    expect((await t.journal(domain.id)).at(-1)).toMatchObject({ cmdtype: 'delete', objid: id })
  })

  test('values are checked by data type, naming the field; unknown properties are refused', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'title'],
      [{ title: 5 }, 'title'],
      [{ title: 'x', qty: 1.5 }, 'qty'],
      [{ title: 'x', qty: 2 ** 40 }, 'qty'],
      [{ title: 'x', price: 'cheap' }, 'price'],
      [{ title: 'x', tags: 'home' }, 'tags'],
      [{ title: 'x', tags: ['ok', 7] }, 'tags.1'],
      [{ title: 'x', state: 'lost' }, 'state'],
      [{ title: 'x', colour: 'red' }, 'colour'],
      [{ title: 'x', id: 'nope' }, 'id'],
    ]
    for (const [body, field] of cases) {
      const res = await call('POST', url, body)
      expect([field, res.status, res.body.error_details?.field]).toEqual([field, 400, field])
    }
    const r = (await call('POST', url, { title: 'y' })).body
    expect((await call('PATCH', `${url}/${r.id}`, { title: null })).body.error_details).toEqual({ field: 'title' })
    expect(
      (await call('PATCH', `${url}/${r.id}`, { id: '0192a3b4-0000-7000-8000-000000000001' })).body.error_details,
    ).toEqual({ field: 'id' })
  })

  test('every data type', async () => {
    const types = [
      'string',
      'any',
      'long',
      'int',
      'integer',
      'datetime',
      'boolean',
      'time',
      'date',
      'float',
      'uuid',
      'attachment',
    ]
    await defineClass({
      classname: 'types/all',
      properties: [
        ...types.map((dt) => ({ name: `f_${dt}`, data_type: dt })),
        { name: 'f_enum', data_type: 'enum', items: ['x'] },
      ],
    })
    const good = {
      f_string: 's',
      f_any: [1, { a: 2 }],
      f_long: 2 ** 50,
      f_int: -5,
      f_integer: 2 ** 31 - 1,
      f_datetime: '2026-03-01T10:00:00+02:00',
      f_boolean: false,
      f_time: '23:59:59.5',
      f_date: '2026-02-28',
      f_float: 0.25,
      f_uuid: '0192A3B4-0000-7000-8000-000000000001',
      f_attachment: { name: 'a.pdf', size: 10 },
      f_enum: 'x',
    }
    const res = await call('POST', '/rest/v1/model/types/all', good)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      f_datetime: '2026-03-01T08:00:00.000Z',
      f_uuid: '0192a3b4-0000-7000-8000-000000000001',
    })
    const bad: Record<string, unknown> = {
      f_long: 1.1,
      f_int: 2 ** 31,
      f_datetime: 'yesterday',
      f_boolean: 'yes',
      f_time: '25:00',
      f_date: '2026-02-30',
      f_float: 'NaN',
      f_uuid: '123',
      f_attachment: { size: 1 },
      f_enum: 'y',
    }
    for (const [field, value] of Object.entries(bad))
      expect([
        field,
        (await call('POST', '/rest/v1/model/types/all', { [field]: value })).body.error_details?.field,
      ]).toEqual([field, field])
  })

  test('check_required_fill_defaults false: neither defaults nor required are applied', async () => {
    await defineClass({
      classname: 'lax/items',
      properties: [
        { name: 'a', data_type: 'string', required: true },
        { name: 'b', data_type: 'int', default: 7 },
      ],
      opts: { check_required_fill_defaults: false },
    })
    const res = await call('POST', '/rest/v1/model/lax/items', {})
    expect(res.status).toBe(200)
    expect(Object.keys(res.body)).toEqual(['id'])
  })

  test('list: opts.max_limit caps the limit; filter, order, mask; LOOKUP by lookup_properties; CLEAR', async () => {
    for (const title of ['a', 'b', 'c', 'd']) await call('POST', url, { title, qty: title.charCodeAt(0) })
    expect((await call('GET', `${url}?limit=50`)).body).toHaveLength(3)
    const filtered = await call(
      'GET',
      `${url}?filter=${encodeURIComponent('[">",["property","qty"],98]')}&order=["-qty"]&mask=title`,
    )
    expect(filtered.body).toEqual([{ title: 'd' }, { title: 'c' }])
    const id = (await call('LOOKUP', url, 'b')).body
    expect(id).toHaveLength(1)
    expect((await call('GET', `${url}/${id[0]}?mask=qty`)).body).toEqual({ qty: 98 })
    expect((await call('LOOKUP', url, 'zzz')).status).toBe(404)
    expect((await call('GET', `${url}?mask=nope`)).body.error_details.field).toBe('mask')
    expect((await call('GET', `${url}?mask=${'title,'.repeat(200)}`)).status).toBe(400)
    const before = (await t.journal(domain.id)).length
    const cleared = await call('CLEAR', url)
    expect(cleared.body.deleted).toBeGreaterThanOrEqual(4)
    expect((await t.journal(domain.id)).length).toBe(before + cleared.body.deleted)
    expect((await call('GET', url)).body).toEqual([])
  })

  test('opts.max_size and opts.max_mask', async () => {
    await defineClass({
      classname: 'lim/items',
      properties: [
        { name: 'a', data_type: 'string' },
        { name: 'b', data_type: 'string' },
      ],
      opts: { max_size: 100, max_mask: ['id', 'a'] },
    })
    expect((await call('POST', '/rest/v1/model/lim/items', { a: 'x'.repeat(200) })).status).toBe(413)
    const r = (await call('POST', '/rest/v1/model/lim/items', { a: 'x', b: 'y' })).body
    expect((await call('GET', '/rest/v1/model/lim/items')).body).toEqual([{ id: r.id, a: 'x' }])
    expect((await call('GET', '/rest/v1/model/lim/items?mask=b')).status).toBe(400)
    expect((await call('GET', `/rest/v1/model/lim/items/${r.id}`)).body).toEqual({ id: r.id, a: 'x', b: 'y' })
  })
})

describe('history and transactionlog records', () => {
  beforeAll(async () => {
    await defineClass({
      classname: 'calls/history',
      storage_mode: 'history',
      properties: [
        { name: 'at', data_type: 'datetime' },
        { name: 'who', data_type: 'string' },
      ],
      opts: { partition_property: 'at' },
    })
    await defineClass({
      classname: 'calls/log',
      storage_mode: 'transactionlog',
      properties: [
        { name: 'day', data_type: 'date' },
        { name: 'event', data_type: 'string' },
      ],
      opts: { partition_property: 'day' },
    })
  })

  test('the partition property is required; lists need an interval or a date', async () => {
    expect((await call('POST', '/rest/v1/model/calls/history', { who: 'x' })).body.error_details).toEqual({
      field: 'at',
    })
    const a = (await call('POST', '/rest/v1/model/calls/history', { at: '2026-01-05T23:30:00Z', who: 'ann' })).body
    const b = (await call('POST', '/rest/v1/model/calls/history', { at: '2026-01-06T00:10:00+01:00', who: 'bob' })).body // 2026-01-05T23:10Z
    const c = (await call('POST', '/rest/v1/model/calls/history', { at: '2026-01-07T08:00:00Z', who: 'cid' })).body
    expect((await call('GET', '/rest/v1/model/calls/history')).body.error_details).toEqual({ field: 'interval' })
    const ids = (res: { body: { id: string }[] }) => res.body.map((r) => r.id).sort()
    expect(
      ids(
        await call('GET', `/rest/v1/model/calls/history?interval=${encodeURIComponent('["2026-01-05","2026-01-06"]')}`),
      ),
    ).toEqual([a.id, b.id].sort())
    expect(
      ids(
        await call('GET', `/rest/v1/model/calls/history?interval=${encodeURIComponent('["2026-01-05","2026-01-07"]')}`),
      ),
    ).toEqual([a.id, b.id, c.id].sort())
    expect(ids(await call('GET', '/rest/v1/model/calls/history/2026-01-07'))).toEqual([c.id])
    expect((await call('GET', `/rest/v1/model/calls/history/2026-01-05/${a.id}`)).body.who).toBe('ann')
    expect((await call('GET', `/rest/v1/model/calls/history/2026-01-06/${a.id}`)).status).toBe(404)
    // read by id without its date too (the original's docs)
    expect((await call('GET', `/rest/v1/model/calls/history/${a.id}`)).body.who).toBe('ann')
    expect((await call('PATCH', `/rest/v1/model/calls/history/2026-01-05/${a.id}`, { who: 'anne' })).body.who).toBe(
      'anne',
    )
  })

  test('bad intervals are 400 naming interval', async () => {
    for (const interval of ['["2026-01-07","2026-01-05"]', '["2026-01-05"]', 'yesterday', '["a","b"]', '[1,2]']) {
      expect([
        interval,
        (await call('GET', `/rest/v1/model/calls/history?interval=${encodeURIComponent(interval)}`)).body.error_details
          ?.field,
      ]).toEqual([interval, 'interval'])
    }
    expect((await call('GET', '/rest/v1/model/calls/history/2026-02-30')).status).toBe(400)
  })

  test('transactionlog records are appended, never changed', async () => {
    const r = (await call('POST', '/rest/v1/model/calls/log', { day: '2026-01-05', event: 'start' })).body
    expect((await call('GET', `/rest/v1/model/calls/log/2026-01-05/${r.id}`)).body.event).toBe('start')
    expect((await call('PATCH', `/rest/v1/model/calls/log/2026-01-05/${r.id}`, { event: 'x' })).status).toBe(405)
    expect((await call('PUT', `/rest/v1/model/calls/log/2026-01-05/${r.id}`, { day: '2026-01-05' })).status).toBe(405)
    expect((await call('DELETE', `/rest/v1/model/calls/log/2026-01-05/${r.id}`)).status).toBe(405)
  })

  test('an encoded slash cannot name another class than the path says', async () => {
    const res = await call('GET', '/rest/v1/model/shop%2Fitems')
    expect([res.status, res.body.error_details]).toEqual([400, { field: 'path' }])
  })

  test('an interval at the edge of what dates can hold is a 400, not a 500', async () => {
    const res = await call(
      'GET',
      `/rest/v1/model/calls/history?interval=${encodeURIComponent('["2020-01-01","+275760-09-13T00:00:00.000Z"]')}`,
    )
    expect([res.status, res.body.error_details]).toEqual([400, { field: 'interval' }])
  })

  test('runtime classes are not addressed by date; unknown paths are 404', async () => {
    expect((await call('GET', '/rest/v1/model/shop/items/2026-01-05')).body.error_details).toEqual({ field: 'date' })
    expect((await call('GET', '/rest/v1/model/shop/items/not-an-id')).status).toBe(404)
    expect((await call('GET', '/rest/v1/model/no/such/class')).status).toBe(404)
  })
})

describe('expiry', () => {
  test('records end exactly when ts + ttl passes; the sweep journals their deletion by the system', async () => {
    await defineClass({
      classname: 'tmp/tokens',
      properties: [
        { name: 'v', data_type: 'string' },
        { name: 'ts', data_type: 'long' },
        { name: 'ttl', data_type: 'int' },
      ],
      opts: { expires_mode: 'create', expires_ts_property: 'ts', expires_ttl_property: 'ttl' },
    })
    const r = (await call('POST', '/rest/v1/model/tmp/tokens', { v: 'a', ttl: 60 })).body
    expect(r.ts).toBe(t.clock.now())
    const keep = (await call('POST', '/rest/v1/model/tmp/tokens', { v: 'forever' })).body
    t.clock.advance(59_999)
    expect((await call('GET', `/rest/v1/model/tmp/tokens/${r.id}`)).status).toBe(200)
    t.clock.advance(1)
    expect((await call('GET', `/rest/v1/model/tmp/tokens/${r.id}`)).status).toBe(404)
    expect((await call('GET', '/rest/v1/model/tmp/tokens')).body.map((x: { id: string }) => x.id)).toEqual([keep.id])
    expect(await t.run('model-expiry')).toBe(1)
    expect((await t.journal(domain.id)).at(-1)).toMatchObject({
      cmdtype: 'delete',
      objid: r.id,
      modifiername: 'system',
    })
    expect(await t.run('model-expiry')).toBe(0)
  })
})

describe('events', () => {
  test('every change emits modelevents.data_changed with operation, old and new instance, initiator', async () => {
    await defineClass({ classname: 'ev/things', properties: [{ name: 'n', data_type: 'int' }] })
    await t.run('journal-pump')
    const seen: PlatformEvent[] = []
    const stop = t.deps.bus.on(
      (e: PlatformEvent) => e.domain === domain.id && e.data.class === 'ev/things' && seen.push(e),
    )
    const r = (await call('POST', '/rest/v1/model/ev/things', { n: 1 })).body
    await call('PATCH', `/rest/v1/model/ev/things/${r.id}`, { n: 2 })
    await call('DELETE', `/rest/v1/model/ev/things/${r.id}`)
    await t.run('journal-pump')
    for (let i = 0; i < 100 && seen.length < 3; i++) await Bun.sleep(5)
    stop()
    const me = (await t.call('GET', '/rest/v1/iam/sessions/current', { token })).body.user_id
    expect(seen.map((e) => [e.class, e.event, e.data.operation, e.data.old, e.data.new])).toEqual([
      ['modelevents', 'data_changed', 1, { id: r.id, n: 1 }, { id: r.id, n: 1 }],
      ['modelevents', 'data_changed', 2, { id: r.id, n: 1 }, { id: r.id, n: 2 }],
      ['modelevents', 'data_changed', 0, { id: r.id, n: 2 }, { id: r.id, n: 2 }],
    ])
    expect(seen[0]!.data).toMatchObject({ class: 'ev/things', id: r.id, initiator_type: 'user', initiator_id: me })
    expect(seen[0]!.objects).toEqual([{ type: 'class', value: 'ev/things' }])
  })
})

test('another domain sees neither the classes nor the records', async () => {
  await t.createDomain('other.master')
  const other = await t.adminIn('other.master')
  expect((await t.call('GET', '/rest/v1/model/shop/items', { token: other })).status).toBe(404)
  expect((await t.call('LOOKUP', '/rest/v1/design/classes', { token: other, body: 'shop/items' })).status).toBe(404)
  await t.call('POST', '/rest/v1/design/classes', {
    token: other,
    body: { classname: 'shop/items', properties: [{ name: 'title', data_type: 'string' }] },
  })
  const mine = (await call('POST', '/rest/v1/model/shop/items', { title: 'mine' })).body
  expect((await t.call('GET', `/rest/v1/model/shop/items/${mine.id}`, { token: other })).status).toBe(404)
  expect((await t.call('GET', '/rest/v1/model/shop/items', { token: other })).body).toEqual([])
  expect((await t.call('CLEAR', '/rest/v1/model/shop/items', { token: other })).body).toEqual({ deleted: 0 })
  expect((await call('GET', `/rest/v1/model/shop/items/${mine.id}`)).status).toBe(200)
})

test("properties named after Object.prototype's members are required, defaulted and checked like any other", async () => {
  const url = '/rest/v1/model/proto/names'
  await defineClass({
    classname: 'proto/names',
    properties: [
      { name: 'constructor', data_type: 'string', required: true, default: 'dflt' },
      { name: 'toString', data_type: 'int', required: true },
      { name: 'valueOf', data_type: 'string' },
    ],
  })
  expect((await call('POST', url, {})).body.error_details).toEqual({ field: 'toString' })
  expect((await call('POST', url, { toString: 'x' })).body.error_details).toEqual({ field: 'toString' })
  expect((await call('POST', url, { toString: 1, constructor: 2 })).body.error_details).toEqual({
    field: 'constructor',
  })
  const created = await call('POST', url, { toString: 7 })
  expect(created.body).toEqual({ id: created.body.id, constructor: 'dflt', toString: 7 })
  expect((await call('GET', `${url}/${created.body.id}`)).body).toEqual(created.body)
  expect((await call('PATCH', `${url}/${created.body.id}`, { toString: null })).body.error_details).toEqual({
    field: 'toString',
  })
  // as a record's key `__proto__` sets the prototype, so no property may have that name
  const proto = await call('POST', '/rest/v1/design/classes', {
    classname: 'proto/proto',
    properties: [{ name: '__proto__', data_type: 'string' }],
  })
  expect([proto.status, proto.body.error_details]).toEqual([400, { field: 'properties.0.name' }])
})
