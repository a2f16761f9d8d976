// A request the front answers in-process is read from its scanned head (inlineHead); one it relays
// is read by Bun.serve from the bytes the request stream rewrote. Both must see the same request:
// method, URL and headers, whatever the client sent (spoofed X-Real-IP, custom methods, repeated or
// oddly cased lines, Upgrade on a request that is no upgrade).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { inlineHead } from '~/gateway/inline'
import { RequestStream } from '~/gateway/request-stream'
import { RawClient } from '../helpers/raw-http'

const PEER = '203.0.113.9'
let server: ReturnType<typeof Bun.serve>

beforeAll(() => {
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (req) => {
      await req.arrayBuffer()
      return Response.json({ method: req.method, url: req.url, headers: [...req.headers].sort() })
    },
  })
})
afterAll(() => server.stop(true))

/** What Bun.serve reads of bytes the stream sent on. */
async function asBunReads(bytes: Buffer) {
  const c = await RawClient.open(server.port!)
  c.write(bytes)
  const [r] = await c.responses(1)
  c.end()
  return JSON.parse(r!.body) as { method: string; url: string; headers: [string, string][] }
}

const requests = [
  'GET /echo?a=1&b=%20x HTTP/1.1\r\nHost: test.local:8080\r\ncookie: a=1\r\nCookie: b=2\r\nx-a: 1\r\nX-A:  2 \r\n\r\n',
  'LOOKUP /rest/v1/reference/extobjs HTTP/1.1\r\nhost: test.local\r\nX-HTTP-Method-Override: SYNC\r\ncontent-length: 2\r\n\r\n"x',
  'SYNC /x HTTP/1.1\r\nhost: h\r\ncontent-length: 0\r\n\r\n',
  'GET /ip HTTP/1.1\r\nHost: h\r\nX-Real-IP: 10.0.0.1\r\nx-real-ip: 10.0.0.2\r\nX-Untr-IP: 1.1.1.1\r\n\r\n',
  // Upgrade on a request with a body is no upgrade: renamed, in the bytes and in-process alike
  'POST /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nupgrade: h2c\r\nContent-Length: 1\r\n\r\nx',
  'GET /old HTTP/1.0\r\nConnection: keep-alive\r\n\r\n',
  'GET /a/./b/../c/%2e%2E/d HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n',
  'DELETE /x HTTP/1.1\r\nHost: [::1]:9\r\nAuthorization: Bearer t\r\nContent-Type: application/json\r\nX-Empty:\r\n\r\n',
  // only spaces and tabs surround a value: a no-break space is part of it
  'GET /caf%C3%A9 HTTP/1.1\r\nHost: h\r\nX-A: \xa0v\xa0\t\r\nX-B:\tw x \r\n\r\n',
]

for (const raw of requests) {
  test(`read the same in-process and relayed: ${raw.split('\r\n')[0]}`, async () => {
    const stream = new RequestStream(Buffer.from(`X-Real-IP: ${PEER}\r\n`), 1 << 20)
    // twice on one connection: the second head's lines are the first's, known (src/gateway/head.ts)
    for (let i = 0; i < 2; i++) {
      const r = stream.push(Buffer.from(raw, 'latin1'), 0)
      expect(r.fail).toBeUndefined()
      const [start] = r.starts
      const inline = inlineHead(start!.scanned, PEER)
      if (inline === null || inline === 'no-host' || inline === 'asterisk')
        throw new Error(`not answered in-process: ${inline}`)
      const bun = await asBunReads(Buffer.concat(r.out))
      // without a Host (HTTP/1.0) Bun.serve gives the bare target; the app routes both alike
      if (bun.url.startsWith('/')) bun.url = `http://localhost${bun.url}`
      expect({ method: inline.method, url: inline.url, headers: [...inline.headers].sort() }).toEqual(bun)
    }
  })
}

test('a head the front leaves to Bun.serve: Expect, an absolute target, another version, a target outside ASCII', () => {
  for (const raw of [
    'GET /caf\xc3\xa9 HTTP/1.1\r\nHost: h\r\n\r\n', // UTF-8 bytes, which this latin1 text would read as two characters
    'POST /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n',
    'GET http://h/x HTTP/1.1\r\nHost: h\r\n\r\n',
    'GET /x HTTP/2.0\r\nHost: h\r\n\r\n',
  ]) {
    const r = new RequestStream(Buffer.from(`X-Real-IP: ${PEER}\r\n`), 1 << 20).push(Buffer.from(raw), 0)
    expect(inlineHead(r.starts[0]!.scanned, PEER)).toBeNull()
  }
})

/** The status line Bun.serve answers raw bytes with (empty when it answers nothing). */
async function bunStatus(raw: string): Promise<number | null> {
  const c = await RawClient.open(server.port!)
  c.write(Buffer.from(raw, 'latin1'))
  const [r] = await c.responses(1, 1000)
  c.end()
  return r?.status ?? null
}

test('what Bun.serve refuses in a head, the stream refuses too: the front never answers a request Bun.serve would not take', async () => {
  for (const raw of [
    'GET / HTTP/1.1\r\nHost: h\r\nX A: 1\r\n\r\n',
    'GET / HTTP/1.1\r\nHost: h\r\nX\xc0: 1\r\n\r\n',
    'GET / HTTP/1.1\r\nHost: h\r\nX-A: a\x00b\r\n\r\n',
    'GET / HTTP/1.1\r\nHost: h\r\nX-A: a\x0bb\r\n\r\n',
    'GET / HTTP/1.1\r\nHost: h\r\nX-A:\x0c1\r\n\r\n',
    'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: \xa01\r\n\r\nx',
    'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\x0b\r\n\r\nx',
  ]) {
    expect(await bunStatus(raw), raw).toBe(400)
    expect(
      new RequestStream(Buffer.from(`X-Real-IP: ${PEER}\r\n`), 1 << 20).push(Buffer.from(raw, 'latin1'), 0).fail,
      raw,
    ).toBe(400)
  }
  // and what it takes, the stream takes: tab, DEL and latin1 letters in a value, spaces and tabs around it
  for (const raw of ['GET / HTTP/1.1\r\nHost: h\r\nX-A: \ta\tb\x7f\xa0c \t\r\n\r\n']) {
    expect(await bunStatus(raw)).toBe(200)
    const r = new RequestStream(Buffer.from(`X-Real-IP: ${PEER}\r\n`), 1 << 20).push(Buffer.from(raw, 'latin1'), 0)
    expect(r.fail).toBeUndefined()
    expect(r.starts[0]!.scanned.fields).toEqual(['host', 'h', 'x-a', 'a\tb\x7f\xa0c'])
  }
})
