// The gateway of one app process answers on the app's own thread: what it takes whole is answered
// in-process, upgrades and streaming bodies still cross the unix socket, all in order on one connection.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createApp } from '~/app'
import { startGateway, type Gateway } from '~/http/gateway/index'
import { INLINE_MAX_BODY } from '~/http/gateway/inline'
import { defineRoute, type RouteModule } from '~/http/route'
import { httpRequest, RawClient } from '../helpers/raw-http'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let gw: Gateway
const IDLE_MS = 600

const echo = defineRoute({
  access: 'public',
  async handle(req) {
    const body = await req.bytes()
    return { method: req.method, bytes: body.byteLength, client: req.clientAddress }
  },
})
const module: RouteModule = { GET: echo, POST: echo, LOOKUP: echo, SYNC: echo, CLEAR: echo }

beforeAll(async () => {
  t = await testService({ env: { MAX_BODY_BYTES: String(4 * INLINE_MAX_BODY) } })
  const app = createApp(t.deps, [{ url: '/echo', file: 'test', module }])
  gw = await startGateway(
    app,
    { host: '127.0.0.1', port: 0, maxBodyBytes: 4 * INLINE_MAX_BODY },
    { headTimeoutMs: 400, idleTimeoutMs: IDLE_MS },
  )
})
afterAll(async () => {
  await gw.stop()
  await t.close()
})

const chunked = (method: string, body: string) =>
  `${method} /echo HTTP/1.1\r\nhost: test.local\r\ntransfer-encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`

test('answers taken in-process and through the app socket keep their order on one connection', async () => {
  const c = await RawClient.open(gw.port)
  const large = 'x'.repeat(INLINE_MAX_BODY + 1)
  c.write(
    chunked('SYNC', '"streamed"') +
      httpRequest('GET', '/echo') +
      httpRequest('POST', '/echo', { 'content-type': 'application/json' }, JSON.stringify(large)) +
      httpRequest('LOOKUP', '/echo', {}, '"in"') +
      chunked('CLEAR', '"last"'),
  )
  const rs = await c.responses(5)
  expect(rs.map((r) => [r.status, JSON.parse(r.body).method, JSON.parse(r.body).bytes])).toEqual([
    [200, 'SYNC', 10],
    [200, 'GET', 0],
    [200, 'POST', large.length + 2],
    [200, 'LOOKUP', 4],
    [200, 'CLEAR', 6],
  ])
  for (const r of rs) {
    expect(JSON.parse(r.body).client).toBe('127.0.0.1')
    expect(Number(r.headers['content-length'])).toBe(Buffer.byteLength(r.body))
    expect(new Date(r.headers.date!).getTime()).toBeGreaterThan(Date.now() - 60_000)
  }
  c.end()
})

test('a body that arrives in pieces is read on until it is whole, then answered', async () => {
  const c = await RawClient.open(gw.port)
  await c.trickle(httpRequest('LOOKUP', '/echo', {}, JSON.stringify('y'.repeat(3000))), 700, 5)
  const [r] = await c.responses(1)
  expect(JSON.parse(r!.body)).toMatchObject({ method: 'LOOKUP', bytes: 3002 })
  c.end()
})

test('Expect: 100-continue gets its 100 before the body is sent (the app socket answers it)', async () => {
  const c = await RawClient.open(gw.port)
  c.write('POST /echo HTTP/1.1\r\nhost: test.local\r\ncontent-length: 4\r\nexpect: 100-continue\r\n\r\n')
  const until = Date.now() + 3000
  while (!c.raw().toString().startsWith('HTTP/1.1 100') && Date.now() < until) await Bun.sleep(5)
  expect(c.raw().toString()).toStartWith('HTTP/1.1 100')
  c.write('"ok"')
  const until2 = Date.now() + 3000
  while (!c.raw().toString().includes('"bytes":4') && Date.now() < until2) await Bun.sleep(5)
  expect(c.raw().toString()).toContain('"method":"POST"')
  c.end()
})

test('HEAD is answered without a body; Connection: close ends the connection after its answer', async () => {
  const c = await RawClient.open(gw.port)
  c.write(
    httpRequest('HEAD', '/echo') + httpRequest('GET', '/echo', { connection: 'close' }) + httpRequest('GET', '/echo'),
  )
  const rs = await c.responses(3, 1500)
  expect(rs.map((r) => r.status)).toEqual([200, 200])
  expect(rs[0]!.body).toBe('')
  expect(rs[1]!.headers.connection).toBe('close')
  expect(await c.closedWithin(1000)).toBe(true)
})

test('a connection left idle is closed after the idle timeout, one in use is not', async () => {
  const idle = await RawClient.open(gw.port)
  const busy = await RawClient.open(gw.port)
  const started = Date.now()
  for (let i = 0; i < 6; i++) {
    busy.write(httpRequest('GET', '/echo'))
    expect((await busy.responses(i + 1)).length).toBe(i + 1)
    await Bun.sleep(IDLE_MS / 3)
  }
  expect(await idle.closedWithin(3000)).toBe(true)
  expect(Date.now() - started).toBeGreaterThanOrEqual(IDLE_MS)
  busy.write(httpRequest('GET', '/echo'))
  expect((await busy.responses(7)).length).toBe(7)
  busy.end()
})
