// ResponseStream, which tells the gateway where the app's answers end (so it can send the next
// pipelined request): each case is also replayed split at every byte offset, as TCP may cut anywhere.
import { describe, expect, test } from 'bun:test'
import { ResponseStream } from '~/gateway/response-stream'

interface Case {
  name: string
  bytes: string
  /** The answer being read is to a HEAD request. */
  head?: boolean
  completed: number
  switched?: boolean
}

const json = (body: string, extra = '') =>
  `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n${extra}Content-Length: ${body.length}\r\n\r\n${body}`

const cases: Case[] = [
  { name: 'a body of Content-Length', bytes: json('{"a":1}'), completed: 1 },
  { name: 'two answers in a row', bytes: json('[]') + json('{}'), completed: 2 },
  { name: 'a body not complete yet', bytes: json('{"a":1}').slice(0, -1), completed: 0 },
  { name: 'Content-Length 0', bytes: 'HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n', completed: 1 },
  { name: 'no body: 204', bytes: 'HTTP/1.1 204 No Content\r\nx-request-id: a\r\n\r\n', completed: 1 },
  { name: 'no body: 304', bytes: 'HTTP/1.1 304 Not Modified\r\netag: "x"\r\n\r\n', completed: 1 },
  {
    name: 'an answer to HEAD has no body, whatever its length',
    bytes: 'HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n',
    head: true,
    completed: 1,
  },
  {
    name: 'chunked, with an extension and a trailer',
    bytes:
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n',
    completed: 1,
  },
  {
    name: 'chunked (data that looks like framing), then a Content-Length answer',
    bytes: `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\n\r\n\r\n\r\n0\r\n\r\n${json('1')}`,
    completed: 2,
  },
  {
    name: 'chunked, the last chunk missing',
    bytes: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n',
    completed: 0,
  },
  { name: '100 Continue is not the answer', bytes: 'HTTP/1.1 100 Continue\r\n\r\n', completed: 0 },
  { name: '100 Continue, then the answer', bytes: `HTTP/1.1 100 Continue\r\n\r\n${json('{}')}`, completed: 1 },
  {
    name: '101: a tunnel from there on, whatever follows',
    bytes: 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n\x81\x05HTTP/1.1 200 OK\r\n\r\n',
    completed: 0,
    switched: true,
  },
  {
    name: 'neither length nor chunks: it ends when the connection does',
    bytes: 'HTTP/1.1 200 OK\r\n\r\nabc',
    completed: 0,
  },
]

function observe(pieces: string[], head = false) {
  const stream = new ResponseStream()
  const total = { completed: 0, switched: false }
  for (const p of pieces) {
    const seen = stream.observe(Buffer.from(p, 'latin1'), head)
    total.completed += seen.completed
    total.switched ||= seen.switched
  }
  return total
}

describe('ResponseStream', () => {
  for (const c of cases)
    test(c.name, () => {
      const want = { completed: c.completed, switched: c.switched ?? false }
      expect(observe([c.bytes], c.head)).toEqual(want)
      for (let cut = 1; cut < c.bytes.length; cut++)
        expect(observe([c.bytes.slice(0, cut), c.bytes.slice(cut)], c.head)).toEqual(want)
      expect(observe([...c.bytes], c.head)).toEqual(want)
    })
})
