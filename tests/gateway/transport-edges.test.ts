// Transport edges over real sockets against a service process: requests pipelined behind an Upgrade
// request by a client that then half-closes, and the per-address connection cap. Bodies over the
// limits and aborted uploads are in body-limits.test.ts.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ServiceProcess, startProcess } from '../helpers/process'
import { parseResponses, RawClient } from '../helpers/raw-http'

const CAP = 6
const dir = mkdtempSync(join(tmpdir(), 'platform-edges-'))
let gateway: ServiceProcess
beforeAll(async () => {
  gateway = await startProcess({ DATA_DIR: dir, GATEWAY: 'on', GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: String(CAP) })
})
afterAll(() => {
  gateway.proc.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

test('requests pipelined behind an Upgrade request are all answered when the client half-closes', async () => {
  const answers = await new Promise<string>((resolve) => {
    let got = ''
    const s = connect({ port: gateway.port, host: '127.0.0.1', allowHalfOpen: true }, () => {
      s.write(
        'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n' +
          'GET /readyz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n',
      )
      s.end() // half-close at once: the gateway still holds two requests
    })
    s.on('data', (d) => (got += d.toString('latin1')))
    s.on('close', () => resolve(got))
  })
  expect(parseResponses(Buffer.from(answers, 'latin1')).responses.map((r) => r.status)).toEqual([200, 200, 200])
})

test('one address may hold GATEWAY_MAX_CONNECTIONS_PER_ADDRESS connections; the next gets a 503 at once', async () => {
  const held: RawClient[] = []
  for (let i = 0; i < CAP; i++) held.push(await RawClient.open(gateway.port, '127.0.0.1', '127.0.0.9'))
  const over = await RawClient.open(gateway.port, '127.0.0.1', '127.0.0.9')
  const [refused] = await over.responses(1)
  expect(refused?.status).toBe(503)
  expect(refused?.headers['retry-after']).toBe('1')
  expect(JSON.parse(refused!.body).error_code).toBe(1503)
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
