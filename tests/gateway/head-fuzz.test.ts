// Differential fuzz of the head cache (src/gateway/head.ts KnownLines): a stream that compares a head's
// header lines with the last head's must read every request exactly as a stream that scans every head
// anew. Seeded connections of pipelined, split and malformed heads go through both; framing, every
// scanned field, the bytes sent on and the headers the app reads must agree. A few seconds by default;
// FUZZ_CASES=200000 for longer, FUZZ_SEED=<n> to replay a failure (its message names both).
import { expect, test } from 'bun:test'
import { inlineHead } from '~/gateway/inline'
import { type PushResult, RequestStream, type RouteLimits } from '~/gateway/request-stream'

const CASES = Number(process.env.FUZZ_CASES ?? 6000)
const SEED = Number(process.env.FUZZ_SEED ?? 20261129)
const PEER = '198.51.100.7'
const LIMIT = 1 << 16
const ROUTES: RouteLimits = { smallest: 32, of: (_m, path) => (path.startsWith('/small') ? 32 : LIMIT) }

/** mulberry32: small, fast and the same on every machine. */
function random(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  return { chance: (p: number) => next() < p, int, pick: <T>(xs: readonly T[]) => xs[int(xs.length)]! }
}
type Random = ReturnType<typeof random>

const METHODS = ['GET', 'GET', 'HEAD', 'POST', 'DELETE', 'LOOKUP', 'SYNC', 'CLEAR', 'OPTIONS', 'PROPFIND', 'G@T']
const TARGETS = ['/a', '/small/x', '/b?x=1', '/a/./b/../c', '/%2e%2E/x', '*', 'http://h/x', '/caf\xe9', '/x y']
const VERSIONS = ['HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0']
/** Header lines a connection keeps sending, so most heads after the first hit the cache. */
const LINES = [
  'Host: h',
  'host: h:8080',
  'Authorization: Bearer one',
  'Authorization: Bearer onf',
  'cookie: a=1',
  'Cookie: b=2',
  'Accept: */*',
  'X-A:  2 \t',
  'x-a: \xa0v',
  'Connection: keep-alive',
  'Connection: close',
  'X-HTTP-Method-Override: SYNC',
  'Expect: 100-continue',
  'X-Real-IP: 6.6.6.6',
  'Upgrade: websocket',
  'X-Empty:',
]
/** Lines Bun.serve refuses: the stream must refuse them too, cached or not. */
const BAD_LINES = ['X A: 1', 'X-A : 1', ' folded', 'X-A: a\x00b', 'X-A: a\rb', 'Host: a/b', 'Content-Length: 1x']

/** A connection's header lines, reused with small changes from one request to the next. */
function linesFor(r: Random, last: string[] | null): string[] {
  if (last && r.chance(0.7)) {
    if (!r.chance(0.2)) return last
    const lines = [...last]
    const i = r.int(lines.length)
    if (lines[i]) lines[i] = lines[i]!.replace(/.$/, (c) => (c === 'e' ? 'f' : 'e')) // one byte, same length
    return lines
  }
  const lines: string[] = []
  if (r.chance(0.9))
    lines.push(r.chance(0.9) ? 'Host: h' : r.pick(['Host: h', 'Host: h', 'Host: x/y', 'Host: [::1]:9']))
  for (let n = r.int(4); n > 0; n--) lines.push(r.pick(LINES))
  if (r.chance(0.05)) lines.push(r.pick(BAD_LINES))
  if (r.chance(0.03)) lines.push(`X-Long: ${'v'.repeat(5000)}`) // past what the cache keeps
  return lines
}

/** A request's body: kept from one request to the next as often as its lines are. */
interface Shape {
  body: string | null
  chunked: boolean
}
const shapeOf = (r: Random): Shape => ({
  body: r.chance(0.4) ? 'b'.repeat(r.pick([0, 1, 5, 31, 33, 200])) : null,
  chunked: r.chance(0.3),
})

/** One request: its head, and a body framed as its lines say (or not, now and then). */
function request(r: Random, lines: string[], shape: Shape): string {
  const method = r.pick(METHODS)
  const line = `${method} ${r.pick(TARGETS)} ${r.pick(VERSIONS)}`
  const { body, chunked } = shape
  const framing: string[] = []
  let sent = ''
  if (body !== null && chunked) {
    framing.push(r.chance(0.95) ? 'Transfer-Encoding: chunked' : 'Transfer-Encoding: gzip')
    if (r.chance(0.03)) framing.push(`Content-Length: ${body.length}`)
    const ext = r.chance(0.2) ? ';x=1' : ''
    sent = body.length ? `${body.length.toString(16)}${ext}\r\n${body}\r\n0\r\n` : '0\r\n'
    sent += r.chance(0.1) ? 'Trailer: x\r\n\r\n' : '\r\n'
  } else if (body !== null) {
    framing.push(`Content-Length: ${body.length}`)
    if (r.chance(0.03)) framing.push(`content-length: ${body.length}`)
    sent = body
  }
  const all = r.chance(0.5) ? [...lines, ...framing] : [...framing, ...lines]
  const blank = r.chance(0.05) ? '\r\n' : ''
  return `${blank}${line}\r\n${all.map((l) => `${l}\r\n`).join('')}\r\n${sent}`
}

/** A connection's bytes, cut where TCP might cut them. */
function connection(r: Random): Buffer[] {
  let text = ''
  let lines: string[] | null = null
  let shape = shapeOf(r)
  for (let n = 1 + r.int(6); n > 0; n--) {
    lines = linesFor(r, lines)
    if (r.chance(0.3)) shape = shapeOf(r)
    text += request(r, lines, shape)
  }
  if (r.chance(0.1)) text = text.slice(0, r.int(text.length)) // ends mid-request
  const all = Buffer.from(text, 'latin1')
  const cuts = r.chance(0.05)
    ? Array.from({ length: all.length - 1 }, (_, i) => i + 1)
    : Array.from({ length: r.int(4) }, () => r.int(all.length)).sort((a, b) => a - b)
  const edges = [0, ...cuts, all.length]
  return edges.slice(1).map((end, i) => all.subarray(edges[i], end))
}

/** What one push gave, everything a request's reading decides: not the cache object itself. */
function outcome(r: PushResult, stream: RequestStream) {
  return {
    out: Buffer.concat(r.out).toString('latin1'),
    fail: r.fail,
    held: r.held?.toString('latin1'),
    waiting: stream.waitingForHead,
    inBody: stream.inBody,
    starts: r.starts.map(({ scanned, ...start }) => {
      const { known: _, ...fields } = scanned
      const app = inlineHead(scanned, PEER)
      return {
        ...start,
        scanned: fields,
        app: app && typeof app === 'object' ? { ...app, headers: [...app.headers] } : app,
      }
    }),
  }
}

/** Feeds the pieces the way the front does (a declined upgrade replays what was held); fresh bytes each time: heads are renamed in place. */
function feed(pieces: Buffer[], stream: RequestStream) {
  const seen: ReturnType<typeof outcome>[] = []
  let last: readonly string[] | null = null
  let reused = 0
  const queue = pieces.map((p) => Buffer.from(p))
  for (let now = 0; queue.length; now++) {
    const r = stream.push(queue.shift()!, now)
    for (const { scanned } of r.starts) {
      if (scanned.fields === last) reused++
      last = scanned.fields
    }
    seen.push(outcome(r, stream))
    if (r.fail) break
    if (r.held) {
      stream.upgradeDeclined()
      if (r.held.length) queue.unshift(Buffer.from(r.held))
    }
  }
  return { seen, reused }
}

test(`the cached head reading agrees with the uncached one (${CASES} connections, seed ${SEED})`, () => {
  const r = random(SEED)
  const realIp = Buffer.from(`X-Real-IP: ${PEER}\r\n`)
  let requests = 0
  let reused = 0
  for (let i = 0; i < CASES; i++) {
    const pieces = connection(r)
    const cached = new RequestStream(realIp, LIMIT, ROUTES)
    const uncached = new RequestStream(realIp, LIMIT, ROUTES, false)
    const got = feed(pieces, cached)
    const want = feed(pieces, uncached)
    const input = JSON.stringify(Buffer.concat(pieces).toString('latin1'))
    expect(got.seen, `FUZZ_SEED=${SEED}, connection ${i}: ${input}`).toEqual(want.seen)
    expect(want.reused).toBe(0)
    requests += got.seen.reduce((n, push) => n + push.starts.length, 0)
    reused += got.reused
  }
  // most requests were read, and many from the cache: the two paths were both exercised
  console.log(`head fuzz: ${CASES} connections, ${requests} requests read, ${reused} of them from the cache`)
  expect(requests).toBeGreaterThan(CASES)
  expect(reused).toBeGreaterThan(requests / 5)
})

test('the uncached stream never reuses a head it read: the fuzz compares two different paths', () => {
  const raw = 'GET /a HTTP/1.1\r\nHost: h\r\n\r\n'
  const fieldsOf = (stream: RequestStream) =>
    [0, 1].map(() => stream.push(Buffer.from(raw), 0).starts[0]!.scanned.fields)
  const [a, b] = fieldsOf(new RequestStream(Buffer.from('X-Real-IP: 1\r\n'), LIMIT))
  expect(b).toBe(a!)
  const [c, d] = fieldsOf(new RequestStream(Buffer.from('X-Real-IP: 1\r\n'), LIMIT, undefined, false))
  expect(d).not.toBe(c!)
  expect(d).toEqual(c!)
})
