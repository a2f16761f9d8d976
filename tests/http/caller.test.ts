// What a caller on another origin, or a careful one, gets: CORS for listed origins (preflight and
// answers, the cookie's SameSite), gzip or brotli above a size, and ETags that answer 304.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

const APP = 'https://app.example.com'
const EXTOBJS = '/rest/v1/reference/extobjs'
let t: TestService
let token: string
beforeAll(async () => {
  t = await testService({ env: { CORS_ORIGINS: `${APP}, https://other.example.com`, COOKIE_SAMESITE: 'None' } })
  token = await t.login('master', 'admin', ADMIN_PASSWORD)
})
afterAll(() => t.close())

describe('CORS', () => {
  test('a preflight from a listed origin is answered with the methods of the URL and credentials', async () => {
    const res = await t.request('OPTIONS', EXTOBJS, {
      headers: {
        origin: APP,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    })
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe(APP)
    expect(res.headers.get('access-control-allow-credentials')).toBe('true')
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, HEAD, POST, LOOKUP')
    expect(res.headers.get('access-control-allow-headers')).toBe('content-type')
  })
  test('another origin gets no CORS headers; an unknown URL is a 404', async () => {
    const res = await t.request('OPTIONS', EXTOBJS, {
      headers: { origin: 'https://evil.example.com', 'access-control-request-method': 'POST' },
    })
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
    expect((await t.request('OPTIONS', '/rest/v1/nothing', { headers: { origin: APP } })).status).toBe(404)
  })
  test('answers carry the origin for a listed one only, varying by Origin', async () => {
    const listed = await t.request('GET', EXTOBJS, { token, headers: { origin: APP } })
    expect(listed.headers.get('access-control-allow-origin')).toBe(APP)
    expect(listed.headers.get('vary')).toContain('Origin')
    const other = await t.request('GET', EXTOBJS, { token, headers: { origin: 'https://evil.example.com' } })
    expect(other.headers.get('access-control-allow-origin')).toBeNull()
  })
  test('COOKIE_SAMESITE=None makes the session cookie SameSite=None; Secure', async () => {
    const res = await t.call('POST', '/rest/v1/iam/sessions', {
      body: { domain: 'master', login: 'admin', pwd: ADMIN_PASSWORD },
    })
    expect(res.headers.get('set-cookie')).toContain('SameSite=None')
    expect(res.headers.get('set-cookie')).toContain('Secure')
  })
})

describe('compression', () => {
  beforeAll(async () => {
    for (let i = 0; i < 40; i++)
      await t.call('POST', EXTOBJS, { token, body: { type: 'big', opts: { title: `x${i}` } } })
  })
  test.each([
    ['br', (b: Buffer) => brotliDecompressSync(b)],
    ['gzip', (b: Buffer) => gunzipSync(b)],
  ] as const)('a large list is sent %s when accepted, and decodes to the same JSON', async (encoding, decode) => {
    const plain = await t.request('GET', `${EXTOBJS}?limit=100`, { token })
    const text = await plain.text()
    expect(text.length).toBeGreaterThan(1024)
    expect(plain.headers.get('content-encoding')).toBeNull()
    const packed = await t.request('GET', `${EXTOBJS}?limit=100`, {
      token,
      headers: { 'accept-encoding': `${encoding}, identity` },
    })
    expect(packed.headers.get('content-encoding')).toBe(encoding)
    expect(packed.headers.get('vary')).toContain('Accept-Encoding')
    const bytes = Buffer.from(await packed.arrayBuffer())
    expect(bytes.length).toBeLessThan(text.length)
    expect(decode(bytes).toString()).toBe(text)
  })
  test('a small answer is sent as it is', async () => {
    const res = await t.request('GET', '/rest/v1/iam/sessions/current', {
      token,
      headers: { 'accept-encoding': 'gzip' },
    })
    expect(res.headers.get('content-encoding')).toBeNull()
  })
})

describe('ETag', () => {
  test('a GET answers a strong ETag; If-None-Match with it is a 304 until the entity changes', async () => {
    const made = await t.call('POST', EXTOBJS, { token, body: { type: 'tagged' } })
    const url = `${EXTOBJS}/${made.body.id}`
    const first = await t.request('GET', url, { token })
    const etag = first.headers.get('etag')!
    expect(etag).toMatch(/^"[0-9a-z]+"$/)
    const same = await t.request('GET', url, { token, headers: { 'if-none-match': etag } })
    expect(same.status).toBe(304)
    expect(await same.text()).toBe('')
    await t.call('PATCH', url, { token, body: { value: 1 } })
    const changed = await t.request('GET', url, { token, headers: { 'if-none-match': etag } })
    expect(changed.status).toBe(200)
    expect(changed.headers.get('etag')).not.toBe(etag)
  })
  test('If-Match: a PATCH or DELETE of a version since changed is a 412 and changes nothing; the current one passes', async () => {
    const made = await t.call('POST', EXTOBJS, { token, body: { type: 'guarded', value: 1 } })
    const url = `${EXTOBJS}/${made.body.id}`
    const read = (await t.request('GET', url, { token })).headers.get('etag')!
    expect((await t.call('PATCH', url, { token, body: { value: 2 }, headers: { 'if-match': read } })).status).toBe(200)
    const stale = await t.call('PATCH', url, { token, body: { value: 3 }, headers: { 'if-match': read } })
    expect(stale.status).toBe(412)
    expect(stale.body).toMatchObject({ error_code: 1412, error_details: { field: 'If-Match' } })
    expect((await t.call('DELETE', url, { token, headers: { 'if-match': read } })).status).toBe(412)
    expect((await t.call('GET', url, { token })).body.value).toBe(2)
    const now = (await t.request('GET', url, { token })).headers.get('etag')!
    expect((await t.call('DELETE', url, { token, headers: { 'if-match': `"other", ${now}` } })).status).toBe(204)
  })
})

describe('If-Match under concurrency', () => {
  test('two changes sent together with the same ETag: one applies, the other is a 412', async () => {
    const made = await t.call('POST', EXTOBJS, { token, body: { type: 'race', value: 0 } })
    const url = `${EXTOBJS}/${made.body.id}`
    const etag = (await t.request('GET', url, { token })).headers.get('etag')!
    const both = await Promise.all(
      [1, 2].map((value) => t.call('PATCH', url, { token, body: { value }, headers: { 'if-match': etag } })),
    )
    expect(both.map((r) => r.status).sort()).toEqual([200, 412])
  })
})

describe('X-Total-Count', () => {
  test('count=true adds how many the filter selects, whatever offset and limit; a model list too', async () => {
    const res = await t.request(
      'GET',
      `${EXTOBJS}?filter=${encodeURIComponent('{"type":"big"}')}&limit=5&offset=2&count=true`,
      {
        token,
      },
    )
    expect(res.headers.get('x-total-count')).toBe('40')
    expect(((await res.json()) as unknown[]).length).toBe(5)
    expect((await t.request('GET', `${EXTOBJS}?limit=1`, { token })).headers.get('x-total-count')).toBeNull()
    await t.call('POST', '/rest/v1/design/classes', {
      token,
      body: { classname: 'cnt/x', properties: [{ name: 'n', data_type: 'long' }] },
    })
    for (const n of [1, 2, 3]) await t.call('POST', '/rest/v1/model/cnt/x', { token, body: { n } })
    const model = await t.request(
      'GET',
      `/rest/v1/model/cnt/x?filter=${encodeURIComponent('[">",["property","n"],1]')}&count=1`,
      { token },
    )
    expect(model.headers.get('x-total-count')).toBe('2')
    expect((await t.call('GET', `${EXTOBJS}?count=maybe`, { token })).body.error_details.field).toBe('count')
  })
})
