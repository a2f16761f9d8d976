// A page of a list (records, or any collection's) asked again before any write is sent as the text made the first time (and its
// ETag): the same answer as before, never another domain's, another mask's or one older than a write.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

let t: TestService
const tokens: Record<string, string> = {}
beforeAll(async () => {
  t = await testService()
  for (const name of ['text-a.master', 'text-b.master']) {
    await t.createDomain(name)
    tokens[name] = await t.adminIn(name)
    const res = await t.call('POST', '/rest/v1/design/classes', {
      token: tokens[name],
      body: {
        classname: 'notes',
        properties: [
          { name: 'title', data_type: 'string' },
          { name: 'n', data_type: 'int' },
        ],
      },
    })
    if (res.status !== 200) throw new Error(res.text)
    for (let n = 0; n < 3; n++)
      await t.call('POST', '/rest/v1/model/notes', { token: tokens[name], body: { title: `${name} ${n}`, n } })
  }
})
afterAll(() => t.close())

const list = (domain: string, query = '') =>
  t.call('GET', `/rest/v1/model/notes?order=${encodeURIComponent('["n"]')}${query}`, { token: tokens[domain] })

test('a page asked again gives the same text and ETag; a write in between gives the new page', async () => {
  const first = await list('text-a.master')
  const again = await list('text-a.master')
  expect(again.text).toBe(first.text)
  expect(again.headers.get('etag')).toBe(first.headers.get('etag'))
  expect(first.body.map((r: { title: string }) => r.title)).toEqual([0, 1, 2].map((n) => `text-a.master ${n}`))
  const id = first.body[1].id
  await t.call('PATCH', `/rest/v1/model/notes/${id}`, { token: tokens['text-a.master'], body: { title: 'changed' } })
  const after = await list('text-a.master')
  expect(after.body[1].title).toBe('changed')
  expect(after.headers.get('etag')).not.toBe(first.headers.get('etag'))
})

test("the same list in another domain is that domain's page; another mask or flat is its own text", async () => {
  const a = await list('text-a.master')
  const b = await list('text-b.master')
  expect(b.body.map((r: { title: string }) => r.title)).toEqual([0, 1, 2].map((n) => `text-b.master ${n}`))
  expect(b.text).not.toBe(a.text)
  const masked = await list('text-a.master', `&mask=${encodeURIComponent('["title"]')}`)
  expect(Object.keys(masked.body[0]).sort()).toEqual(['title'])
  const whole = await list('text-a.master')
  expect(whole.text).toBe(a.text)
  expect(Object.keys(whole.body[0])).toContain('n')
})

test('a page whose ETag the client holds is a 304, asked twice', async () => {
  const first = await list('text-b.master')
  for (let i = 0; i < 2; i++) {
    const res = await t.call('GET', `/rest/v1/model/notes?order=${encodeURIComponent('["n"]')}`, {
      token: tokens['text-b.master'],
      headers: { 'if-none-match': first.headers.get('etag')! },
    })
    expect(res.status).toBe(304)
  }
})

test('a collection list (extobjs) too: the same text until a write, then the new page; each domain its own', async () => {
  const [a, b] = ['text-a.master', 'text-b.master']
  for (const name of [a, b])
    await t.call('POST', '/rest/v1/reference/extobjs', {
      token: tokens[name],
      body: { type: 'note', opts: { title: name } },
    })
  const path = `/rest/v1/reference/extobjs?filter=${encodeURIComponent('{"type":"note"}')}`
  const first = await t.call('GET', path, { token: tokens[a] })
  expect((await t.call('GET', path, { token: tokens[a] })).text).toBe(first.text)
  expect(first.body.map((o: { opts: { title: string } }) => o.opts.title)).toEqual([a])
  const other = await t.call('GET', path, { token: tokens[b] })
  expect(other.body.map((o: { opts: { title: string } }) => o.opts.title)).toEqual([b])
  await t.call('POST', '/rest/v1/reference/extobjs', {
    token: tokens[a],
    body: { type: 'note', opts: { title: 'second' } },
  })
  const after = await t.call('GET', path, { token: tokens[a] })
  expect(after.body.map((o: { opts: { title: string } }) => o.opts.title).sort()).toEqual([a, 'second'].sort())
})

test('a list asked again keeps its X-Total-Count and X-Next-After; a class whose records expire is listed afresh', async () => {
  const token = tokens['text-a.master']
  const path = `/rest/v1/model/notes?order=${encodeURIComponent('["n"]')}&limit=2&count=true`
  const first = await t.call('GET', path, { token })
  const again = await t.call('GET', path, { token })
  expect([again.headers.get('x-total-count'), again.headers.get('x-next-after')]).toEqual([
    first.headers.get('x-total-count'),
    first.headers.get('x-next-after'),
  ])
  expect(first.headers.get('x-total-count')).toBe('3')
  expect(first.headers.get('x-next-after')).toBeTruthy()
  await t.call('POST', '/rest/v1/design/classes', {
    token,
    body: {
      classname: 'passes',
      properties: [
        { name: 'ts', data_type: 'long' },
        { name: 'ttl', data_type: 'int' },
      ],
      opts: { expires_mode: 'create', expires_ts_property: 'ts', expires_ttl_property: 'ttl' },
    },
  })
  await t.call('POST', '/rest/v1/model/passes', { token, body: { ttl: 60 } })
  expect((await t.call('GET', '/rest/v1/model/passes', { token })).body.length).toBe(1)
  t.clock.advance(60_000) // no write: only the time tells it is gone
  expect((await t.call('GET', '/rest/v1/model/passes', { token })).body.length).toBe(0)
})

test("lists whose statements differ only in a value's type or a separator are answered apart", async () => {
  const token = tokens['text-b.master']
  const res = await t.call('POST', '/rest/v1/design/classes', {
    token,
    body: { classname: 'codes', properties: [{ name: 'code', data_type: 'string' }] },
  })
  expect(res.status).toBe(200)
  await t.call('POST', '/rest/v1/model/codes', { token, body: { code: '1' } })
  const list = async (filter: unknown) =>
    (await t.call('GET', `/rest/v1/model/codes?filter=${encodeURIComponent(JSON.stringify(filter))}`, { token })).body
  const asNumber = await list({ code: 1 })
  expect((await list({ code: '1' })).length).toBe(1)
  expect(await list({ code: 1 })).toEqual(asNumber)
})
