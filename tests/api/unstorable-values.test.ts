// Values SQLite's JSON functions cannot take are refused when written, with a 400 naming the field:
// a lone UTF-16 surrogate (json_extract made bytes that are not UTF-8 of it, and the driver aborted
// the process when a list ordered by that field read them back), and nesting past MAX_DOC_DEPTH (one
// such record made every filtered or ordered list of its table fail with a 500).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { MAX_DOC_DEPTH } from '~storage/doc'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
beforeAll(async () => {
  t = await testService()
  await t.createDomain('store.master')
  token = await t.adminIn('store.master')
  const cls = { classname: 'st/any', properties: [{ name: 'x', data_type: 'any' }] }
  expect((await t.call('POST', '/rest/v1/design/classes', { token, body: cls })).status).toBe(200)
})
afterAll(() => t.close())

const post = (path: string, raw: string) => t.call('POST', path, { token, raw })
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`

test('a lone surrogate in a value or a key is a 400 naming the field; lists ordered by it still answer', async () => {
  for (const [path, raw, field] of [
    ['/rest/v1/domain/projects', '{"code":"s1","name":"\\ud800"}', 'name'],
    ['/rest/v1/domain/projects', '{"code":"s2","name":"n","ext":{"a\\udfff":1}}', 'ext'],
    ['/rest/v1/reference/extobjs', '{"type":"t","value":["ok","x\\udbff"]}', 'value'],
    ['/rest/v1/model/st/any', '{"x":{"y":"\\ud83d"}}', 'x'],
  ]) {
    const r = await post(path!, raw!)
    expect([r.status, r.body.error_details?.field]).toEqual([400, field])
    expect(r.body.error_message).toContain('surrogate')
  }
  // a surrogate pair (an emoji) is text, escaped or not
  expect((await post('/rest/v1/domain/projects', '{"code":"s3","name":"\\ud83d\\ude00 😀"}')).status).toBe(200)
  const listed = await t.call('GET', '/rest/v1/domain/projects?order=name', { token })
  expect(listed.status).toBe(200)
  expect(listed.body.map((p: { name: string }) => p.name)).toContain('😀 😀')
})

test(`nesting deeper than ${MAX_DOC_DEPTH} levels is a 400 naming the field; up to it is kept and lists work`, async () => {
  for (const [path, raw, field] of [
    ['/rest/v1/reference/extobjs', `{"type":"t","value":${nested(1000)}}`, 'value'],
    // deep enough to overflow the stack of a recursive JSON.stringify (a 500 before)
    ['/rest/v1/reference/extobjs', `{"type":"t","value":${nested(100_000)}}`, 'value'],
    ['/rest/v1/domain/projects', `{"code":"d1","name":"n","ext":{"x":${nested(MAX_DOC_DEPTH)}}}`, 'ext'],
    ['/rest/v1/model/st/any', `{"x":${nested(MAX_DOC_DEPTH)}}`, 'x'],
  ]) {
    const r = await post(path!, raw!)
    expect([r.status, r.body.error_details?.field]).toEqual([400, field])
    expect(r.body.error_message).toContain(`nested deeper than ${MAX_DOC_DEPTH} levels`)
  }
  // the deepest kept: the field's value holds MAX_DOC_DEPTH - 1 levels
  expect((await post('/rest/v1/model/st/any', `{"x":${nested(MAX_DOC_DEPTH - 1)}}`)).status).toBe(200)
  const value = { a: 1 }
  expect((await post('/rest/v1/reference/extobjs', JSON.stringify({ type: 'deep', value }))).status).toBe(200)
  const filter = encodeURIComponent(JSON.stringify({ 'value.a': 1 }))
  const listed = await t.call('GET', `/rest/v1/reference/extobjs?filter=${filter}&order=type`, { token })
  expect([listed.status, listed.body.length]).toEqual([200, 1])
  const records = await t.call('GET', '/rest/v1/model/st/any?order=x', { token })
  expect([records.status, records.body.length]).toEqual([200, 1])
})
