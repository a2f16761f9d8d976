// Changing a property's data_type converts the records' values that convert without loss, and
// otherwise refuses the change with a 409 naming the property and how many records block it (the
// class and its records unchanged); a new property with a default fills the records that lack it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
let domainId: string
beforeAll(async () => {
  t = await testService()
  domainId = (await t.createDomain('mig.master')).id
  token = await t.adminIn('mig.master')
})
afterAll(() => t.close())

const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token, body })
let n = 0
/** A class with one property `v` of `type` (`multi` when asked) and records holding `values`. */
async function classWith(type: string, values: unknown[], multi = false) {
  const classname = `mig/c${++n}`
  const made = await call('POST', '/rest/v1/design/classes', {
    classname,
    properties: [{ name: 'v', data_type: type, ...(multi ? { multi: true } : {}) }],
  })
  expect(made.status).toBe(200)
  const ids: string[] = []
  for (const v of values) {
    const r = await call('POST', `/rest/v1/model/${classname}`, v === undefined ? {} : { v })
    expect(r.status).toBe(200)
    ids.push(r.body.id)
  }
  return { id: made.body.id as string, classname, ids }
}
const retype = (c: { id: string }, type: string, extra: Record<string, unknown> = {}) =>
  call('PATCH', `/rest/v1/design/classes/${c.id}`, { properties: [{ name: 'v', data_type: type, ...extra }] })
const values = async (c: { classname: string; ids: string[] }) => {
  const out: unknown[] = []
  for (const id of c.ids) out.push((await call('GET', `/rest/v1/model/${c.classname}/${id}`)).body.v)
  return out
}

describe('lossless conversions happen', () => {
  test.each([
    ['string', ['12', '-3'], 'long', [12, -3]],
    ['long', [12, 0], 'string', ['12', '0']],
    ['string', ['2.5', '7'], 'float', [2.5, 7]],
    ['boolean', [true, false], 'string', ['true', 'false']],
    ['string', ['true', 'false'], 'boolean', [true, false]],
    ['date', ['2026-11-23'], 'datetime', ['2026-11-23T00:00:00.000Z']],
    ['datetime', ['2026-11-23T00:00:00Z'], 'date', ['2026-11-23']],
  ])('%s %j -> %s', async (from, stored, to, expected) => {
    const c = await classWith(from as string, stored as unknown[])
    const before = (await t.journal(domainId)).length
    const res = await retype(c, to as string)
    expect([from, to, res.status]).toEqual([from, to, 200])
    expect(await values(c)).toEqual(expected as unknown[])
    // each converted record is an update in the journal
    const updates = (await t.journal(domainId))
      .slice(before)
      .filter((r) => r.cmdtype === 'update' && r.objtype !== 'class')
    expect(updates).toHaveLength((stored as unknown[]).length)
  })
  test('one value becomes a one-item array (multi), and back', async () => {
    const c = await classWith('string', ['a', undefined])
    expect((await retype(c, 'string', { multi: true })).status).toBe(200)
    expect(await values(c)).toEqual([['a'], undefined])
    expect((await retype(c, 'string')).status).toBe(200)
    expect(await values(c)).toEqual(['a', undefined])
  })
})

describe('lossy changes are refused', () => {
  test.each([
    ['string', ['12', 'twelve', 'x'], 'long', 2],
    ['float', [2.5, 3], 'long', 1],
    ['string', ['yes', 'true'], 'boolean', 1],
    ['datetime', ['2026-11-23T10:30:00.000Z'], 'date', 1],
  ])('%s %j -> %s: 409 naming the property and how many records block it', async (from, stored, to, blocking) => {
    const c = await classWith(from, stored)
    const res = await retype(c, to)
    expect(res.status).toBe(409)
    expect(res.body.error_details).toEqual({ field: 'properties', property: 'v', records: blocking })
    expect(res.body.error_message).toContain(`${blocking} record(s)`)
    // nothing changed: the class keeps its type, the records their values
    expect((await call('GET', `/rest/v1/design/classes/${c.id}`)).body.properties[0].data_type).toBe(from)
    expect(await values(c)).toEqual(stored)
  })
  test('many values into one is refused', async () => {
    const c = await classWith('string', [['a', 'b'], ['c']], true)
    const res = await retype(c, 'string')
    expect([res.status, res.body.error_details.records]).toEqual([409, 1])
  })
})

test('a new property with a default fills the records that lack it (check_required_fill_defaults)', async () => {
  const c = await classWith('string', ['x', 'y'])
  const res = await call('PATCH', `/rest/v1/design/classes/${c.id}`, {
    properties: [
      { name: 'v', data_type: 'string' },
      { name: 'stage', data_type: 'string', default: 'new' },
    ],
  })
  expect(res.status).toBe(200)
  for (const id of c.ids) expect((await call('GET', `/rest/v1/model/${c.classname}/${id}`)).body.stage).toBe('new')
  const off = await classWith('string', ['z'])
  await call('PATCH', `/rest/v1/design/classes/${off.id}`, { opts: { check_required_fill_defaults: false } })
  await call('PATCH', `/rest/v1/design/classes/${off.id}`, {
    properties: [
      { name: 'v', data_type: 'string' },
      { name: 'stage', data_type: 'string', default: 'new' },
    ],
  })
  expect((await call('GET', `/rest/v1/model/${off.classname}/${off.ids[0]}`)).body.stage).toBeUndefined()
})

test("properties named like Object.prototype's members: a default fills records, a retype is not blocked by records without it", async () => {
  const c = await classWith('string', ['x'])
  const props = (toStringType: string) => [
    { name: 'v', data_type: 'string' },
    { name: 'constructor', data_type: 'string', default: 'new' },
    { name: 'toString', data_type: toStringType },
  ]
  expect((await call('PATCH', `/rest/v1/design/classes/${c.id}`, { properties: props('int') })).status).toBe(200)
  const read = await call('GET', `/rest/v1/model/${c.classname}/${c.ids[0]}`)
  expect(read.body).toMatchObject({ v: 'x', constructor: 'new' })
  expect(Object.hasOwn(read.body, 'toString')).toBe(false)
  // records without toString have nothing to convert: the change goes through
  expect((await call('PATCH', `/rest/v1/design/classes/${c.id}`, { properties: props('datetime') })).status).toBe(200)
})
