// /rest/v1/model/<class>/<YYYY-MM-DD>/<id> for partitioned classes: a record lies on the (UTC) day of
// its partition property, and a write addressed to another day does not reach it. A history record
// changes only on its own day; a transactionlog record never changes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
let domain: { id: string; name: string }
beforeAll(async () => {
  t = await testService()
  domain = await t.createDomain('parts.master')
  token = await t.adminIn('parts.master')
  for (const body of [
    {
      classname: 'calls/history',
      storage_mode: 'history',
      properties: [
        { name: 'at', data_type: 'datetime' },
        { name: 'who', data_type: 'string' },
      ],
      opts: { partition_property: 'at' },
    },
    {
      classname: 'visits/history',
      storage_mode: 'history',
      properties: [
        { name: 'day', data_type: 'date' },
        { name: 'who', data_type: 'string' },
      ],
      opts: { partition_property: 'day' },
    },
    {
      classname: 'calls/log',
      storage_mode: 'transactionlog',
      properties: [
        { name: 'day', data_type: 'date' },
        { name: 'event', data_type: 'string' },
      ],
      opts: { partition_property: 'day' },
    },
  ]) {
    const res = await call('POST', '/rest/v1/design/classes', body)
    if (res.status !== 200) throw new Error(res.text)
  }
})
afterAll(() => t.close())

const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token, body })
const journalLength = async () => (await t.journal(domain.id)).length
const lastJournal = async () => (await t.journal(domain.id)).at(-1)!
const history = '/rest/v1/model/calls/history'
/** A history record at 2026-01-05T23:30Z: it lies on 2026-01-05. */
const newCall = async (who: string) => {
  const res = await call('POST', history, { at: '2026-01-05T23:30:00Z', who })
  if (res.status !== 200) throw new Error(res.text)
  return res.body as { id: string; at: string; who: string }
}
const RIGHT = '2026-01-05'
const WRONG = '2026-01-06'

describe('history: a write addressed to another day than the record lies on', () => {
  test('PATCH is 404; the record is unchanged and nothing is journaled', async () => {
    const r = await newCall('ann')
    const before = await journalLength()
    const res = await call('PATCH', `${history}/${WRONG}/${r.id}`, { who: 'mallory' })
    expect([res.status, res.body.error_code]).toEqual([404, 1404])
    expect((await call('GET', `${history}/${RIGHT}/${r.id}`)).body).toEqual(r)
    expect(await journalLength()).toBe(before)
  })

  test('PUT is 404; the record is unchanged and nothing is journaled', async () => {
    const r = await newCall('bob')
    const before = await journalLength()
    const res = await call('PUT', `${history}/${WRONG}/${r.id}`, { at: '2026-01-06T08:00:00Z', who: 'mallory' })
    expect([res.status, res.body.error_code]).toEqual([404, 1404])
    expect((await call('GET', `${history}/${RIGHT}/${r.id}`)).body).toEqual(r)
    expect((await call('GET', `${history}/${WRONG}/${r.id}`)).status).toBe(404)
    expect(await journalLength()).toBe(before)
  })

  test('DELETE is 404; the record is still there and nothing is journaled', async () => {
    const r = await newCall('cid')
    const before = await journalLength()
    const res = await call('DELETE', `${history}/${WRONG}/${r.id}`)
    expect([res.status, res.body.error_code]).toEqual([404, 1404])
    expect((await call('GET', `${history}/${RIGHT}/${r.id}`)).body).toEqual(r)
    expect(await journalLength()).toBe(before)
  })

  test('the day before is as wrong as the day after', async () => {
    const r = await newCall('dan')
    const before = await journalLength()
    const day = '2026-01-04'
    expect((await call('PATCH', `${history}/${day}/${r.id}`, { who: 'x' })).status).toBe(404)
    expect((await call('PUT', `${history}/${day}/${r.id}`, { at: r.at, who: 'x' })).status).toBe(404)
    expect((await call('DELETE', `${history}/${day}/${r.id}`)).status).toBe(404)
    expect((await call('GET', `${history}/${RIGHT}/${r.id}`)).body).toEqual(r)
    expect(await journalLength()).toBe(before)
  })

  test('the day is the UTC day of a datetime: 00:10+01:00 on the 6th lies on the 5th, not the 6th', async () => {
    const r = (await call('POST', history, { at: '2026-01-06T00:10:00+01:00', who: 'eve' })).body
    const before = await journalLength()
    expect((await call('PATCH', `${history}/2026-01-06/${r.id}`, { who: 'x' })).status).toBe(404)
    expect((await call('DELETE', `${history}/2026-01-06/${r.id}`)).status).toBe(404)
    expect(await journalLength()).toBe(before)
    const patched = await call('PATCH', `${history}/2026-01-05/${r.id}`, { who: 'eve2' })
    expect([patched.status, patched.body.who]).toEqual([200, 'eve2'])
  })

  test('a date partition property: PATCH, PUT and DELETE on another day are 404, nothing changes', async () => {
    const url = '/rest/v1/model/visits/history'
    const r = (await call('POST', url, { day: '2026-03-10', who: 'fay' })).body
    const before = await journalLength()
    expect((await call('PATCH', `${url}/2026-03-11/${r.id}`, { who: 'x' })).status).toBe(404)
    expect((await call('PUT', `${url}/2026-03-11/${r.id}`, { day: '2026-03-11', who: 'x' })).status).toBe(404)
    expect((await call('DELETE', `${url}/2026-03-11/${r.id}`)).status).toBe(404)
    expect((await call('GET', `${url}/2026-03-10/${r.id}`)).body).toEqual(r)
    expect(await journalLength()).toBe(before)
  })
})

describe('history: the same writes on the day the record lies on', () => {
  test('PATCH changes the record; it reads back changed; the update is journaled', async () => {
    const r = await newCall('gus')
    const res = await call('PATCH', `${history}/${RIGHT}/${r.id}`, { who: 'gustav' })
    expect([res.status, res.body]).toEqual([200, { ...r, who: 'gustav' }])
    expect((await call('GET', `${history}/${RIGHT}/${r.id}`)).body).toEqual(res.body)
    expect(await lastJournal()).toMatchObject({
      cmdtype: 'update',
      objtype: 'model/calls/history',
      objid: r.id,
      fields: 'who',
      obj: res.body,
    })
  })

  test('PUT replaces the record; it reads back replaced; the update is journaled', async () => {
    const r = await newCall('hal')
    const res = await call('PUT', `${history}/${RIGHT}/${r.id}`, { at: '2026-01-05T10:00:00Z', who: 'hale' })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ id: r.id, at: '2026-01-05T10:00:00.000Z', who: 'hale' })
    expect((await call('GET', `${history}/${RIGHT}/${r.id}`)).body).toEqual(res.body)
    expect(await lastJournal()).toMatchObject({
      cmdtype: 'update',
      objtype: 'model/calls/history',
      objid: r.id,
      fields: 'at,who',
      obj: res.body,
    })
  })

  test('DELETE answers 204; the record is gone; the delete is journaled', async () => {
    const r = await newCall('ida')
    const res = await call('DELETE', `${history}/${RIGHT}/${r.id}`)
    expect([res.status, res.text]).toEqual([204, ''])
    expect((await call('GET', `${history}/${RIGHT}/${r.id}`)).status).toBe(404)
    expect(await lastJournal()).toMatchObject({
      cmdtype: 'delete',
      objtype: 'model/calls/history',
      objid: r.id,
      obj: r,
    })
  })

  test('a PUT that moves the partition time to another day moves the record: later writes go to the new day', async () => {
    const r = await newCall('jo')
    const moved = await call('PUT', `${history}/${RIGHT}/${r.id}`, { at: '2026-01-07T09:00:00Z', who: 'jo' })
    expect(moved.status).toBe(200)
    expect((await call('GET', `${history}/2026-01-07/${r.id}`)).body).toEqual(moved.body)
    expect((await call('GET', `${history}/${RIGHT}/${r.id}`)).status).toBe(404)
    const ids = (await call('GET', `${history}/2026-01-07`)).body.map((x: { id: string }) => x.id)
    expect(ids).toContain(r.id)
    const before = await journalLength()
    expect((await call('PATCH', `${history}/${RIGHT}/${r.id}`, { who: 'x' })).status).toBe(404)
    expect(await journalLength()).toBe(before)
    expect((await call('PATCH', `${history}/2026-01-07/${r.id}`, { who: 'joe' })).body.who).toBe('joe')
  })
})

describe('transactionlog', () => {
  const log = '/rest/v1/model/calls/log'
  test('PATCH, PUT and DELETE are 405 on the record day and on any other; the record is unchanged, nothing journaled', async () => {
    const r = (await call('POST', log, { day: '2026-01-05', event: 'start' })).body
    const before = await journalLength()
    for (const day of ['2026-01-05', '2026-01-06', '2025-12-31']) {
      const path = `${log}/${day}/${r.id}`
      const writes: [string, unknown][] = [
        ['PATCH', { event: 'x' }],
        ['PUT', { day, event: 'x' }],
        ['DELETE', undefined],
      ]
      for (const [method, body] of writes) {
        const res = await call(method, path, body)
        expect([method, day, res.status, res.body?.error_code]).toEqual([method, day, 405, 1405])
      }
    }
    expect((await call('GET', `${log}/2026-01-05/${r.id}`)).body).toEqual(r)
    expect(await journalLength()).toBe(before)
  })
})

describe('the ends of the calendar', () => {
  const at = '/rest/v1/model/calls/history'
  const ids = async (path: string) => ((await call('GET', path)).body as { id: string }[]).map((r) => r.id)

  test('year 9999: its last day, month and year, and an interval up to it, find a record there', async () => {
    const r = (await call('POST', at, { at: '9999-12-31T23:59:59.999Z', who: 'last' })).body
    for (const path of [
      `${at}/9999-12-31`,
      `${at}/9999-12`,
      `${at}/9999`,
      `${at}?interval=${encodeURIComponent('["2026-03-01","9999-12-31"]')}`,
      `${at}?interval=${encodeURIComponent('["9999-12-30","9999-12-31"]')}`,
    ])
      expect(await ids(path), path).toContain(r.id)
  })

  test('years 0-99 are those years, not 1900-1999', async () => {
    const r = (await call('POST', at, { at: '0050-06-01T10:00:00Z', who: 'early' })).body
    expect(await ids(`${at}/0050-06-01`)).toEqual([r.id])
    expect(await ids(`${at}/1950-06-01`)).toEqual([])
  })

  test('a datetime on a day its month does not have is a 400, not the days after', async () => {
    // also one whose offset carries it out of the years 0000-9999
    for (const value of [
      '2026-02-30T00:00:00Z',
      '2026-04-31T10:00:00Z',
      '2025-02-29T00:00:00Z',
      '9999-12-31T23:00:00-05:00',
      '0000-01-01T00:30:00+01:00',
    ]) {
      const res = await call('POST', at, { at: value, who: 'x' })
      expect([value, res.status, res.body.error_details?.field]).toEqual([value, 400, 'at'])
    }
    expect((await call('POST', at, { at: '2028-02-29T00:00:00Z', who: 'leap' })).status).toBe(200)
  })
})
