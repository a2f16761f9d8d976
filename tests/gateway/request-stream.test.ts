// RequestStream, the gateway's request parser, driven by a table: each input with the exact bytes it
// sends upstream, the bytes it holds after an upgrade, its failure status, and whether a head is still
// pending. Every case is also replayed split at every byte offset and byte by byte, because TCP may cut
// a client's bytes anywhere and the result must not depend on where.
import { describe, expect, test } from 'bun:test'
import { RequestStream } from '~/gateway/request-stream'
import { BODY_LIMIT, bytes, type Case, cases, chunkedHead, expected, IP, type Outcome } from './request-stream.cases'

/** Feeds the pieces the way front.ts does: stop at a failure; after an upgrade, hold or replay. */
function feed(pieces: Buffer[], c: Case): Outcome {
  const stream = new RequestStream(Buffer.from(IP), c.maxBodyBytes ?? BODY_LIMIT)
  let out = ''
  let held: string | undefined
  const queue = [...pieces]
  for (let now = 0; queue.length; now++) {
    const r = stream.push(queue.shift()!, now)
    // copied right away: this is what the front writes to the socket at this moment
    out += Buffer.concat(r.out).toString('latin1')
    if (r.fail) return { out, fail: r.fail, ...(held === undefined ? {} : { held }), waiting: stream.waitingForHead }
    if (r.held && c.declineUpgrade) {
      stream.upgradeDeclined()
      if (r.held.length) queue.unshift(r.held)
    } else if (r.held) held = (held ?? '') + r.held.toString('latin1')
  }
  return { out, ...(held === undefined ? {} : { held }), waiting: stream.waitingForHead }
}

/** Fresh bytes for every feed: the stream renames headers in place. */
function pieces(input: string, cuts: number[]): Buffer[] {
  const all = bytes(input)
  const edges = [0, ...cuts, all.length]
  return edges.slice(1).map((end, i) => Buffer.from(all.subarray(edges[i], end)))
}

describe('RequestStream', () => {
  for (const c of cases) {
    test(c.name, () => {
      const want = expected(c)
      expect(feed(pieces(c.input, []), c)).toEqual(want)
      const n = bytes(c.input).length
      for (let at = 1; at < n; at++) expect(feed(pieces(c.input, [at]), c), `split at byte ${at}`).toEqual(want)
      const everyByte = Array.from({ length: n - 1 }, (_, i) => i + 1)
      expect(feed(pieces(c.input, everyByte), c), 'byte by byte').toEqual(want)
    })
  }
})

describe('RequestStream state', () => {
  test('a failed stream stays failed with its first status and passes nothing on', () => {
    for (const [input, status] of [
      [`${chunkedHead}41\r\n`, 413],
      ['GET / HTTP/1.1\r\nHost : x\r\n\r\n', 400],
    ] as const) {
      const stream = new RequestStream(Buffer.from(IP), BODY_LIMIT)
      expect(stream.push(bytes(input), 0).fail).toBe(status)
      expect(stream.push(bytes('GET / HTTP/1.1\r\n\r\n'), 1)).toEqual({ out: [], starts: [], fail: status })
    }
  })

  test('each request that begins is marked where it starts, HEAD requests as such (the front sends them one at a time)', () => {
    const stream = new RequestStream(Buffer.from(IP), BODY_LIMIT)
    const r = stream.push(
      bytes('GET /a HTTP/1.1\r\n\r\nHEAD /b HTTP/1.1\r\n\r\nLOOKUP /c HTTP/1.1\r\nContent-Length: 3\r\n\r\n"x'),
      0,
    )
    const requests = r.starts.map((s, i) =>
      Buffer.concat(r.out.slice(s.at, r.starts[i + 1]?.at ?? r.out.length)).toString('latin1'),
    )
    expect(requests).toEqual([
      `GET /a HTTP/1.1\r\n${IP}\r\n`,
      `HEAD /b HTTP/1.1\r\n${IP}\r\n`,
      `POST /c HTTP/1.1\r\nContent-Length: 3\r\nX-HTTP-Method-Override: LOOKUP\r\n${IP}\r\n"x`,
    ])
    expect(r.starts.map((s) => s.head)).toEqual([false, true, false])
    // the rest of a body carries no start
    expect(stream.push(bytes('"'), 1)).toEqual({ out: [bytes('"')], starts: [] })
  })

  test('no accepted chunk size can exceed Number.MAX_SAFE_INTEGER, even with no body limit', () => {
    let longest = 0
    for (let digits = 1; digits <= 20; digits++) {
      const stream = new RequestStream(Buffer.from(IP), Number.POSITIVE_INFINITY)
      if (stream.push(bytes(`${chunkedHead}${'f'.repeat(digits)}\r\n`), 0).fail) break
      longest = digits
    }
    expect(longest).toBeGreaterThanOrEqual(8) // sizes up to the configurable 1 GiB limit still fit
    expect(16 ** longest - 1).toBeLessThanOrEqual(Number.MAX_SAFE_INTEGER)
  })

  test('a pending head keeps the time its first bytes arrived, however slowly the rest trickles in', () => {
    const stream = new RequestStream(Buffer.from(IP), BODY_LIMIT)
    stream.push(bytes('GET / HTTP/1.1\r\n\r\nGET /slow'), 100)
    expect([stream.waitingForHead, stream.partialSince]).toEqual([true, 100])
    stream.push(bytes(' HTTP/1.1\r\n'), 200)
    stream.push(bytes('X-A: 1\r\n'), 300)
    expect([stream.waitingForHead, stream.partialSince]).toEqual([true, 100])
    expect(Buffer.concat(stream.push(bytes('\r\n'), 400).out).toString('latin1')).toBe(
      `GET /slow HTTP/1.1\r\nX-A: 1\r\n${IP}\r\n`,
    )
    expect(stream.waitingForHead).toBe(false)
  })

  test('an unchanged run of body bytes is passed on as the same memory, not a copy', () => {
    const stream = new RequestStream(Buffer.from(IP), BODY_LIMIT)
    stream.push(bytes('POST / HTTP/1.1\r\nContent-Length: 60\r\n\r\n'), 0)
    const body = bytes('x'.repeat(40))
    const { out } = stream.push(body, 1)
    expect(out).toHaveLength(1)
    expect(out[0]!.buffer).toBe(body.buffer)
    expect(out[0]!.byteOffset).toBe(body.byteOffset)
  })
})
