// The gateway over real sockets: custom methods reach their handlers; framing, keep-alive, pipelining,
// chunked bodies and websocket upgrades pass through; malformed or slow heads and chunks larger than
// MAX_BODY_BYTES are refused.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createApp } from '~/app'
import { startGateway, type Gateway } from '~/gateway/index'
import { MAX_HEAD_BYTES } from '~/gateway/request-stream'
import { codeOf } from '~/errors'
import { echoModule } from '../helpers/echo-route'
import { httpRequest, RawClient } from '../helpers/raw-http'
import { testService, type TestService } from '../helpers/service'

/** A request id the service makes: its process's prefix and a counter. */
const GENERATED_ID = /^[0-9a-f]{8}-[0-9a-z]+$/

let t: TestService
let gw: Gateway
const HEAD_TIMEOUT_MS = 400

const echoes = echoModule({ untrusted: 'x-untr-ip' })

beforeAll(async () => {
  t = await testService({ env: { MAX_BODY_BYTES: String(64 * 1024 * 1024) } })
  const app = createApp(t.deps, [{ url: '/echo', file: 'test', module: echoes }]).ws(
    '/ws',
    {
      upgrade: async () => null,
      message(ws, message) {
        ws.send(`echo:${typeof message === 'string' ? message : JSON.stringify(message)}`)
      },
    },
    { idleTimeoutSec: 120, maxPayloadLength: 1024 * 1024 },
  )
  gw = await startGateway(
    app,
    { host: '127.0.0.1', port: 0, maxBodyBytes: 64 * 1024 * 1024 },
    { headTimeoutMs: HEAD_TIMEOUT_MS },
  )
})
afterAll(async () => {
  await gw.stop()
  await t.close()
})

const open = () => RawClient.open(gw.port)
const json = (r: { body: string }) => JSON.parse(r.body)

describe('custom methods reach their handlers', () => {
  for (const method of ['LOOKUP', 'SYNC', 'CLEAR']) {
    test(`${method} with a body`, async () => {
      const c = await open()
      c.write(httpRequest(method, '/echo', { 'content-type': 'application/json' }, '"key"'))
      const [r] = await c.responses(1)
      expect(r!.status).toBe(200)
      expect(json(r!)).toMatchObject({ method, bytes: 5, client: '127.0.0.1' })
      c.end()
    })
  }
  test('CLEAR without a body', async () => {
    const c = await open()
    c.write(httpRequest('CLEAR', '/echo'))
    expect(json((await c.responses(1))[0]!)).toMatchObject({ method: 'CLEAR', bytes: 0 })
    c.end()
  })
  test('the real service answers LOOKUP on the public port', async () => {
    const svc = await testService({ listen: true, env: { GATEWAY: 'on' } })
    const token = await svc.login('master', 'admin', 'admin-Secret_1')
    const created = await svc.call('POST', '/rest/v1/reference/extobjs', { token, body: { type: 'wire' } })
    const c = await RawClient.open(Number(new URL(svc.service.url!).port))
    c.write(httpRequest('LOOKUP', '/rest/v1/reference/extobjs', { authorization: `Bearer ${token}` }, '"wire"'))
    const [r] = await c.responses(1)
    expect(r!.status).toBe(200)
    expect(JSON.parse(r!.body)).toEqual([created.body.id])
    c.end()
    await svc.close()
  })
})

describe('framing passes through', () => {
  test('keep-alive: GET, LOOKUP, GET on one connection', async () => {
    const c = await open()
    for (const m of ['GET', 'LOOKUP', 'GET']) {
      const n = (await c.responses(0)).length
      c.write(httpRequest(m, '/echo', {}, m === 'LOOKUP' ? '"k"' : undefined))
      const rs = await c.responses(n + 1)
      expect(json(rs[n]!).method).toBe(m)
    }
    c.end()
  })

  test('three pipelined requests in one write are answered in order', async () => {
    const c = await open()
    c.write(
      httpRequest('LOOKUP', '/echo', {}, '"abc"') +
        httpRequest('POST', '/echo', {}, '{"x":1}') +
        httpRequest('GET', '/echo'),
    )
    const rs = await c.responses(3)
    expect(rs.map((r) => [json(r).method, json(r).bytes])).toEqual([
      ['LOOKUP', 5],
      ['POST', 7],
      ['GET', 0],
    ])
    c.end()
  })

  test('a chunked SYNC body in small TCP pieces, with a chunk extension, then a GET', async () => {
    const c = await open()
    const body = '5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\n\r\n'
    await c.trickle(
      `SYNC /echo HTTP/1.1\r\nhost: test.local\r\ntransfer-encoding: chunked\r\n\r\n${body}${httpRequest('GET', '/echo')}`,
      7,
      1,
    )
    const rs = await c.responses(2)
    expect(rs.map((r) => [json(r).method, json(r).bytes])).toEqual([
      ['SYNC', 11],
      ['GET', 0],
    ])
    c.end()
  })

  test('a LOOKUP sent byte by byte', async () => {
    const c = await open()
    await c.trickle(httpRequest('LOOKUP', '/echo', {}, '"slow"'), 1, 0)
    expect(json((await c.responses(1))[0]!)).toMatchObject({ method: 'LOOKUP', bytes: 6 })
    c.end()
  })

  test('a 4 MB LOOKUP body, then a request on the same connection', async () => {
    const c = await open()
    c.write(httpRequest('LOOKUP', '/echo', {}, `"${'x'.repeat(4 * 1024 * 1024)}"`) + httpRequest('GET', '/echo'))
    const rs = await c.responses(2, 10_000)
    expect(rs.map((r) => [json(r).method, json(r).bytes])).toEqual([
      ['LOOKUP', 4 * 1024 * 1024 + 2],
      ['GET', 0],
    ])
    c.end()
  })

  test('a client that half-closes right after its request still gets the answer', async () => {
    const c = await open()
    c.write(httpRequest('LOOKUP', '/echo', {}, '"k"'))
    c.socket.end()
    expect(json((await c.responses(1))[0]!).method).toBe('LOOKUP')
  })

  test('a client-sent X-Real-IP is never believed', async () => {
    const c = await open()
    c.write(httpRequest('GET', '/echo', { 'X-Real-IP': '6.6.6.6' }))
    expect(json((await c.responses(1))[0]!)).toMatchObject({ client: '127.0.0.1', untrusted: '6.6.6.6' })
    c.end()
  })
})

describe('websocket', () => {
  test('an upgrade as the first request is tunnelled', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${gw.port}/ws`)
    const reply = await new Promise<string>((resolve, reject) => {
      ws.onopen = () => ws.send('hi')
      ws.onmessage = (e) => resolve(String(e.data))
      ws.onerror = () => reject(new Error('websocket failed'))
    })
    expect(reply).toBe('echo:hi')
    ws.close()
  })
  test('an Upgrade on a later request of a connection is not honoured', async () => {
    const c = await open()
    c.write(httpRequest('GET', '/echo'))
    await c.responses(1)
    c.write(
      httpRequest('GET', '/ws', {
        upgrade: 'websocket',
        connection: 'upgrade',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        'sec-websocket-version': '13',
      }),
    )
    c.write(httpRequest('LOOKUP', '/echo', {}, '"after"'))
    const rs = await c.responses(3)
    expect(rs[1]!.status).not.toBe(101)
    expect(json(rs[2]!).method).toBe('LOOKUP')
    c.end()
  })
})

describe('refused', () => {
  const refused = async (data: string, status: number) => {
    const c = await open()
    c.write(data)
    const rs = await c.responses(1)
    expect(rs.at(-1)!.status).toBe(status)
    expect(JSON.parse(rs.at(-1)!.body).error_code).toBe(codeOf(status))
    expect(rs.at(-1)!.headers['x-request-id']).toMatch(GENERATED_ID) // as every answer of the service
    expect(await c.closedWithin(3000)).toBe(true)
  }
  test('whitespace before the colon', () => refused('GET /echo HTTP/1.1\r\nhost : x\r\n\r\n', 400))
  test('Content-Length and Transfer-Encoding together', () =>
    refused('POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n', 400))
  test('two Content-Length headers', () =>
    refused('POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 1\r\ncontent-length: 1\r\n\r\nx', 400))
  test('obsolete line folding', () => refused('GET /echo HTTP/1.1\r\nhost: x\r\nx-a: 1\r\n  folded\r\n\r\n', 400))
  test('a bare LF in the head', () => refused('GET /echo HTTP/1.1\nhost: x\r\n\r\n', 400))
  test('a transfer coding other than chunked', () =>
    refused('POST /echo HTTP/1.1\r\nhost: x\r\ntransfer-encoding: gzip\r\n\r\n', 400))
  test('a head larger than the limit: 431', () =>
    refused(`GET /echo HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(MAX_HEAD_BYTES)}\r\n\r\n`, 431))
  test('a chunk size beyond 2^53: 413', () =>
    refused('POST /echo HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nfffffffffffffffffff\r\n', 413))
  test('requests already forwarded are answered before the 400', async () => {
    const c = await open()
    c.write(`${httpRequest('LOOKUP', '/echo', {}, '"ok"')}GET /echo HTTP/1.1\r\nbad header\r\n\r\n`)
    const rs = await c.responses(2)
    expect(rs.map((r) => r.status)).toEqual([200, 400])
    expect(json(rs[0]!).method).toBe('LOOKUP')
  })
  test('an incomplete head left idle is answered 408', async () => {
    const c = await open()
    c.write('GET /echo HTTP/1.1\r\nhost: x\r\n')
    const started = Date.now()
    const rs = await c.responses(1, 5000)
    expect(rs[0]!.status).toBe(408)
    expect(rs[0]!.headers['x-request-id']).toMatch(GENERATED_ID)
    expect(Date.now() - started).toBeGreaterThanOrEqual(HEAD_TIMEOUT_MS - 50)
  })
})

describe('chunk sizes are capped at the body limit the gateway was started with', () => {
  const LIMIT = 1024
  let small: Gateway
  beforeAll(async () => {
    const app = createApp(t.deps, [{ url: '/echo', file: 'test', module: echoes }])
    small = await startGateway(app, { host: '127.0.0.1', port: 0, maxBodyBytes: LIMIT })
  })
  afterAll(() => small.stop())
  const chunked = (method: string, size: number) =>
    `${method} /echo HTTP/1.1\r\nhost: test.local\r\ntransfer-encoding: chunked\r\n\r\n${size.toString(16)}\r\n`

  test('a chunk of exactly the limit is relayed', async () => {
    const c = await RawClient.open(small.port)
    c.write(`${chunked('SYNC', LIMIT)}${'x'.repeat(LIMIT)}\r\n0\r\n\r\n`)
    expect(json((await c.responses(1))[0]!)).toMatchObject({ method: 'SYNC', bytes: LIMIT })
    c.end()
  })
  test('one byte more is answered 413 as soon as the size line arrives, after the earlier request', async () => {
    const c = await RawClient.open(small.port)
    c.write(httpRequest('GET', '/echo') + chunked('LOOKUP', LIMIT + 1))
    const rs = await c.responses(2)
    expect(rs.map((r) => r.status)).toEqual([200, 413])
    expect(json(rs[1]!).error_code).toBe(2413)
    expect(await c.closedWithin(3000)).toBe(true)
  })
})

test('GATEWAY=off binds Bun.serve directly: standard methods and POST + override work there', async () => {
  const svc = await testService({ listen: true, env: { GATEWAY: 'off' } })
  const token = await svc.login('master', 'admin', 'admin-Secret_1')
  const base = svc.service.url!
  const list = await fetch(`${base}/rest/v1/reference/extobjs`, { headers: { authorization: `Bearer ${token}` } })
  expect(list.status).toBe(200)
  const lookup = await fetch(`${base}/rest/v1/reference/extobjs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'x-http-method-override': 'LOOKUP' },
    body: '"none"',
  })
  expect(lookup.status).toBe(404)
  expect(((await lookup.json()) as { error_message: string }).error_message).toBe('lookup failed')
  // a Host that would move the path the kernel routes by is refused there too
  const c = await RawClient.open(Number(new URL(base).port))
  c.write('GET /healthz HTTP/1.1\r\nhost: x/metrics?\r\n\r\n')
  const [r] = await c.responses(1)
  expect(r!.status).toBe(400)
  expect(JSON.parse(r!.body).error_details.field).toBe('host')
  c.end()
  await svc.close()
})
