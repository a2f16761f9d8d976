// The Host header is read the same on both listeners: HTTP/1.0 may leave it out (the route is still
// found from the target), HTTP/1.1 may not: a 400, with the service's error body through the gateway
// (Bun.serve's own, on the direct listener, has none), and the connection ends.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { RawClient } from '../helpers/raw-http'
import { testService, type TestService } from '../helpers/service'

for (const gateway of ['off', 'on'] as const) {
  describe(`GATEWAY=${gateway}`, () => {
    let t: TestService
    let port: number
    beforeAll(async () => {
      t = await testService({ listen: true, env: { GATEWAY: gateway } })
      port = Number(new URL(t.service.url!).port)
    })
    afterAll(() => t.close())

    const ask = async (head: string) => {
      const c = await RawClient.open(port)
      c.write(head)
      const [r] = await c.responses(1)
      c.end()
      return r!
    }

    test('HTTP/1.0 without Host reaches its route', async () => {
      const r = await ask('GET /rest/v1/iam/sessions/current HTTP/1.0\r\n\r\n')
      expect([r.status, JSON.parse(r.body).error_message]).toEqual([401, 'no current session'])
      const query = await ask('GET /healthz?x=1 HTTP/1.0\r\n\r\n')
      expect(query.status).toBe(200)
    })

    test('HTTP/1.1 without Host is refused with 400', async () => {
      const refused = await ask('GET /healthz HTTP/1.1\r\n\r\n')
      expect(refused.status).toBe(400)
      if (gateway === 'on') expect(JSON.parse(refused.body).error_details).toEqual({ field: 'host' })
      if (gateway === 'on') expect(refused.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/)
      expect((await ask('GET /healthz HTTP/1.1\r\nHost: test.local\r\n\r\n')).status).toBe(200)
    })

    if (gateway === 'on')
      test('without Host, a body that is to come, chunked or not, is not waited for: the JSON 400 at once', async () => {
        for (const head of [
          'POST /rest/v1/iam/sessions HTTP/1.1\r\ncontent-length: 100\r\n\r\n',
          'POST /rest/v1/iam/sessions HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n',
          'GET /ws HTTP/1.1\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n',
        ]) {
          const r = await ask(head)
          expect([r.status, JSON.parse(r.body).error_details]).toEqual([400, { field: 'host' }])
        }
      })

    if (gateway === 'on')
      test('the asterisk target: OPTIONS * tells the methods served, another method is a JSON 400 naming target', async () => {
        const options = await ask('OPTIONS * HTTP/1.1\r\nHost: test.local\r\n\r\n')
        expect([options.status, options.headers.allow]).toEqual([204, expect.stringContaining('LOOKUP, SYNC, CLEAR')])
        for (const method of ['GET', 'POST', 'LOOKUP']) {
          const r = await ask(`${method} * HTTP/1.1\r\nHost: test.local\r\nContent-Length: 2\r\n\r\n{}`)
          expect([r.status, JSON.parse(r.body).error_details]).toEqual([400, { field: 'target' }])
        }
      })

    test('a request without Host ends its connection: what was sent behind it is not answered', async () => {
      const c = await RawClient.open(port)
      c.write('GET /healthz HTTP/1.1\r\n\r\nGET /healthz HTTP/1.1\r\nHost: test.local\r\n\r\n')
      const [r] = await c.responses(1)
      expect(r!.status).toBe(400)
      expect(await c.closedWithin(2000)).toBe(true)
      expect((await c.responses(2, 0)).length).toBe(1)
    })

    if (gateway === 'on')
      test('behind pipelined answers that fill the queue, the 400 that ends the connection still arrives whole', async () => {
        // 404s of about 7 KB each: the front stops taking requests past 64 KiB queued and goes on
        // once they are written, which is where the 400 was queued and the connection then cut
        const long = `GET /${'x'.repeat(7000)} HTTP/1.1\r\nHost: test.local\r\n\r\n`
        for (let n = 6; n <= 14; n++) {
          const c = await RawClient.open(port)
          c.write(`${long.repeat(n)}GET /healthz HTTP/1.1\r\n\r\n`)
          expect(await c.closedWithin(5000)).toBe(true)
          const answers = await c.responses(n + 1, 0)
          expect(answers.map((r) => r.status)).toEqual([...Array(n).fill(404), 400])
          expect(JSON.parse(answers[n]!.body).error_details).toEqual({ field: 'host' })
        }
      })
  })
}
