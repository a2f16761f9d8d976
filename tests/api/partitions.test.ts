// Partitioned classes (history, transactionlog) as the original documents them: partition_interval
// decides the path segment (day, month, year); a path ending in / lists the partitions holding
// records; LOOKUP honours the partition and interval; a record is read by id without its date;
// an interval with a partition segment is a 400; partition and interval lists are newest first.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
const BASE = '/rest/v1/model/part'
const ids: Record<string, string> = {}
beforeAll(async () => {
  t = await testService()
  await t.createDomain('part.master')
  token = await t.adminIn('part.master')
  for (const interval of ['day', 'month', 'year'])
    expect(
      (
        await t.call('POST', '/rest/v1/design/classes', {
          token,
          body: {
            classname: `part/${interval}`,
            storage_mode: 'history',
            properties: [
              { name: 'at', data_type: 'datetime' },
              { name: 'who', data_type: 'string' },
            ],
            opts: { partition_property: 'at', partition_interval: interval, lookup_properties: ['who'] },
          },
        })
      ).status,
    ).toBe(200)
  for (const interval of ['day', 'month', 'year'])
    for (const [key, at] of [
      ['a', '2025-12-31T23:00:00Z'],
      ['b', '2026-01-05T10:00:00Z'],
      ['c', '2026-01-05T12:00:00Z'],
      ['d', '2026-02-01T08:00:00Z'],
    ])
      ids[`${interval}${key}`] = (
        await t.call('POST', `${BASE}/${interval}`, { token, body: { at, who: key === 'c' ? 'b' : key } })
      ).body.id
})
afterAll(() => t.close())

const get = (path: string) => t.call('GET', path, { token })
const q = (v: unknown) => encodeURIComponent(JSON.stringify(v))

describe('the partitions of a class: GET with a trailing /', () => {
  test.each([
    [
      'day',
      [
        ['2026-02-01', 1],
        ['2026-01-05', 2],
        ['2025-12-31', 1],
      ],
    ],
    [
      'month',
      [
        ['2026-02', 1],
        ['2026-01', 2],
        ['2025-12', 1],
      ],
    ],
    [
      'year',
      [
        ['2026', 3],
        ['2025', 1],
      ],
    ],
  ] as const)('partition_interval %s', async (interval, expected) => {
    const res = await get(`${BASE}/${interval}/`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual(expected.map(([partition, records]) => ({ partition, records })))
  })
})

describe('lists', () => {
  test.each([
    ['day', '2026-01-05', ['c', 'b']],
    ['month', '2026-01', ['c', 'b']],
    ['year', '2026', ['d', 'c', 'b']],
  ])('%s partition %s: its records, newest first', async (interval, segment, expected) => {
    const res = await get(`${BASE}/${interval}/${segment}?mask=id`)
    expect(res.body.map((r: { id: string }) => r.id)).toEqual(expected.map((k) => ids[`${interval}${k}`]))
  })
  test('an interval list is newest first too; order still wins when given', async () => {
    const interval = q(['2025-12-01', '2026-12-31'])
    const res = await get(`${BASE}/month?interval=${interval}&mask=id`)
    expect(res.body.map((r: { id: string }) => r.id)).toEqual(['d', 'c', 'b', 'a'].map((k) => ids[`month${k}`]))
    const asc = await get(`${BASE}/month?interval=${interval}&mask=id&order=${q(['at'])}`)
    expect(asc.body[0].id).toBe(ids.montha)
  })
  test('an interval with a partition segment is a 400 naming interval', async () => {
    const res = await get(`${BASE}/month/2026-01?interval=${q(['2026-01-01', '2026-01-31'])}`)
    expect([res.status, res.body.error_details.field]).toEqual([400, 'interval'])
  })
})

describe('records and LOOKUP', () => {
  test('a record is read by id without its date, and with a partition it lies in', async () => {
    expect((await get(`${BASE}/month/${ids.monthb}`)).body.who).toBe('b')
    expect((await get(`${BASE}/month/2026-01/${ids.monthb}`)).body.who).toBe('b')
    expect((await get(`${BASE}/month/2026-02/${ids.monthb}`)).status).toBe(404)
  })
  test('LOOKUP honours the partition in the path and the interval', async () => {
    const lookup = (path: string) => t.call('LOOKUP', path, { token, body: 'b' })
    expect((await lookup(`${BASE}/day`)).body.sort()).toEqual([ids.dayb, ids.dayc].sort())
    expect((await lookup(`${BASE}/day/2026-01-05`)).body.sort()).toEqual([ids.dayb, ids.dayc].sort())
    expect((await lookup(`${BASE}/day/2026-01-06`)).status).toBe(404)
    expect((await lookup(`${BASE}/day?interval=${q(['2026-01-05T11:00:00Z', '2026-01-05T13:00:00Z'])}`)).body).toEqual([
      ids.dayc,
    ])
    expect((await lookup(`${BASE}/day/2026-01-05?interval=${q(['2026-01-01', '2026-01-31'])}`)).status).toBe(400)
  })
})
