// Transport edges over real sockets against service processes: a 413 read by a client that writes
// its whole body first, requests pipelined behind an Upgrade request by a client that then
// half-closes, the per-address connection cap, and an upload the client aborts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ServiceProcess, signInTo, startProcess } from '../helpers/process'
import { parseResponses, RawClient } from '../helpers/raw-http'

const dir = mkdtempSync(join(tmpdir(), 'platform-edges-'))
const started: ServiceProcess[] = []
let gateway: ServiceProcess
let direct: ServiceProcess
let token: string
beforeAll(async () => {
  const env = { MAX_BODY_BYTES: '65536', FILES_MAX_BYTES: '20000000', GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: '6' }
  gateway = await startProcess({ ...env, DATA_DIR: join(dir, 'gw'), GATEWAY: 'on' })
  direct = await startProcess({ ...env, DATA_DIR: join(dir, 'direct'), GATEWAY: 'off' })
  started.push(gateway, direct)
  token = await signInTo(gateway)
})
afterAll(() => {
  for (const p of started) p.proc.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

/** Writes the head and then `bodyBytes` of body as fast as the socket takes them, then reads the answer. */
function writeAllThenRead(port: number, head: string, bodyBytes: number): Promise<{ text: string; error?: string }> {
  return new Promise((resolve) => {
    let got = ''
    const s = connect({ port, host: '127.0.0.1' }, () => {
      s.write(head)
      const chunk = Buffer.alloc(64 * 1024, 0x20)
      let sent = 0
      const pump = () => {
        while (sent < bodyBytes) {
          sent += chunk.length
          if (!s.write(chunk)) return void s.once('drain', pump)
        }
      }
      pump()
    })
    s.on('data', (d) => {
      got += d.toString('latin1')
      // one whole answer is what the client needs; the server may keep reading the rest meanwhile
      if (parseResponses(Buffer.from(got, 'latin1')).responses.length) {
        resolve({ text: got })
        s.destroy()
      }
    })
    s.on('error', (e) => resolve({ text: got, error: e.message }))
    s.on('close', () => resolve({ text: got }))
  })
}

describe('a body over the limit', () => {
  const declared = (token: string, size: number) =>
    `POST /rest/v1/reference/extobjs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`
  test.each(['gateway', 'direct'] as const)(
    'declared: the client that writes it all first reads the JSON 413 (%s)',
    async (which) => {
      const node = which === 'gateway' ? gateway : direct
      const t = which === 'gateway' ? token : await signInTo(direct)
      const r = await writeAllThenRead(node.port, declared(t, 8 * 1024 * 1024), 8 * 1024 * 1024)
      const [answer] = parseResponses(Buffer.from(r.text, 'latin1')).responses
      expect(answer?.status).toBe(413)
      expect(JSON.parse(answer!.body)).toMatchObject({ error_code: 1413 })
    },
  )
  test('a chunk declared larger than any route takes: the gateway answers 413, then lingers and reads', async () => {
    const head = `POST /rest/v1/reference/extobjs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nTransfer-Encoding: chunked\r\n\r\n7FFFFFFF\r\n`
    const r = await writeAllThenRead(gateway.port, head, 8 * 1024 * 1024)
    const [answer] = parseResponses(Buffer.from(r.text, 'latin1')).responses
    expect(answer?.status).toBe(413)
    expect(JSON.parse(answer!.body)).toEqual({
      error_code: 1413,
      error_message: 'request body too large',
      error_details: { field: 'body' },
    })
  })
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
  for (let i = 0; i < 6; i++) held.push(await RawClient.open(gateway.port, '127.0.0.1', '127.0.0.9'))
  const over = await RawClient.open(gateway.port, '127.0.0.1', '127.0.0.9')
  const [refused] = await over.responses(1)
  expect(refused?.status).toBe(503)
  expect(refused?.headers['retry-after']).toBe('1')
  expect(JSON.parse(refused!.body).error_code).toBe(1503)
  // other addresses are not affected, and a freed slot is usable again
  const other = await RawClient.open(gateway.port, '127.0.0.1', '127.0.0.10')
  other.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
  expect((await other.responses(1))[0]?.status).toBe(200)
  held[0]!.end()
  await held[0]!.closedWithin(1000)
  await Bun.sleep(50)
  const again = await RawClient.open(gateway.port, '127.0.0.1', '127.0.0.9')
  again.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
  expect((await again.responses(1))[0]?.status).toBe(200)
  for (const c of [...held, other, again]) c.end()
})

test('an upload the client aborts is a 400 logged at info, not an error, and leaves no file', async () => {
  await new Promise<void>((resolve) => {
    const s = connect({ port: gateway.port, host: '127.0.0.1' }, () => {
      s.write(
        `PUT /rest/v1/fs/targets/token/cut.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n`,
      )
      s.write(Buffer.alloc(1024 * 1024, 1), () => setTimeout(() => (s.destroy(), resolve()), 200))
    })
  })
  const until = Date.now() + 5000
  while (!gateway.out().includes('/rest/v1/fs/targets/token/:name') && Date.now() < until) await Bun.sleep(20)
  const line = gateway
    .out()
    .split('\n')
    .find((l) => l.includes('"route":"/rest/v1/fs/targets/token/:name"'))
  expect(JSON.parse(line!)).toMatchObject({ level: 'info', status: 400 })
  expect(gateway.out()).not.toContain('"level":"error"')
  const read = await fetch(`${gateway.url}/rest/v1/fs/targets/token/cut.bin`, {
    headers: { authorization: `Bearer ${token}` },
  })
  expect(read.status).toBe(404)
  const leftovers = readdirSync(join(dir, 'gw'), { recursive: true }).filter((f) => String(f).includes('cut.bin'))
  expect(leftovers).toEqual([])
})
