// Times compare as instants: a filter value on a datetime field (ext.ct, ext.lwt, the journal's
// dtutc, datetime properties of classes) is brought to the stored form first, whatever its offset
// or fraction; a value that is no instant is a 400 naming the filter.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '~/clock'
import { testService, type TestService } from '../helpers/service'

const NOON = Date.parse('2026-11-23T12:00:00.000Z')
const EXTOBJS = '/rest/v1/reference/extobjs'
let t: TestService
let token: string
let ids: { noon: string; half: string; ten: string }
beforeAll(async () => {
  t = await testService({ clock: new ManualClock(NOON - 2 * 3600_000) })
  await t.createDomain('time.master')
  token = await t.adminIn('time.master')
  const make = async () => (await t.call('POST', EXTOBJS, { token, body: { type: 'timed' } })).body.id as string
  const ten = await make() // 10:00:00.000Z
  t.clock.advance(2 * 3600_000)
  const noon = await make() // 12:00:00.000Z
  t.clock.advance(500)
  const half = await make() // 12:00:00.500Z
  ids = { noon, half, ten }
})
afterAll(() => t.close())

const list = async (path: string, filter: unknown) => {
  const res = await t.call(
    'GET',
    `${path}${path.includes('?') ? '&' : '?'}filter=${encodeURIComponent(JSON.stringify(filter))}`,
    {
      token,
    },
  )
  return res
}
const idsOf = (res: { body: { id?: string; objid?: string }[] }) => res.body.map((r) => r.id ?? r.objid).sort()

describe('ext.ct', () => {
  const p = ['property', 'ext.ct']
  test.each([
    ['> 12:00:00Z (a fraction later is later)', ['>', p, '2026-11-23T12:00:00Z'], ['half']],
    ['== 12:00:00Z (the same instant, without milliseconds)', ['==', p, '2026-11-23T12:00:00Z'], ['noon']],
    ['== 15:00:00+03:00 (another offset)', ['==', p, '2026-11-23T15:00:00+03:00'], ['noon']],
    ['< 12:00:00.250+00:00', ['<', p, '2026-11-23T12:00:00.250+00:00'], ['noon', 'ten']],
    ['>= 11:00:00-01:00 (12:00Z)', ['>=', p, '2026-11-23T11:00:00-01:00'], ['half', 'noon']],
    ['in [10:00Z, 13:00+01:00]', ['in', p, ['2026-11-23T10:00:00Z', '2026-11-23T13:00:00+01:00']], ['noon', 'ten']],
  ] as const)('%s', async (_, filter, expected) => {
    const res = await list(`${EXTOBJS}?mask=id`, ['and', ['==', ['property', 'type'], 'timed'], filter])
    expect(res.status).toBe(200)
    expect(idsOf(res)).toEqual(expected.map((k) => ids[k]).sort())
  })
  test('the object form compares instants too', async () => {
    const res = await list(`${EXTOBJS}?mask=id`, { type: 'timed', 'ext.ct': '2026-11-23T13:00:00.500+01:00' })
    expect(idsOf(res)).toEqual([ids.half])
  })
  test('a value that is no instant is a 400 naming the filter', async () => {
    const res = await list(EXTOBJS, ['>', p, 'yesterday'])
    expect(res.status).toBe(400)
    expect(res.body.error_details).toMatchObject({ field: 'filter', value: 'ext.ct' })
  })
})

test('journal dtutc compares as an instant', async () => {
  const params = encodeURIComponent(JSON.stringify({ dtstart: '2026-11-23T00:00:00Z' }))
  const res = await list(`/rest/v1/journal/changes?params=${params}&mask=objid`, [
    '>',
    ['property', 'dtutc'],
    '2026-11-23T13:00:00+01:00',
  ])
  expect(res.status).toBe(200)
  expect(idsOf(res)).toEqual([ids.half])
})

test('datetime properties of classes: stored in one form, compared as instants', async () => {
  await t.call('POST', '/rest/v1/design/classes', {
    token,
    body: { classname: 'time/events', properties: [{ name: 'at', data_type: 'datetime' }] },
  })
  const base = '/rest/v1/model/time/events'
  const a = (await t.call('POST', base, { token, body: { at: '2026-11-23T10:00:00+02:00' } })).body
  const b = (await t.call('POST', base, { token, body: { at: '2026-11-23T08:00:00.750Z' } })).body
  expect(a.at).toBe('2026-11-23T08:00:00.000Z')
  const at = ['property', 'at']
  expect(idsOf(await list(`${base}?mask=id`, ['==', at, '2026-11-23T08:00:00Z']))).toEqual([a.id])
  expect(idsOf(await list(`${base}?mask=id`, ['>', at, '2026-11-23T09:00:00.500+01:00']))).toEqual([b.id])
  const ordered = await t.call('GET', `${base}?mask=id&order=${encodeURIComponent('["-at"]')}`, { token })
  expect(ordered.body.map((r: { id: string }) => r.id)).toEqual([b.id, a.id])
  expect((await list(base, ['<', at, 'soon'])).status).toBe(400)
})
