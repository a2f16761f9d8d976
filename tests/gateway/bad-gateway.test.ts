// A request the front sends on to the app (here a chunked body) when the app's socket cannot be
// reached: a 502 of the gateway's own, with a request id, and the connection ends.
import { afterAll, expect, test } from 'bun:test'
import { startFront } from '~/gateway/front'
import { RawClient } from '../helpers/raw-http'

const front = startFront({
  hostname: '127.0.0.1',
  port: 0,
  upstream: '/nonexistent/platform-app.sock',
  maxBodyBytes: 1 << 20,
  serve: async () => ({ status: 200, headers: {}, cookies: [], body: 'in-process', bytes: 10 }),
})
afterAll(() => front.stop(true))

test('the app out of reach: 502 with a request id, then the connection ends', async () => {
  const c = await RawClient.open(front.port)
  // answered in-process first: the front works
  c.write('GET /x HTTP/1.1\r\nhost: x\r\n\r\n')
  expect((await c.responses(1))[0]!.body).toBe('in-process')
  c.write('POST /x HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n')
  const [, bad] = await c.responses(2)
  expect(bad!.status).toBe(502)
  expect(bad!.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/)
  expect(await c.closedWithin(3000)).toBe(true)
})
