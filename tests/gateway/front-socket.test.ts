// Websockets the gateway's front serves itself (src/gateway/front-socket.ts): the app decides the
// upgrade in-process, the front answers 101 and speaks RFC 6455 on the client's own connection, with
// no connection to the app's Bun.serve; refusals are HTTP answers after which the connection goes on.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import type { SocketHandlers } from '~/ws/endpoint'
import type { Chunk } from '~/gateway/conn-state'
import type { Conn } from '~/gateway/connection'
import { FrontSocket, type SocketIo, type Topics } from '~/gateway/front-socket'
import { closePayload } from '~/gateway/ws-frames'
import { httpRequest, RawClient } from '../helpers/raw-http'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
let port: number
beforeAll(async () => {
  t = await testService({ listen: true })
  token = await t.adminIn('master')
  port = Number(new URL(t.service.url!).port)
})
afterAll(() => t.close())

const KEY = 'dGhlIHNhbXBsZSBub25jZQ=='
const upgrade = (headers: Record<string, string> = {}, path = '/ws') =>
  httpRequest('GET', path, {
    connection: 'Upgrade',
    upgrade: 'websocket',
    'sec-websocket-version': '13',
    'sec-websocket-key': KEY,
    authorization: `Bearer ${token}`,
    ...headers,
  })

/** A client frame: masked, FIN unless `more`. */
function frame(opcode: number, payload: Buffer | string, more = false): Buffer {
  const body = Buffer.from(payload)
  const key = Buffer.from([7, 1, 99, 250])
  const n = body.length
  const head =
    n < 126
      ? Buffer.from([(more ? 0 : 0x80) | opcode, 0x80 | n])
      : Buffer.from([(more ? 0 : 0x80) | opcode, 0xfe, n >> 8, n & 255])
  return Buffer.concat([head, key, body.map((b, i) => b ^ key[i % 4]!)])
}

/** The server's frames after the 101's head: [opcode, payload]. */
function serverFrames(raw: Buffer): [number, Buffer][] {
  const frames: [number, Buffer][] = []
  let at = raw.indexOf('\r\n\r\n') + 4
  while (raw.length - at >= 2) {
    let n = raw[at + 1]! & 0x7f
    let head = 2
    if (n === 126) {
      n = raw.readUInt16BE(at + 2)
      head = 4
    }
    if (raw.length - at < head + n) break
    frames.push([raw[at]! & 0x0f, raw.subarray(at + head, at + head + n)])
    at += head + n
  }
  return frames
}

async function until(check: () => boolean, what: string, ms = 3000) {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what} did not happen within ${ms} ms`)
    await Bun.sleep(5)
  }
}

const subscribe = JSON.stringify(['subscribe', { id: 's', expires: 60, events: ['statesevents.*'] }])

test('the front answers 101 itself: the accept key, the request id, frames sent behind the request, a ping answered', async () => {
  const c = await RawClient.open(port)
  c.write(Buffer.concat([Buffer.from(upgrade()), frame(0x1, subscribe)])) // the frame in the same write
  const [answer] = await c.responses(1)
  expect(answer?.status).toBe(101)
  const head = c.raw().toString('latin1', 0, c.raw().indexOf('\r\n\r\n'))
  expect(head).toContain('Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=')
  expect(head).toMatch(/x-request-id: \S+/i)
  await until(() => serverFrames(c.raw()).length === 1, 'the subscribe answer')
  expect(JSON.parse(serverFrames(c.raw())[0]![1].toString())[0]).toBe('subscribe')
  c.write(frame(0x9, 'are you there'))
  await until(() => serverFrames(c.raw()).length === 2, 'the pong')
  expect(serverFrames(c.raw())[1]).toEqual([0xa, Buffer.from('are you there')])
  c.end()
})

test('a message in fragments is one frame to the endpoint; a close is answered with its code and ends the socket', async () => {
  await until(() => t.service.sockets.stats().sockets === 0, 'the sockets of the test before closing')
  const c = await RawClient.open(port)
  c.write(upgrade())
  expect((await c.responses(1))[0]?.status).toBe(101)
  const half = subscribe.length >> 1
  c.write(Buffer.concat([frame(0x1, subscribe.slice(0, half), true), frame(0x0, subscribe.slice(half))]))
  await until(() => serverFrames(c.raw()).length === 1, 'the subscribe answer')
  expect(t.service.sockets.stats()).toEqual({ sockets: 1, subscriptions: 1 })
  c.write(frame(0x8, closePayload(4321, 'done here')))
  expect(await c.closedWithin(3000)).toBe(true)
  expect(serverFrames(c.raw()).at(-1)).toEqual([0x8, closePayload(4321, '')])
  await until(() => t.service.sockets.stats().sockets === 0, 'the endpoint hearing the close')
})

test('a frame that breaks the protocol closes the socket with its code (1007: text that is not UTF-8)', async () => {
  const c = await RawClient.open(port)
  c.write(upgrade())
  expect((await c.responses(1))[0]?.status).toBe(101)
  c.write(frame(0x1, Buffer.from([0xc3, 0x28])))
  expect(await c.closedWithin(3000)).toBe(true)
  const [opcode, payload] = serverFrames(c.raw()).at(-1)!
  expect([opcode, payload.readUInt16BE(0)]).toEqual([0x8, 1007])
})

test('a refused upgrade is an answer like any other, and the connection goes on with HTTP', async () => {
  const c = await RawClient.open(port)
  c.write(upgrade({ authorization: 'Bearer not-a-session' }))
  const [refused] = await c.responses(1)
  expect(refused?.status).toBe(401)
  expect(JSON.parse(refused!.body).error_message).toContain('session')
  c.write(httpRequest('GET', '/healthz'))
  const answers = await c.responses(2)
  expect(answers[1]?.status).toBe(200)
  c.end()
})

test('a handshake Bun.serve would not take is a 426 (version) or a 400; an upgrade to a path with no endpoint is answered as a request', async () => {
  const c = await RawClient.open(port)
  c.write(upgrade({ 'sec-websocket-version': '8' }))
  const [version] = await c.responses(1)
  expect(version?.status).toBe(426) // RFC 6455 4.4, as Bun.serve answers
  expect(version?.headers['sec-websocket-version']).toBe('13')
  c.end()
  const k = await RawClient.open(port) // an upgrade is a connection's first request only
  k.write(upgrade({ 'sec-websocket-key': 'short' }))
  const [bad] = await k.responses(1)
  expect(bad?.status).toBe(400)
  expect(JSON.parse(bad!.body).error_message).toContain('not a websocket upgrade request')
  k.end()
  const d = await RawClient.open(port)
  d.write(upgrade({}, '/healthz'))
  expect((await d.responses(1))[0]?.status).toBe(200)
  d.end()
})

test('a socket costs the process one descriptor: no connection to the app behind it', async () => {
  const fds = () => readdirSync('/proc/self/fd').length
  const before = fds()
  const clients = await Promise.all(Array.from({ length: 20 }, () => RawClient.open(port)))
  for (const c of clients) c.write(upgrade())
  for (const c of clients) expect((await c.responses(1))[0]?.status).toBe(101)
  // this process holds both ends of each: the client's and the front's (a relay added two more)
  expect(fds() - before).toBeLessThanOrEqual(20 * 2 + 2)
  for (const c of clients) c.end()
})

/** A socket on a connection of its own whose writes are only queued (nothing reads them), with its endpoint's calls. */
function socketAlone(
  limits: { idleTimeoutSec?: number; backpressureLimit?: number } = {},
  topics: Topics = new Map(),
  kernelTakesAll = false,
) {
  const c = { toClient: [] as Chunk[], clientSide: 'open', peer: '192.0.2.1' } as unknown as Conn
  const heard: string[] = []
  const io: SocketIo = {
    toClient: (conn, data) => void conn.toClient.push(data),
    opened: () => heard.push('opened'),
    closing: () => heard.push('closing'),
    refused: () => heard.push('refused'),
    // what waits for the turn's end written now: taken whole by a client that reads, or kept
    flush: (conn) => void (kernelTakesAll && conn.toClient.splice(0)),
  }
  const handlers: SocketHandlers = {
    upgrade: async () => ({}),
    message: (_ws, m) => void heard.push(`message ${m}`),
    close: (_ws, code) => void heard.push(`close ${code}`),
  }
  const admitted = {
    handlers,
    data: { path: '/ws', attached: null },
    headers: {},
    limits: {
      idleTimeoutSec: limits.idleTimeoutSec ?? 120,
      maxPayloadLength: 1024,
      backpressureLimit: limits.backpressureLimit,
    },
  }
  return { c, heard, socket: new FrontSocket(c, admitted, io, topics) }
}
const opcodes = (c: Conn) => c.toClient.map((f) => (f as Buffer)[0]! & 0x0f)

test("a silent client is pinged at half the idle timeout and closed at its end (the front's clock)", async () => {
  const { c, heard, socket } = socketAlone({ idleTimeoutSec: 10 })
  const start = Date.now()
  socket.tick(start + 4_000)
  expect(opcodes(c)).toEqual([])
  socket.tick(start + 5_000)
  socket.tick(start + 6_000) // one ping until the client is heard again
  expect(opcodes(c)).toEqual([0x9])
  socket.read(frame(0xa, '')) // its pong: heard now, the clock starts again
  const heardAt = Date.now()
  socket.tick(heardAt + 4_000)
  expect(opcodes(c)).toEqual([0x9])
  socket.tick(heardAt + 10_000)
  expect(opcodes(c)).toEqual([0x9, 0x8])
  await Bun.sleep(0)
  expect(heard).toEqual(['closing', 'close 1001'])
})

test('a publish reaches the other members of the topic; one past its backpressure limit is closed instead', async () => {
  const topics: Topics = new Map()
  const a = socketAlone({ backpressureLimit: 100 }, topics)
  const b = socketAlone({ backpressureLimit: 100 }, topics)
  const other = socketAlone({ backpressureLimit: 100 }, topics)
  a.socket.subscribe('t')
  b.socket.subscribe('t')
  other.socket.subscribe('u')
  a.socket.publish('t', 'x'.repeat(60))
  expect([opcodes(a.c), opcodes(b.c), opcodes(other.c)]).toEqual([[], [0x1], []])
  a.socket.publish('t', 'y'.repeat(60)) // b holds 62 bytes unread: 124 would pass its 100
  expect(opcodes(b.c)).toEqual([0x1, 0x8])
  await Bun.sleep(0)
  expect(b.heard).toEqual(['closing', 'close 1008'])
  expect(topics.get('t')?.size).toBe(1) // b left its topics
  b.socket.closed() // the connection's own close after it: the endpoint heard it once
  expect(b.heard).toEqual(['closing', 'close 1008'])
})

test("what only waits for the turn's end is not backpressure: a burst to a client that reads is flushed, not closed", async () => {
  const { c, heard, socket } = socketAlone({ backpressureLimit: 200 * 1024 }, new Map(), true)
  for (let i = 0; i < 1000; i++) socket.send('z'.repeat(1024)) // 1 MiB in one turn, five times the limit
  expect(opcodes(c).includes(0x8)).toBe(false)
  await Bun.sleep(0)
  expect(heard).toEqual([])
  expect(socket.getBufferedAmount()).toBeLessThanOrEqual(64 * 1024 + 1030)
})

test('after a close, nothing more the client sent reaches the endpoint', () => {
  const { heard, socket } = socketAlone()
  socket.read(frame(0x1, 'before'))
  socket.close(4001, 'the session has ended')
  socket.read(frame(0x1, 'after'))
  expect(heard).toEqual(['message before', 'closing'])
})

test('an upgrade the front cannot view as the app would (absolute-form target) is its 400, not a socket of Bun.serve', async () => {
  const c = await RawClient.open(port)
  c.write(upgrade().replace('GET /ws', `GET http://test.local/ws`))
  const [answer] = await c.responses(1)
  expect(answer?.status).toBe(400)
  expect(JSON.parse(answer!.body).error_message).toContain('must have a path as its target')
  expect(await c.closedWithin(3000)).toBe(true)
})

test('a HEAD with Upgrade to a path with no endpoint is answered without a body, and Connection: close is kept', async () => {
  const c = await RawClient.open(port)
  c.write(
    httpRequest('HEAD', '/healthz', {
      connection: 'Upgrade, close',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': KEY,
    }),
  )
  expect(await c.closedWithin(3000)).toBe(true)
  const raw = c.raw().toString('latin1')
  expect(raw.startsWith('HTTP/1.1 200')).toBe(true)
  expect(raw.endsWith('\r\n\r\n')).toBe(true) // the head alone
})
