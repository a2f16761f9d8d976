// /rest/v1/reference/extobjs and extobjs_by_type: each write checked in the response, the row and the journal.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MAX_VALUE_BYTES } from '~/reference/extobjs'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
const base = '/rest/v1/reference/extobjs'
beforeAll(async () => {
  t = await testService({ env: { MAX_BODY_BYTES: String(12 * 1024 * 1024) } })
  token = await t.login('master', 'admin', 'admin-Secret_1')
})
afterAll(() => t.close())

const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token, body })
/** The row as stored: the type column, and the doc with the value column put back. */
const stored = async (id: string) => {
  const row = await t.deps.db.get('SELECT type, doc, value FROM extobjs WHERE domain = ? AND id = ?', [t.master.id, id])
  if (!row) return null
  const doc = JSON.parse(row[1] as string)
  return { type: row[0], doc: row[2] === null ? doc : { ...doc, value: JSON.parse(row[2] as string) } }
}
const lastJournal = async () => (await t.journal(t.master.id)).at(-1)!

describe('create', () => {
  test('answers 200 with the stored entity; row and journal record agree', async () => {
    const res = await call('POST', base, {
      type: 'mytype',
      value: { obj: { name: 'Obj', no: 2 } },
      opts: { title: 'Object 1', comment: 'c', user_tags: ['red', 'once'] },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    const e = res.body
    expect(e.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(e.ext.ct).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(e.ext.lwt).toBe(e.ext.ct)
    expect(e).toMatchObject({
      type: 'mytype',
      value: { obj: { name: 'Obj', no: 2 } },
      opts: { title: 'Object 1', user_tags: ['red', 'once'] },
    })
    const row = await stored(e.id)
    expect(row!.type).toBe('mytype')
    expect(row!.doc).toEqual(e)
    expect(await lastJournal()).toMatchObject({
      cmdtype: 'create',
      objtype: 'extobj',
      objid: e.id,
      fields: null,
      obj: e,
      modifiername: 'Administrator',
    })
  })

  test('value sent as a serialized JSON string is stored parsed; a plain string stays a string', async () => {
    const parsed = await call('POST', base, { type: 't', value: '{"a":[1,2]}' })
    expect(parsed.body.value).toEqual({ a: [1, 2] })
    const plain = await call('POST', base, { type: 't', value: 'hello {' })
    expect(plain.body.value).toBe('hello {')
  })

  test('a client-supplied id is kept; a duplicate id is a 409 naming id', async () => {
    const id = '0192a3b4-0000-7000-8000-000000000001'
    expect((await call('POST', base, { id, type: 't' })).body.id).toBe(id)
    const dup = await call('POST', base, { id, type: 't' })
    expect(dup.status).toBe(409)
    expect(dup.body.error_details).toEqual({ field: 'id' })
  })

  test("ext is open to clients but ct and lwt are the server's", async () => {
    const res = await call('POST', base, { type: 't', ext: { ct: '1999-01-01T00:00:00.000Z', source: 'crm' } })
    expect(res.body.ext.source).toBe('crm')
    expect(res.body.ext.ct).not.toBe('1999-01-01T00:00:00.000Z')
  })

  test('bad input: 400 naming the field, nothing stored or journaled', async () => {
    const before = (await t.journal(t.master.id)).length
    const cases: [unknown, string][] = [
      [{}, 'type'],
      [{ type: '' }, 'type'],
      [{ type: 5 }, 'type'],
      [{ type: 't', opts: { user_tags: 'red' } }, 'opts.user_tags'],
      [{ type: 't', opts: { colour: 'red' } }, 'opts.colour'],
      [{ type: 't', surprise: 1 }, 'surprise'],
      [{ type: 't', id: 'not-a-uuid' }, 'id'],
      [{ type: 't', id: '00000000-0000-0000-0000-000000000000' }, 'id'],
      [['not', 'an', 'object'], 'body'],
    ]
    for (const [body, field] of cases) {
      const res = await call('POST', base, body)
      expect(res.status).toBe(400)
      expect(res.body.error_code).toBe(1400)
      expect(res.body.error_details.field).toBe(field)
    }
    expect((await t.journal(t.master.id)).length).toBe(before)
  })

  test('a value over 10 MB is refused with 413 naming value; exactly at the cap is accepted', async () => {
    const overhead = JSON.stringify('').length
    const atCap = 'x'.repeat(MAX_VALUE_BYTES - overhead)
    const ok = await call('POST', base, { type: 'big', value: atCap })
    expect(ok.status).toBe(200)
    const list = await call('GET', `${base}?filter=${encodeURIComponent('{"type":"big"}')}`)
    expect(list.body[0].value).toBeUndefined()
    const over = await call('POST', base, { type: 'big', value: `${atCap}y` })
    expect(over.status).toBe(413)
    expect(over.body.error_details).toEqual({ field: 'value' })
  })
})

describe('read, list, by type, lookup', () => {
  let a: any, b: any
  beforeAll(async () => {
    a = (
      await call('POST', base, { type: 'colour', value: { hex: '#f00' }, opts: { title: 'Red', user_tags: ['warm'] } })
    ).body
    b = (await call('POST', base, { type: 'colour', value: { hex: '#00f' }, opts: { title: 'Blue' } })).body
  })

  test('GET one returns the whole entity; mask and flat shape it', async () => {
    expect((await call('GET', `${base}/${a.id}`)).body).toEqual(a)
    expect((await call('GET', `${base}/${a.id}?mask=type,value.hex`)).body).toEqual({
      type: 'colour',
      value: { hex: '#f00' },
    })
    expect((await call('GET', `${base}/${a.id}?mask=id,opts&flat=true`)).body).toEqual({
      id: a.id,
      'opts.title': 'Red',
      'opts.comment': '',
      'opts.user_tags': ['warm'],
    })
  })

  test('GET one: unknown id 404, malformed id 400 naming id, unknown mask field 400', async () => {
    const missing = await call('GET', `${base}/0192a3b4-0000-7000-8000-00000000ffff`)
    expect(missing.status).toBe(404)
    expect(missing.body.error_code).toBe(1404)
    const bad = await call('GET', `${base}/12345`)
    expect(bad.status).toBe(400)
    expect(bad.body.error_details).toEqual({ field: 'id' })
    expect((await call('GET', `${base}/${a.id}?mask=nope`)).status).toBe(400)
  })

  test('the list holds only id, type, opts.title, ext.lwt, ext.ct', async () => {
    const res = await call('GET', `${base}?filter=${encodeURIComponent('{"type":"colour"}')}`)
    expect(res.body).toEqual([
      { id: a.id, type: 'colour', opts: { title: 'Red' }, ext: { lwt: a.ext.lwt, ct: a.ext.ct } },
      { id: b.id, type: 'colour', opts: { title: 'Blue' }, ext: { lwt: b.ext.lwt, ct: b.ext.ct } },
    ])
  })

  test('the list refuses to output value even when masked', async () => {
    const res = await call('GET', `${base}?mask=id,value`)
    expect(res.status).toBe(400)
    expect(res.body.error_details.field).toBe('mask')
  })

  test('filter on value members, order, limit, offset', async () => {
    const byHex = await call(
      'GET',
      `${base}?filter=${encodeURIComponent('["==",["property","value.hex"],"#00f"]')}&mask=id`,
    )
    expect(byHex.body).toEqual([{ id: b.id }])
    const ordered = await call(
      'GET',
      `${base}?filter=${encodeURIComponent('{"type":"colour"}')}&order=${encodeURIComponent('["opts.title"]')}&mask=opts.title`,
    )
    expect(ordered.body).toEqual([{ opts: { title: 'Blue' } }, { opts: { title: 'Red' } }])
    const paged = await call(
      'GET',
      `${base}?filter=${encodeURIComponent('{"type":"colour"}')}&limit=1&offset=1&mask=id`,
    )
    expect(paged.body).toEqual([{ id: b.id }])
  })

  test('extobjs_by_type lists the type in the path with the same parameters', async () => {
    const res = await call('GET', '/rest/v1/reference/extobjs_by_type/colour?mask=id&order=["-opts.title"]')
    expect(res.body).toEqual([{ id: a.id }, { id: b.id }])
    expect((await call('GET', '/rest/v1/reference/extobjs_by_type/no-such-type')).body).toEqual([])
    const combined = await call(
      'GET',
      `/rest/v1/reference/extobjs_by_type/colour?filter=${encodeURIComponent('{"opts.title":"Red"}')}&mask=id`,
    )
    expect(combined.body).toEqual([{ id: a.id }])
  })

  test('LOOKUP by type or by id returns ids; nothing found is 404 with 1404', async () => {
    expect((await call('LOOKUP', base, 'colour')).body).toEqual([a.id, b.id])
    expect((await call('LOOKUP', base, a.id)).body).toEqual([a.id])
    const none = await call('LOOKUP', base, 'nothing-like-this')
    expect(none.status).toBe(404)
    expect(none.body).toEqual({ error_code: 1404, error_message: 'lookup failed' })
    const bad = await call('LOOKUP', base, { type: 'colour' })
    expect(bad.status).toBe(400)
    expect(bad.body.error_details).toEqual({ field: 'body' })
  })
})

describe('patch and delete', () => {
  test('PATCH changes given fields, merges opts, returns the whole entity, journals the changed fields', async () => {
    const e = (await call('POST', base, { type: 'p', value: { v: 1 }, opts: { title: 'T', comment: 'C' } })).body
    t.clock.advance(1000) // the test clock: lwt must move
    const res = await call('PATCH', `${base}/${e.id}`, { value: '{"v":2}', opts: { title: 'T2' } })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ id: e.id, type: 'p', value: { v: 2 }, opts: { title: 'T2', comment: 'C' } })
    expect(res.body.ext.ct).toBe(e.ext.ct)
    expect(res.body.ext.lwt > e.ext.lwt).toBe(true)
    expect((await stored(e.id))!.doc).toEqual(res.body)
    expect(await lastJournal()).toMatchObject({
      cmdtype: 'update',
      objid: e.id,
      fields: 'opts.title,value.v',
      obj: res.body,
    })
  })

  test('PATCH: id cannot change; same id is fine; bad fields are named; unknown id is 404', async () => {
    const e = (await call('POST', base, { type: 'p' })).body
    const moved = await call('PATCH', `${base}/${e.id}`, { id: '0192a3b4-0000-7000-8000-000000000999' })
    expect(moved.status).toBe(400)
    expect(moved.body.error_details).toEqual({ field: 'id' })
    expect((await call('PATCH', `${base}/${e.id}`, { id: e.id, type: 'q' })).body.type).toBe('q')
    expect((await call('PATCH', `${base}/${e.id}`, { type: 7 })).body.error_details).toEqual({ field: 'type' })
    expect((await call('PATCH', `${base}/0192a3b4-0000-7000-8000-00000000ffff`, { type: 'x' })).status).toBe(404)
  })

  test('DELETE answers 204 without body, removes the row, journals the object as it was', async () => {
    const e = (await call('POST', base, { type: 'gone' })).body
    const res = await call('DELETE', `${base}/${e.id}`)
    expect(res.status).toBe(204)
    expect(res.text).toBe('')
    expect(await stored(e.id)).toBeNull()
    expect(await lastJournal()).toMatchObject({ cmdtype: 'delete', objid: e.id, obj: e })
    expect((await call('DELETE', `${base}/${e.id}`)).status).toBe(404)
  })
})
