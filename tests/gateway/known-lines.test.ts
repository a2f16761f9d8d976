// A head whose header lines are the same bytes as the connection's last head's is not scanned again
// (src/gateway/head.ts KnownLines): the app must still read exactly what each request sent.
import { expect, test } from 'bun:test'
import { type InlineHead, inlineHead } from '~/gateway/inline'
import { RequestStream } from '~/gateway/request-stream'

const PEER = '203.0.113.9'
const newStream = () => new RequestStream(Buffer.from(`X-Real-IP: ${PEER}\r\n`), 1 << 20)

/** One request pushed on the stream: its scanned head, what the app reads of it, the bytes sent on. */
function push(stream: RequestStream, raw: string) {
  const r = stream.push(Buffer.from(raw, 'latin1'), 0)
  expect(r.fail).toBeUndefined()
  const scanned = r.starts[0]!.scanned
  const inline = inlineHead(scanned, PEER)
  return { scanned, inline, out: Buffer.concat(r.out).toString('latin1') }
}

function answered(inline: ReturnType<typeof inlineHead>): InlineHead {
  if (inline === null || typeof inline === 'string') throw new Error(`not answered in-process: ${inline}`)
  return inline
}

test('the same lines again: read from what the last head gave, with the request line of its own', () => {
  const stream = newStream()
  const a = push(stream, 'GET /a HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer one\r\n\r\n')
  const b = push(stream, 'DELETE /b?x=1 HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer one\r\n\r\n')
  expect(b.scanned.fields).toBe(a.scanned.fields) // not scanned again
  expect(answered(b.inline).headers).toBe(answered(a.inline).headers)
  expect(answered(b.inline)).toMatchObject({ method: 'DELETE', url: 'http://h/b?x=1', close: false })
  expect(b.out).toBe(`DELETE /b?x=1 HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer one\r\nX-Real-IP: ${PEER}\r\n\r\n`)
})

test("lines that differ in one byte, at the same length, are read anew: no request sees another's credentials", () => {
  const stream = newStream()
  const tokens = ['Bearer one', 'Bearer two', 'Bearer one', 'Bearer onf']
  const seen = tokens.map(
    (t) => push(stream, `GET /a HTTP/1.1\r\nHost: h\r\nAuthorization: ${t}\r\n\r\n`).inline as InlineHead,
  )
  expect(seen.map((h) => h.headers.get('authorization'))).toEqual(tokens)
})

test('a body length of its own: a POST after one with another Content-Length frames its own body', () => {
  const stream = newStream()
  push(stream, 'POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}')
  const r = stream.push(
    Buffer.from('POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\n[1]GET /b HTTP/1.1\r\n'),
    0,
  )
  expect(r.starts.map((s) => s.bodyBytes)).toEqual([3])
  expect(stream.waitingForHead).toBe(true)
  const again = stream.push(Buffer.from('Host: h\r\nContent-Length: 3\r\n\r\n'), 0)
  expect(again.starts[0]!.scanned.line).toBe('GET /b HTTP/1.1')
  expect(again.starts[0]!.bodyBytes).toBe(3)
})

test('LOOKUP, SYNC and CLEAR with the same lines as a GET: the override header is their own', () => {
  const stream = newStream()
  const lines = 'Host: h\r\nContent-Length: 0\r\n\r\n'
  const views = ['GET', 'LOOKUP', 'CLEAR', 'GET'].map((m) =>
    answered(push(stream, `${m} /x HTTP/1.1\r\n${lines}`).inline),
  )
  expect(views.map((h) => [h.method, h.headers.get('x-http-method-override') ?? null])).toEqual([
    ['GET', null],
    ['POST', 'LOOKUP'],
    ['POST', 'CLEAR'],
    ['GET', null],
  ])
})

test('a request line Bun.serve refuses is refused even when the lines are known', () => {
  for (const line of ['G@T /x HTTP/1.1', 'GET /x\r HTTP/1.1', 'GET\t/x HTTP/1.1']) {
    const stream = newStream()
    push(stream, 'GET /a HTTP/1.1\r\nHost: h\r\n\r\n')
    expect(stream.push(Buffer.from(`${line}\r\nHost: h\r\n\r\n`, 'latin1'), 0).fail, JSON.stringify(line)).toBe(400)
  }
})

test('what a connection keeps is its header lines, not a long request line before them', () => {
  const gc = () => {
    Bun.gc(true)
    Bun.gc(true)
  }
  const n = 2000
  const kept: RequestStream[] = []
  gc()
  const before = process.memoryUsage().heapUsed
  for (let i = 0; i < n; i++) {
    const stream = newStream()
    push(
      stream,
      `GET /${'a'.repeat(12_000)}${i} HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer ${'t'.repeat(40)}\r\n\r\n`,
    )
    kept.push(stream)
  }
  gc()
  // values cut from a text of the whole head kept every 12 KB request line alive: 12,900 bytes a stream
  expect((process.memoryUsage().heapUsed - before) / n).toBeLessThan(3000)
  expect(kept).toHaveLength(n)
})

test('lines with X-Real-IP or Upgrade are scanned every time: their places in the bytes are renamed', () => {
  const stream = newStream()
  for (let i = 0; i < 2; i++) {
    const r = push(stream, 'GET /a HTTP/1.1\r\nHost: h\r\nX-Real-IP: 10.0.0.1\r\n\r\n')
    expect(r.scanned.known).toBeNull()
    expect(r.out).toContain('X-Untr-IP: 10.0.0.1\r\n')
    expect(answered(r.inline).headers.get('x-real-ip')).toBe(PEER)
  }
  for (let i = 0; i < 2; i++) {
    const r = push(stream, 'POST /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nContent-Length: 1\r\n\r\nx')
    expect(r.out).toContain('X-Upgrd: websocket\r\n')
  }
})

test('lines with Expect are left to Bun.serve every time, known or not', () => {
  const stream = newStream()
  for (let i = 0; i < 3; i++)
    expect(
      push(stream, 'POST /a HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx').inline,
    ).toBeNull()
})
