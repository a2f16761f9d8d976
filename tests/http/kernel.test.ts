// The HTTP kernel: request ids, error bodies, body limits, method override, 404/405, and unexpected errors.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createApp } from '~/app'
import { TEST_ROUTE } from '../helpers/test-route'
import { defineRoute } from '~/http/route'
import { createLogger } from '~/log'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
beforeAll(async () => {
  t = await testService({ env: { MAX_BODY_BYTES: '2048' } })
  token = await t.login('master', 'admin', 'admin-Secret_1')
})
afterAll(() => t.close())

describe('X-Request-Id', () => {
  test('a sane id from the client is echoed; otherwise one is generated', async () => {
    const given = await t.request('GET', '/rest/v1/reference/extobjs', {
      token,
      headers: { 'x-request-id': 'abc-123.x' },
    })
    expect(given.headers.get('x-request-id')).toBe('abc-123.x')
    const none = await t.request('GET', '/rest/v1/reference/extobjs', { token })
    const generated = /^[0-9a-f]{8}-[0-9a-z]+$/
    expect(none.headers.get('x-request-id')).toMatch(generated)
    const again = await t.request('GET', '/rest/v1/reference/extobjs', { token })
    expect(again.headers.get('x-request-id')).not.toBe(none.headers.get('x-request-id'))
    const insane = await t.request('GET', '/rest/v1/reference/extobjs', {
      token,
      headers: { 'x-request-id': 'x'.repeat(200) },
    })
    expect(insane.headers.get('x-request-id')).toMatch(generated)
  })
  test('errors, 404 and 405 carry it too', async () => {
    for (const [method, path] of [
      ['GET', '/rest/v1/reference/extobjs'],
      ['GET', '/nowhere'],
      ['PUT', '/rest/v1/reference/extobjs'],
    ]) {
      const res = await t.request(method!, path!, { headers: { 'x-request-id': 'req-42' } })
      expect(res.headers.get('x-request-id')).toBe('req-42')
    }
  })
  test('the journal records the request id of the write', async () => {
    await t.call('POST', '/rest/v1/reference/extobjs', {
      token,
      body: { type: 'rid' },
      headers: { 'x-request-id': 'write-77' },
    })
    expect(await t.deps.db.get('SELECT request_id FROM journal ORDER BY seq DESC LIMIT 1')).toEqual(['write-77'])
  })
})

describe('bodies', () => {
  test('malformed JSON is a 400 naming the body', async () => {
    const res = await t.call('POST', '/rest/v1/reference/extobjs', { token, raw: '{"type": "x",}' })
    expect(res.status).toBe(400)
    expect(res.body.error_code).toBe(1400)
    expect(res.body.error_message).toStartWith('request body is not valid JSON')
    expect(res.body.error_details).toEqual({ field: 'body' })
  })
  test('invalid UTF-8 is a 400', async () => {
    const res = await t.call('POST', '/rest/v1/reference/extobjs', {
      token,
      raw: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
    })
    expect(res.status).toBe(400)
    expect(res.body.error_message).toContain('UTF-8')
  })
  test('a body over MAX_BODY_BYTES is a 413, with Content-Length or chunked', async () => {
    const big = JSON.stringify({ type: 'x', value: 'y'.repeat(3000) })
    const declared = await t.call('POST', '/rest/v1/reference/extobjs', { token, raw: big })
    expect(declared.status).toBe(413)
    expect(declared.body.error_code).toBe(2413)
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big.slice(0, 1500)))
        c.enqueue(new TextEncoder().encode(big.slice(1500)))
        c.close()
      },
    })
    const chunked = await t.app.handle(
      new Request('http://test.local/rest/v1/reference/extobjs', {
        method: 'POST',
        body: stream,
        headers: { authorization: `Bearer ${token}` },
      }),
    )
    expect(chunked.status).toBe(413)
  })
  test('a body declared as something other than JSON is a 415 naming content-type; JSON types and none are read', async () => {
    const body = JSON.stringify({ type: 'ct' })
    const cases: [string | undefined, number][] = [
      ['text/plain;charset=UTF-8', 415],
      ['application/x-www-form-urlencoded', 415],
      ['multipart/form-data; boundary=x', 415],
      ['application/jsonp', 415],
      ['', 415],
      ['application/json', 200],
      ['Application/JSON; charset=utf-8', 200],
      ['application/merge-patch+json', 200],
      [undefined, 200],
    ]
    for (const [type, status] of cases) {
      const headers: Record<string, string> = { authorization: `Bearer ${token}` }
      if (type !== undefined) headers['content-type'] = type
      const res = await t.app.handle(
        new Request('http://test.local/rest/v1/reference/extobjs', {
          method: 'POST',
          body: new TextEncoder().encode(body), // bytes: no type is implied
          headers,
        }),
      )
      expect([type, res.status]).toEqual([type, status])
      if (status === 415) {
        const error = (await res.json()) as { error_code: number; error_details: unknown }
        expect(error.error_code).toBe(1415)
        expect(error.error_details).toEqual({ field: 'content-type' })
      }
    }
  })
  test('an empty body where one is needed is a 400', async () => {
    const res = await t.call('POST', '/rest/v1/reference/extobjs', { token })
    expect(res.status).toBe(400)
    expect(res.body.error_details).toEqual({ field: 'body' })
  })
})

describe('routing', () => {
  test('an unknown path is a 404 error body', async () => {
    const res = await t.call('GET', '/rest/v1/nothing/here')
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ error_code: 1404, error_message: 'no resource at /rest/v1/nothing/here' })
  })
  test('a method the URL does not serve is a 405 with Allow', async () => {
    const res = await t.call('PUT', '/rest/v1/reference/extobjs', { token })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST, LOOKUP')
    expect(res.body.error_code).toBe(1405)
  })
  test('a malformed percent-escape in the path is a 400, not a 500', async () => {
    const domain = await t.createDomain('escape.master')
    await t.createUser(domain.id, 'plain2', 'plain-Pass1', ['user'])
    const userToken = await t.login('escape.master', 'plain2', 'plain-Pass1')
    const res = await t.call('GET', '/rest/v1/domain/projects/%E0%A4%A', { token: userToken })
    expect([res.status, res.body.error_details]).toEqual([400, { field: 'path' }])
  })

  test('HEAD answers like GET without a body', async () => {
    const res = await t.request('HEAD', '/rest/v1/reference/extobjs', { token })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('')
  })

  test('a role that grants GET grants HEAD too', async () => {
    const domain = await t.createDomain('head.master')
    const admin = await t.adminIn('head.master')
    const role = { name: 'reader', routes: [{ path: '/rest/v1/reference/extobjs', methods: ['GET'] }] }
    expect((await t.call('POST', '/rest/v1/domain/roles', { token: admin, body: role })).status).toBe(200)
    await t.createUser(domain.id, 'headreader', 'head-Pass1', ['reader'])
    const reader = await t.login('head.master', 'headreader', 'head-Pass1')
    expect((await t.request('HEAD', '/rest/v1/reference/extobjs', { token: reader })).status).toBe(200)
    expect((await t.request('POST', '/rest/v1/reference/extobjs', { token: reader, body: { type: 'x' } })).status).toBe(
      403,
    )
  })
})

describe('method override', () => {
  const raw = (method: string, override: string | null, path = '/rest/v1/reference/extobjs') =>
    t.app.handle(
      new Request(`http://test.local${path}`, {
        method,
        body: method === 'GET' || method === 'HEAD' ? undefined : '"rid"',
        headers: { authorization: `Bearer ${token}`, ...(override ? { 'x-http-method-override': override } : {}) },
      }),
    )
  test('POST + X-HTTP-Method-Override: LOOKUP is a LOOKUP (any letter case)', async () => {
    const res = await raw('POST', 'lookup')
    expect(res.status).toBe(200)
    expect(Array.isArray(await res.json())).toBe(true)
  })
  test('any other override value is a 400 naming the header', async () => {
    const res = await raw('POST', 'DELETE')
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error_details: unknown }).error_details).toEqual({
      field: 'X-HTTP-Method-Override',
    })
  })
  test('an override on another method than POST is a 400', async () => {
    const res = await raw('GET', 'LOOKUP')
    expect(res.status).toBe(400)
  })
  test('the URL is found first: an override to no resource is a 404, to a URL without POST a 405', async () => {
    expect((await raw('POST', 'DELETE', '/rest/v1/nothing/here')).status).toBe(404)
    const res = await raw('POST', 'DELETE', '/rest/v1/user/info')
    expect([res.status, res.headers.get('allow')]).toEqual([405, 'GET, HEAD, PATCH'])
  })
  test('a POST whose override names a method the URL lacks is refused as the POST it is', async () => {
    const res = await raw('POST', 'LOOKUP', '/rest/v1/iam/sessions')
    expect(res.status).toBe(405)
    expect(((await res.json()) as { error_message: string }).error_message).toStartWith('POST is not allowed here')
  })
  test('an override the URL does not serve is a 405', async () => {
    const res = await raw('POST', 'CLEAR')
    expect(res.status).toBe(405)
  })
  test('the permission check applies to the effective method', async () => {
    const domain = await t.createDomain('perm.master')
    await t.createUser(domain.id, 'plain', 'plain-Pass1', ['user'])
    const userToken = await t.login('perm.master', 'plain', 'plain-Pass1')
    const res = await t.call('LOOKUP', '/rest/v1/reference/extobjs', { token: userToken, body: 'x' })
    expect(res.status).toBe(403)
    expect(res.body.error_message).toContain('LOOKUP /rest/v1/reference/extobjs')
  })
})

test('an unexpected exception is a 1500 without internals, logged with the request id', async () => {
  const lines: string[] = []
  const deps = { ...t.deps, log: createLogger('error', (l) => lines.push(l)) }
  const boom = defineRoute({
    ...TEST_ROUTE,
    access: 'public',
    handle() {
      throw new Error('secret database detail')
    },
  })
  const app = createApp(deps, [{ url: '/boom', file: 'test', module: { GET: boom } }])
  const res = await app.handle(new Request('http://test.local/boom', { headers: { 'x-request-id': 'trace-9' } }))
  expect(res.status).toBe(500)
  const body = await res.json()
  expect(body).toEqual({ error_code: 1500, error_message: 'internal error' })
  expect(JSON.stringify(body)).not.toContain('secret')
  expect(lines.join('\n')).toContain('trace-9')
  expect(lines.join('\n')).toContain('secret database detail')
})
