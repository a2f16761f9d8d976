// Bodies over the limits, over real sockets against service processes (gateway and direct listener):
// a client that writes its whole body before reading gets the JSON 413 and no reset; what is dropped
// after the answer is bounded (LINGER); an upload the client aborts is a 400 at info with no file left.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LINGER } from '~/http/body'
import { type ServiceProcess, signInTo, startProcess } from '../helpers/process'
import { SMALL_BODY } from '~/http/body-limits'
import { parseResponses, RawClient, writeAllThenRead } from '../helpers/raw-http'

const MAX_BODY = 65536
const FILES_MAX = 20_000_000
/** Above LINGER.bytes: a body a route could take is more than the lingering bound. */
const BIG_FILES_MAX = 80_000_000
type Which = 'gateway' | 'direct'
const dir = mkdtempSync(join(tmpdir(), 'platform-limits-'))
const nodes: Record<Which, { p: ServiceProcess; token: string }> = {} as never
const bigNodes: Record<Which, ServiceProcess> = {} as never
beforeAll(async () => {
  const start = (name: string, gateway: string, filesMax: number) =>
    startProcess({
      MAX_BODY_BYTES: String(MAX_BODY),
      FILES_MAX_BYTES: String(filesMax),
      DATA_DIR: join(dir, name),
      GATEWAY: gateway,
    })
  const [gw, direct, bigGw, bigDirect] = await Promise.all([
    start('gateway', 'on', FILES_MAX),
    start('direct', 'off', FILES_MAX),
    start('big-gateway', 'on', BIG_FILES_MAX),
    start('big-direct', 'off', BIG_FILES_MAX),
  ])
  nodes.gateway = { p: gw, token: await signInTo(gw) }
  nodes.direct = { p: direct, token: await signInTo(direct) }
  Object.assign(bigNodes, { gateway: bigGw, direct: bigDirect })
})
afterAll(() => {
  for (const p of [...Object.values(nodes).map((n) => n.p), ...Object.values(bigNodes)]) p.proc.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

const head = (token: string, method: string, path: string, framing: string, type = 'application/json') =>
  `${method} ${path} HTTP/1.1\r\nHost: test.local\r\nAuthorization: Bearer ${token}\r\nContent-Type: ${type}\r\n${framing}\r\n`
const length = (n: number) => `Content-Length: ${n}\r\n`
const CHUNKED = 'Transfer-Encoding: chunked\r\n'
const HEALTH = 'GET /healthz HTTP/1.1\r\nHost: test.local\r\n\r\n'
const EXTOBJS = '/rest/v1/reference/extobjs'
const errorLines = (p: ServiceProcess) =>
  p
    .out()
    .split('\n')
    .filter((l) => l.includes('"level":"error"'))
const filesOf = (which: string) =>
  readdirSync(join(dir, which), { recursive: true }).filter(
    (f) => String(f).startsWith('files/') && String(f).split('/').length > 2,
  )

// Bun.serve drops a connection when it parses a request behind an answer still pending (oven-sh/bun#38128),
// as it is while the rest of a chunked body is dropped: only the gateway, which sends requests to the
// app one at a time, takes a request pipelined behind those.
const pipelinedAfterChunked = (which: Which) =>
  which === 'gateway' ? { after: HEALTH, count: 2, statuses: [413, 200] } : { count: 1, statuses: [413] }

describe.each(['gateway', 'direct'] as const)('a body over the limit, written whole before reading (%s)', (which) => {
  test('declared over MAX_BODY_BYTES: the JSON 413, and the connection goes on', async () => {
    const { p, token } = nodes[which]
    const size = 8 * 1024 * 1024
    const r = await writeAllThenRead(p.port, head(token, 'POST', EXTOBJS, length(size)), size, {
      after: HEALTH,
      count: 2,
    })
    expect(r.writeError).toBeUndefined()
    expect(r.responses.map((x) => x.status)).toEqual([413, 200])
    expect(JSON.parse(r.responses[0]!.body)).toMatchObject({ error_code: 2413, error_details: { field: 'body' } })
  })

  test('chunked past MAX_BODY_BYTES: the JSON 413, the rest dropped, and the connection goes on', async () => {
    const { p, token } = nodes[which]
    const { statuses, ...then } = pipelinedAfterChunked(which)
    const r = await writeAllThenRead(p.port, head(token, 'POST', EXTOBJS, CHUNKED), 8 * 1024 * 1024, {
      chunked: true,
      ...then,
    })
    expect(r.writeError).toBeUndefined()
    expect(r.responses.map((x) => x.status)).toEqual(statuses)
    expect(JSON.parse(r.responses[0]!.body).error_code).toBe(2413)
  })

  test('refused before reading (a bad token) but of a size a route takes: dropped whole, the connection goes on', async () => {
    const p = bigNodes[which]
    const size = BIG_FILES_MAX - 1024 // more than LINGER.bytes
    const put = head(
      'not-a-token',
      'PUT',
      '/rest/v1/fs/targets/token/big.bin',
      length(size),
      'application/octet-stream',
    )
    const r = await writeAllThenRead(p.port, put, size, { after: HEALTH, count: 2 })
    expect(r.writeError).toBeUndefined()
    expect(r.responses.map((x) => x.status)).toEqual([401, 200])
  })

  test('declared larger than any route takes (4 MiB over FILES_MAX_BYTES): the JSON 413, not a reset', async () => {
    const { p, token } = nodes[which]
    const size = FILES_MAX + 4 * 1024 * 1024
    const r = await writeAllThenRead(
      p.port,
      head(token, 'PUT', '/rest/v1/fs/targets/token/big.bin', length(size)),
      size,
    )
    expect(r.writeError).toBeUndefined()
    expect(r.responses[0]?.status).toBe(413)
    expect(JSON.parse(r.responses[0]!.body).error_code).toBe(2413)
  })

  test('a chunked upload past FILES_MAX_BYTES: the JSON 413 (not a 500), no error logged, no file', async () => {
    const { p, token } = nodes[which]
    const { statuses, ...then } = pipelinedAfterChunked(which)
    const r = await writeAllThenRead(
      p.port,
      head(token, 'PUT', '/rest/v1/fs/targets/token/big.bin', CHUNKED, 'application/octet-stream'),
      FILES_MAX + 64 * 1024,
      { chunked: true, ...then },
    )
    expect(r.writeError).toBeUndefined()
    expect(r.responses.map((x) => x.status)).toEqual(statuses)
    expect(JSON.parse(r.responses[0]!.body).error_code).toBe(2413)
    expect(errorLines(p)).toEqual([])
    expect(filesOf(which)).toEqual([])
  })
})

describe.each(['gateway', 'direct'] as const)("a route's own limit (%s)", (which) => {
  const signIn = (framing: string) =>
    `POST /rest/v1/iam/sessions HTTP/1.1\r\nHost: test.local\r\nContent-Type: application/json\r\n${framing}\r\n`
  const tooLarge = { error_code: 2413, error_message: `request body is larger than the limit of ${SMALL_BODY} bytes` }

  test('a sign-in declaring more than it takes: the JSON 413 before its body is sent, and the connection goes on', async () => {
    const c = await RawClient.open(nodes[which].p.port)
    const size = MAX_BODY - 1024 // within MAX_BODY_BYTES: the route's own limit refuses it
    const started = performance.now()
    c.write(signIn(length(size)))
    const [refused] = await c.responses(1)
    expect(performance.now() - started).toBeLessThan(1000)
    expect(refused?.status).toBe(413)
    expect(JSON.parse(refused!.body)).toMatchObject(tooLarge)
    c.write(Buffer.alloc(size, 0x20)) // the body, dropped unread
    c.write(HEALTH)
    expect((await c.responses(2)).map((r) => r.status)).toEqual([413, 200])
    c.end()
  })

  test('a chunked sign-in is refused once its chunks pass the limit, before it ends', async () => {
    const c = await RawClient.open(nodes[which].p.port)
    c.write(signIn(CHUNKED))
    const chunk = `1000\r\n${' '.repeat(0x1000)}\r\n`
    for (let i = 0; i < 3; i++) c.write(chunk) // 12 KiB, never ended
    const [refused] = await c.responses(1)
    expect(refused?.status).toBe(413)
    expect(JSON.parse(refused!.body)).toMatchObject(tooLarge)
    c.end()
  })

  test('a data route still takes a body many times that size', async () => {
    const { p, token } = nodes[which]
    const body = JSON.stringify({ type: 't', value: 'x'.repeat(MAX_BODY / 2) })
    const c = await RawClient.open(p.port)
    c.write(head(token, 'POST', EXTOBJS, length(body.length)) + body)
    expect((await c.responses(1))[0]?.status).toBe(200)
    c.end()
  })
})

test('gateway: a chunk declared larger than any route takes is answered 413 at its size line, read by a client that writes first', async () => {
  const { p, token } = nodes.gateway
  const r = await writeAllThenRead(p.port, `${head(token, 'POST', EXTOBJS, CHUNKED)}7FFFFFFF\r\n`, 8 * 1024 * 1024)
  expect(r.writeError).toBeUndefined()
  expect(r.responses[0]?.status).toBe(413)
  expect(JSON.parse(r.responses[0]!.body)).toEqual({
    error_code: 2413,
    error_message: 'request body too large',
    error_details: { field: 'body' },
  })
})

/** Sends chunks of `piece` bytes every `everyMs` (0: as fast as the socket takes them) until the server closes. */
function sendUntilClosed(port: number, start: string, piece: number, everyMs: number) {
  return new Promise<{ status?: number; closedAfterMs: number }>((resolve) => {
    let got = Buffer.alloc(0)
    let stop = false
    const started = performance.now()
    const s = connect({ port, host: '127.0.0.1' }, async () => {
      s.write(start)
      const data = Buffer.concat([
        Buffer.from(`${piece.toString(16)}\r\n`),
        Buffer.alloc(piece, 0x20),
        Buffer.from('\r\n'),
      ])
      while (!stop && performance.now() - started < 15_000) {
        if (!s.write(data)) await new Promise((r) => s.once('drain', r))
        if (everyMs) await Bun.sleep(everyMs)
      }
    })
    s.on('data', (d: Buffer) => (got = Buffer.concat([got, d])))
    const done = () => {
      stop = true
      resolve({ status: parseResponses(got).responses[0]?.status, closedAfterMs: performance.now() - started })
    }
    s.on('close', done)
    s.on('error', done)
  })
}

test('a client that never stops sending gets its 413 and is cut off within the bounds (bytes and time)', async () => {
  const cases = (['gateway', 'direct'] as const).flatMap((which) => {
    const { p, token } = nodes[which]
    const start = head(token, 'POST', EXTOBJS, CHUNKED)
    return [
      // fast (up to 64 MB/s): LINGER.bytes are dropped before LINGER.ms pass. Flat out on loopback the
      // cut came within tens of milliseconds of the 413, and a test process slowed by the parallel
      // suite sometimes read the reset before the answer waiting in its socket (the kernel drops it)
      sendUntilClosed(p.port, start, 64 * 1024, 1).then((r) => ({ which, kind: 'fast', ...r })),
      // 100 KB/s: past MAX_BODY_BYTES within a second, then cut off once LINGER.ms pass
      sendUntilClosed(p.port, start, 5 * 1024, 50).then((r) => ({ which, kind: 'slow', ...r })),
    ]
  })
  for (const r of await Promise.all(cases)) {
    // Bun.serve (direct) closes right after its 413: to a client still sending flat out that is a
    // reset, which can reach the client's socket before the client read the 413, and the kernel then
    // drops it (seen under the parallel suite: cut 1,709 ms in, nothing read). The gateway lingers
    // after its answer, so its clients read theirs.
    const answered = r.status === 413 || (r.which === 'direct' && r.kind === 'fast' && r.status === undefined)
    // a miss names its listener and pace
    expect({ which: r.which, kind: r.kind, status: r.status, answered }).toMatchObject({ answered: true })
    // the app lingers, then the gateway once more after it: at most twice LINGER.ms, with room for a slow box
    expect(r.closedAfterMs).toBeLessThan(2 * LINGER.ms + 3000)
    if (r.kind === 'slow') expect(r.closedAfterMs).toBeGreaterThan(LINGER.ms)
  }
})

describe.each(['gateway', 'direct'] as const)('an upload the client aborts (%s)', (which) => {
  const boundary = 'cutcutcut'
  const uploads = {
    'PUT of the raw body': (token: string) =>
      head(token, 'PUT', '/rest/v1/fs/targets/token/cut.bin', length(10 * 1024 * 1024), 'application/octet-stream'),
    'POST of a multipart body': (token: string) =>
      head(
        token,
        'POST',
        '/rest/v1/fs/targets/token',
        length(10 * 1024 * 1024),
        `multipart/form-data; boundary=${boundary}`,
      ) + `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\n\r\n`,
  }
  test.each(Object.keys(uploads) as (keyof typeof uploads)[])(
    '%s: a 400 logged at info, no error, no file',
    async (kind) => {
      const { p, token } = nodes[which]
      const before = p.out().length
      await new Promise<void>((resolve) => {
        const s = connect({ port: p.port, host: '127.0.0.1' }, () => {
          s.write(uploads[kind](token))
          // a megabyte of the file, then the client goes away mid-body
          s.write(Buffer.alloc(1024 * 1024, 1), () =>
            setTimeout(() => {
              s.destroy()
              resolve()
            }, 100),
          )
        })
      })
      const until = Date.now() + 5000
      const line = () =>
        p
          .out()
          .slice(before)
          .split('\n')
          .find((l) => l.includes('"route":"/rest/v1/fs/targets/token'))
      while (!line() && Date.now() < until) await Bun.sleep(20)
      expect(JSON.parse(line()!)).toMatchObject({ level: 'info', status: 400, client: '127.0.0.1' })
      expect(errorLines(p)).toEqual([])
      expect(filesOf(which)).toEqual([])
    },
  )
})
