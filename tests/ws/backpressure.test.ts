// A websocket client that stops reading is closed once what waits for it passes WS_BACKPRESSURE_BYTES
// (4008, with the reason), through the gateway's relay, instead of the service buffering without bound.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { CLOSE_TOO_SLOW } from '~/ws/hub'
import { httpRequest, RawClient } from '../helpers/raw-http'
import { testService, type TestService } from '../helpers/service'

let t: TestService
beforeAll(async () => {
  t = await testService({ listen: true, env: { WS_BACKPRESSURE_BYTES: String(256 * 1024) } })
})
afterAll(() => t.close())

/** A client's text frame: masked, as RFC 6455 requires of clients. */
function clientFrame(text: string): Buffer {
  const payload = Buffer.from(text)
  const mask = Buffer.from([1, 2, 3, 4])
  const head =
    payload.length < 126
      ? Buffer.from([0x81, 0x80 | payload.length])
      : Buffer.from([0x81, 0xfe, payload.length >> 8, payload.length & 255])
  return Buffer.concat([head, mask, payload.map((b, i) => b ^ mask[i % 4]!)])
}

test('a subscriber that stops reading is closed with 4008 once its backlog passes the bound', async () => {
  const token = await t.adminIn('master')
  const c = await RawClient.open(Number(new URL(t.service.url!).port))
  c.write(
    httpRequest('GET', '/ws', {
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64'),
      authorization: `Bearer ${token}`,
    }),
  )
  expect((await c.responses(1))[0]?.status).toBe(101)
  c.write(clientFrame(JSON.stringify(['subscribe', { id: 's', expires: 60, events: ['statesevents.*'] }])))
  while (!c.raw().includes('"subscribe"')) await Bun.sleep(5)
  c.socket.pause() // reads nothing more: the kernel's buffers fill, then the service's
  expect(t.service.sockets.stats().sockets).toBe(1)
  const data = { blob: 'x'.repeat(64 * 1024) }
  const time = new Date().toISOString()
  const domain = (await t.deps.access.domainInfo(t.master.id))!.id
  for (let i = 0; i < 1000 && t.service.sockets.stats().sockets > 0; i++) {
    await t.deps.bus.publish({ class: 'statesevents', event: 'changed', domain, time, objects: [], data })
    if (i % 20 === 19) await Bun.sleep(10) // the pushes go out meanwhile
  }
  const until = Date.now() + 5000
  while (t.service.sockets.stats().sockets > 0 && Date.now() < until) await Bun.sleep(20)
  expect(t.service.sockets.stats().sockets).toBe(0)
  // once it reads again, the close frame is at the end of what was held for it
  c.socket.resume()
  expect(await c.closedWithin(5000)).toBe(true)
  const raw = c.raw()
  const close = raw.lastIndexOf(Buffer.from([0x88]))
  expect(raw.readUInt16BE(close + 2)).toBe(CLOSE_TOO_SLOW)
  expect(raw.toString('latin1', close + 4)).toContain('resume with since')
})
