// GET /rest/v1/journal/changes: search conditions first, then filter, mask, order and paging.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
const ids: string[] = []
let start: string
let end: string
beforeAll(async () => {
  t = await testService()
  token = await t.login('master', 'admin', 'admin-Secret_1')
  t.clock.advance(1) // after the first-start records
  start = new Date(t.clock.now()).toISOString()
  for (const type of ['a', 'b', 'c']) {
    t.clock.advance(1000)
    ids.push(
      (
        await t.call('POST', '/rest/v1/reference/extobjs', {
          token,
          body: { type, opts: { title: type.toUpperCase() } },
        })
      ).body.id,
    )
  }
  t.clock.advance(1000)
  await t.call('PATCH', `/rest/v1/reference/extobjs/${ids[0]}`, { token, body: { opts: { title: 'A2' } } })
  t.clock.advance(1000)
  await t.call('DELETE', `/rest/v1/reference/extobjs/${ids[1]}`, { token })
  end = new Date(t.clock.now()).toISOString()
  t.clock.advance(1000)
})
afterAll(() => t.close())

const changes = (query: Record<string, unknown>) => {
  const qs = Object.entries(query)
    .map(([k, v]) => `${k}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))}`)
    .join('&')
  return t.call('GET', `/rest/v1/journal/changes?${qs}`, { token })
}

describe('search conditions', () => {
  test("a time interval finds every change in it, oldest first, with the spec's fields", async () => {
    const res = await changes({ params: { dtstart: start, dtstop: end } })
    expect(res.status).toBe(200)
    expect(res.body.map((r: any) => [r.cmdtype, r.objid])).toEqual([
      ['create', ids[0]],
      ['create', ids[1]],
      ['create', ids[2]],
      ['update', ids[0]],
      ['delete', ids[1]],
    ])
    const update = res.body[3]
    expect(Object.keys(update).sort()).toEqual([
      'cmdtype',
      'dtutc',
      'fields',
      'modifierid',
      'modifiername',
      'obj',
      'objid',
      'objtype',
    ])
    expect(update).toMatchObject({
      objtype: 'extobj',
      fields: 'opts.title',
      modifiername: 'Administrator',
      obj: { opts: { title: 'A2' } },
    })
    expect(res.body[0].fields).toBeUndefined()
  })

  test('dtstop bounds the interval; other date formats are converted', async () => {
    // the same instant written with a +02:00 offset instead of Z
    const stop = new Date(Date.parse(start) + 2500 + 2 * 3600_000).toISOString().replace('Z', '+02:00')
    const res = await changes({ params: { dtstart: start, dtstop: stop } })
    expect(res.body.map((r: any) => r.objid)).toEqual([ids[0], ids[1]])
  })

  test("objtype with objid finds one object's history; cmdtype narrows it", async () => {
    expect((await changes({ params: { objtype: 'extobj', objid: ids[0] } })).body.map((r: any) => r.cmdtype)).toEqual([
      'create',
      'update',
    ])
    expect((await changes({ params: { objtype: 'extobj', objid: ids[0], cmdtype: 'update' } })).body.length).toBe(1)
  })

  test('objtype with objkey finds keyed entities (settings)', async () => {
    await t.call('PATCH', '/rest/v1/domain/settings/password_policy', { token, body: { value: { min_length: 9 } } })
    const res = await changes({ params: { objtype: 'setting', objkey: 'password_policy' } })
    expect(res.body).toHaveLength(1)
    expect(res.body[0]).toMatchObject({ objid: 'password_policy', obj: { value: { min_length: 9 } } })
  })

  test('params offset and limit select the found set; the outer ones page within it', async () => {
    const found = await changes({ params: { dtstart: start, dtstop: end, offset: 1, limit: 3 } })
    expect(found.body.map((r: any) => r.objid)).toEqual([ids[1], ids[2], ids[0]])
    const paged = await changes({
      params: { dtstart: start, dtstop: end, offset: 1, limit: 3 },
      offset: '1',
      limit: '1',
    })
    expect(paged.body.map((r: any) => r.objid)).toEqual([ids[2]])
  })

  test('without a usable condition the error names the required fields', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'params'],
      [{ params: {} }, 'params'],
      [{ params: { cmdtype: 'create' } }, 'params'],
      [{ params: { objid: ids[0] } }, 'params.objtype'],
      [{ params: { objtype: 'extobj' } }, 'params.objtype'],
      [{ params: { objtype: 'extobj', objid: ids[0], objkey: 'k' } }, 'params.objkey'],
    ]
    for (const [query, field] of cases) {
      const res = await changes(query)
      expect(res.status).toBe(400)
      expect(res.body.error_details.field).toBe(field)
      expect(res.body.error_details.required.length).toBeGreaterThan(0)
    }
  })

  test('malformed conditions are named', async () => {
    const cases: [unknown, string][] = [
      [{ dtstart: 'yesterday' }, 'dtstart'],
      [{ dtstart: start, cmdtype: 'upsert' }, 'cmdtype'],
      [{ objtype: 'extobj', objid: 'nope' }, 'objid'],
      [{ dtstart: start, limit: -1 }, 'limit'],
      [{ dtstart: start, colour: 'red' }, 'colour'],
    ]
    for (const [params, field] of cases) {
      const res = await changes({ params })
      expect(res.status).toBe(400)
      expect(res.body.error_details.field).toBe(field)
    }
    expect((await changes({ params: '{nope' })).body.error_details.field).toBe('params')
  })
})

describe('list parameters over the found records', () => {
  test('filter, mask with obj.*, flat, order', async () => {
    const res = await changes({
      params: { dtstart: start, dtstop: end },
      filter: { cmdtype: 'create' },
      mask: 'objid,obj.type,obj.opts',
      order: ['-obj.type'],
      flat: 'true',
    })
    expect(res.body).toEqual([
      { objid: ids[2], 'obj.type': 'c', 'obj.opts.title': 'C', 'obj.opts.comment': '' },
      { objid: ids[1], 'obj.type': 'b', 'obj.opts.title': 'B', 'obj.opts.comment': '' },
      { objid: ids[0], 'obj.type': 'a', 'obj.opts.title': 'A', 'obj.opts.comment': '' },
    ])
  })
  test('unknown fields in filter, mask or order are refused', async () => {
    for (const q of [{ filter: { nope: 1 } }, { mask: 'nope' }, { order: ['nope'] }]) {
      expect((await changes({ params: { dtstart: start }, ...q })).status).toBe(400)
    }
  })
})

test("another domain's journal is invisible", async () => {
  await t.createDomain('other.master')
  const other = await t.adminIn('other.master')
  const res = await t.call(
    'GET',
    `/rest/v1/journal/changes?params=${encodeURIComponent(JSON.stringify({ objtype: 'extobj', objid: ids[0] }))}`,
    { token: other },
  )
  expect(res.body).toEqual([])
})
