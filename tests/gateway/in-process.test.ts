// The gateway of one app process answers on the app's own thread: what it takes whole is answered
// in-process, upgrades and streaming bodies still cross the unix socket, all in order on one connection.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createApp } from '~/app'
import { startGateway, type Gateway } from '~/gateway/index'
import { INLINE_MAX_BODY } from '~/gateway/inline'
import { TEST_ROUTE } from '../helpers/test-route'
import { defineRoute } from '~/http/route'
import { echoModule } from '../helpers/echo-route'
import { httpRequest, RawClient } from '../helpers/raw-http'
import { testService, type TestService } from '../helpers/service'
import { JsonText } from '~storage/json-text'

let t: TestService
let gw: Gateway
const IDLE_MS = 600

const module = echoModule({ cookie: 'cookie' })

/** Answers once the test opens the gate: an in-process answer in flight for as long as a test needs. */
let gate = Promise.withResolvers<void>()
const held = defineRoute({
  ...TEST_ROUTE,
  access: 'public',
  async handle() {
    await gate.promise
    return { held: true }
  },
})
/** A large answer, counting how many were made. */
let bigAnswers = 0
const BIG = 'b'.repeat(256 * 1024)
const big = defineRoute({
  ...TEST_ROUTE,
  access: 'public',
  handle() {
    bigAnswers++
    return { big: BIG }
  },
})
/** An answer larger than the sockets' buffers: part of it waits in the gateway's queue. */
const HUGE = 'h'.repeat(12 * 1024 * 1024)
const huge = defineRoute({
  ...TEST_ROUTE,
  access: 'public',
  handle: () => ({ huge: HUGE }),
})
/** Text beyond ASCII, in the body (as a stored document is sent) and in a header. */
const UNICODE = JSON.stringify({ text: 'ünïcødé ✓ 🚀', n: 1 })
const unicode = defineRoute({
  ...TEST_ROUTE,
  access: 'public',
  handle(req) {
    req.headers['x-note'] = 'café'
    return new JsonText(UNICODE)
  },
})

beforeAll(async () => {
  t = await testService({ env: { MAX_BODY_BYTES: String(4 * INLINE_MAX_BODY) } })
  const app = createApp(t.deps, [
    { url: '/echo', file: 'test', module },
    { url: '/held', file: 'test', module: { GET: held } },
    { url: '/big', file: 'test', module: { GET: big } },
    { url: '/huge', file: 'test', module: { GET: huge } },
    { url: '/unicode', file: 'test', module: { GET: unicode } },
  ])
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

test('answers beyond ASCII (body or header) are framed by their length in bytes, pipelined among others', async () => {
  const c = await RawClient.open(gw.port)
  c.write(httpRequest('GET', '/unicode') + httpRequest('GET', '/echo') + httpRequest('GET', '/unicode'))
  const rs = await c.responses(3)
  expect(rs.map((r) => r.status)).toEqual([200, 200, 200])
  for (const r of [rs[0]!, rs[2]!]) {
    expect(r.body).toBe(UNICODE)
    expect(Number(r.headers['content-length'])).toBe(Buffer.byteLength(UNICODE))
    expect(Buffer.from(r.headers['x-note']!, 'latin1').toString()).toBe('café') // as UTF-8, as before
  }
  expect(JSON.parse(rs[1]!.body).method).toBe('GET')
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

test('a half-close while an in-process answer is in flight, after a relayed request: both answers arrive', async () => {
  gate = Promise.withResolvers<void>()
  const c = await RawClient.open(gw.port)
  c.write(chunked('SYNC', '"relayed"') + httpRequest('GET', '/held'))
  c.socket.end() // FIN: the app's socket is ended only once the held answer is out
  await Bun.sleep(50)
  gate.resolve()
  const rs = await c.responses(2)
  expect(rs.map((r) => r.status)).toEqual([200, 200])
  expect(JSON.parse(rs[1]!.body)).toEqual({ held: true })
  expect(await c.closedWithin(2000)).toBe(true)
})

test('a malformed request behind a slow in-process answer: the answer first, then the 400', async () => {
  gate = Promise.withResolvers<void>()
  const c = await RawClient.open(gw.port)
  c.write(`${httpRequest('GET', '/held')}GET /echo HTTP/1.1\r\nbad header\r\n\r\n`)
  await Bun.sleep(2200) // past the gateway's grace for answers already under way
  gate.resolve()
  const rs = await c.responses(2)
  expect(rs.map((r) => r.status)).toEqual([200, 400])
})

test('answers made in one turn go out in one write: five pipelined requests, one write of five answers', async () => {
  const c = await RawClient.open(gw.port)
  // the writes of Bun's TCP sockets (the gateway's client sockets among them) are counted meanwhile
  const probe = await Bun.connect({ hostname: '127.0.0.1', port: gw.port, socket: { data() {} } })
  const sockets = Object.getPrototypeOf(probe) as { write: (...args: unknown[]) => number }
  probe.end()
  const write = sockets.write
  let writes = 0
  sockets.write = function (this: unknown, ...args: unknown[]) {
    writes++
    return write.apply(this, args)
  }
  try {
    c.write(httpRequest('GET', '/echo').repeat(5))
    const answers = await c.responses(5)
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200])
  } finally {
    sockets.write = write
  }
  expect(writes).toBe(1)
  c.end()
})

test('repeated header lines are read as Bun reads them: cookies joined with "; ", others with ", "', async () => {
  const c = await RawClient.open(gw.port)
  c.write(
    'GET /echo HTTP/1.1\r\nhost: test.local\r\ncookie: RSession=abc\r\nCookie: theme=dark\r\nx-a: 1\r\nX-A: 2\r\n\r\n',
  )
  const [r] = await c.responses(1)
  expect(JSON.parse(r!.body).cookie).toBe('RSession=abc; theme=dark')
  c.end()
})

test('a client that reads nothing is not answered further: pipelined requests wait for it', async () => {
  const c = await RawClient.open(gw.port)
  c.socket.pause()
  bigAnswers = 0
  c.write(httpRequest('GET', '/big').repeat(60))
  await Bun.sleep(500)
  // what the sockets' buffers hold, not 60 answers of 256 KiB in the gateway's memory
  expect(bigAnswers).toBeLessThan(30)
  c.socket.resume()
  expect((await c.responses(60, 10_000)).length).toBe(60)
  c.end()
})

test('a slow reader gets its whole answer even past the idle timeout', async () => {
  const c = await RawClient.open(gw.port)
  c.socket.pause()
  c.write(httpRequest('GET', '/huge'))
  await Bun.sleep(IDLE_MS * 2)
  c.socket.resume()
  const [r] = await c.responses(1, 5000)
  expect(r!.body.length).toBe(JSON.stringify({ huge: HUGE }).length)
  c.end()
})

test('a body that stops coming, in-process or relayed, ends the connection after the idle timeout', async () => {
  const inline = await RawClient.open(gw.port)
  inline.write('POST /echo HTTP/1.1\r\nhost: test.local\r\ncontent-length: 100\r\n\r\n0123456789')
  const relayed = await RawClient.open(gw.port)
  relayed.write('SYNC /echo HTTP/1.1\r\nhost: test.local\r\ntransfer-encoding: chunked\r\n\r\na\r\n0123456789\r\n')
  expect(await inline.closedWithin(IDLE_MS + 2500)).toBe(true)
  expect(await relayed.closedWithin(IDLE_MS + 2500)).toBe(true)
})

test('a Host that is no host name or address (it would move the path routed by) is a 400, in-process or relayed', async () => {
  for (const request of [
    'GET /echo HTTP/1.1\r\nhost: test.local/held?\r\n\r\n',
    'SYNC /echo HTTP/1.1\r\nhost: x?y\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n',
    'GET /echo HTTP/1.1\r\nhost: a\r\nhost: b\r\n\r\n',
  ]) {
    const c = await RawClient.open(gw.port)
    c.write(request)
    const [r] = await c.responses(1)
    expect(r!.status).toBe(400)
  }
  const c = await RawClient.open(gw.port)
  c.write(httpRequest('GET', '/echo', { host: '[::1]:8080' }))
  expect((await c.responses(1))[0]!.status).toBe(200)
  c.end()
})
