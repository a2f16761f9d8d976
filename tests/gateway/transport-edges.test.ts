// Transport edges of the gateway over real sockets against a service process: pipelined requests on
// real routes (the app gets them one at a time) behind an Upgrade request and a half-close, and the
// per-address connection cap. Bodies over the limits are in body-limits.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ServiceProcess, signInTo, startProcess } from '../helpers/process'
import { parseResponses, RawClient } from '../helpers/raw-http'

const CAP = 6
const dir = mkdtempSync(join(tmpdir(), 'platform-edges-'))
let gateway: ServiceProcess
let token: string
beforeAll(async () => {
  gateway = await startProcess({ DATA_DIR: dir, GATEWAY: 'on', GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: String(CAP) })
  token = await signInTo(gateway)
})
afterAll(() => {
  gateway.proc.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

/** Writes `pieces` (`delayMs` apart), half-closes when `halfClose`, and reads until the server closes. */
function exchange(pieces: string[], options: { halfClose: boolean; delayMs?: number; readMs?: number }) {
  return new Promise<number[]>((resolve) => {
    let got = Buffer.alloc(0)
    const s = connect({ port: gateway.port, host: '127.0.0.1', allowHalfOpen: true }, async () => {
      for (const p of pieces) {
        s.write(p)
        if (options.delayMs) await Bun.sleep(options.delayMs)
      }
      if (options.halfClose) s.end()
    })
    const done = () => resolve(parseResponses(got).responses.map((r) => r.status))
    s.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d])
      // without a half-close the connection stays open: five answers are what is expected
      if (!options.halfClose && parseResponses(got).responses.length >= 5) s.destroy()
    })
    s.on('close', done)
    setTimeout(() => s.destroy(), options.readMs ?? 5000)
  })
}

const auth = () => `Authorization: Bearer ${token}\r\n`
/** Four requests on database routes (each answered only after an await in the app), then a probe. */
const pipelined = () => {
  const lookup = '"no such type"'
  const create = '{"type":"note","value":{"text":"pipelined"}}'
  return (
    `LOOKUP /rest/v1/reference/extobjs HTTP/1.1\r\nHost: test.local\r\n${auth()}Content-Type: application/json\r\nContent-Length: ${lookup.length}\r\n\r\n${lookup}` +
    `POST /rest/v1/reference/extobjs HTTP/1.1\r\nHost: test.local\r\n${auth()}Content-Type: application/json\r\nContent-Length: ${create.length}\r\n\r\n${create}` +
    `HEAD /rest/v1/reference/extobjs HTTP/1.1\r\nHost: test.local\r\n${auth()}\r\n` +
    `GET /rest/v1/reference/extobjs HTTP/1.1\r\nHost: test.local\r\n${auth()}\r\n` +
    'GET /healthz HTTP/1.1\r\nHost: test.local\r\n\r\n'
  )
}
const ANSWERS = [404, 200, 200, 200, 200]

describe('pipelined requests on routes that await reach the app one at a time: every one is answered', () => {
  test.each([false, true])('in one write (half-close after: %p)', async (halfClose) => {
    expect(await exchange([pipelined()], { halfClose })).toEqual(ANSWERS)
  })
  test('cut into small pieces, then a half-close', async () => {
    const all = pipelined()
    const pieces = Array.from({ length: Math.ceil(all.length / 97) }, (_, i) => all.slice(i * 97, i * 97 + 97))
    expect(await exchange(pieces, { halfClose: true, delayMs: 1 })).toEqual(ANSWERS)
  })
})

describe('requests pipelined behind an Upgrade request, then a half-close: all answered before the gateway closes', () => {
  const ws =
    'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n'
  const upgrades = {
    'a websocket upgrade the endpoint refuses (no credentials)': [
      `GET /ws HTTP/1.1\r\nHost: test.local\r\n${ws}\r\n`,
      401,
    ],
    'a websocket upgrade of a plain route': [`GET /healthz HTTP/1.1\r\nHost: test.local\r\n${ws}\r\n`, 200],
    'another protocol (h2c)': [
      'GET /healthz HTTP/1.1\r\nHost: test.local\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n',
      200,
    ],
  } as const
  test.each(Object.keys(upgrades) as (keyof typeof upgrades)[])('%s', async (name) => {
    const [first, status] = upgrades[name]
    // in one write with the FIN right behind, and with the rest (and FIN) arriving while the upgrade is pending
    expect(await exchange([first + pipelined()], { halfClose: true })).toEqual([status, ...ANSWERS])
    expect(await exchange([first, pipelined()], { halfClose: true })).toEqual([status, ...ANSWERS])
  })
})

test('one address may hold GATEWAY_MAX_CONNECTIONS_PER_ADDRESS connections; the next gets a 503 at once', async () => {
  const held: RawClient[] = []
  for (let i = 0; i < CAP; i++) held.push(await RawClient.open(gateway.port, '127.0.0.1', '127.0.0.9'))
  const over = await RawClient.open(gateway.port, '127.0.0.1', '127.0.0.9')
  const [refused] = await over.responses(1)
  expect(refused?.status).toBe(503)
  expect(refused?.headers['retry-after']).toBe('1')
  expect(JSON.parse(refused!.body).error_code).toBe(1503)
  expect(refused?.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/)
  expect(await over.closedWithin(1000)).toBe(true)
  // a client over the cap that sends its request at once reads the 503 too
  const eager = await RawClient.open(gateway.port, '127.0.0.1', '127.0.0.9')
  eager.write('GET /healthz HTTP/1.1\r\nHost: test.local\r\n\r\n')
  expect((await eager.responses(1))[0]?.status).toBe(503)
  // other addresses are not affected, and a freed slot is usable again
  const other = await RawClient.open(gateway.port, '127.0.0.1', '127.0.0.10')
  other.write('GET /healthz HTTP/1.1\r\nHost: test.local\r\n\r\n')
  expect((await other.responses(1))[0]?.status).toBe(200)
  held[0]!.end()
  await held[0]!.closedWithin(1000)
  let again: RawClient | undefined
  for (const until = Date.now() + 2000; Date.now() < until; ) {
    // the gateway sees the close a moment after the client: retry until the slot is free
    const c = await RawClient.open(gateway.port, '127.0.0.1', '127.0.0.9')
    c.write('GET /healthz HTTP/1.1\r\nHost: test.local\r\n\r\n')
    if ((await c.responses(1))[0]?.status === 200) {
      again = c
      break
    }
  }
  expect(again).toBeDefined()
  for (const c of [...held, other, again!]) c.end()
})
