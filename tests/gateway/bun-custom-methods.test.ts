// Canary for oven-sh/bun#6556: Bun.serve drops a request whose method it does not know before any JS
// runs, which is the only reason the gateway (src/gateway) exists. This test fails the day Bun
// hands LOOKUP to a fetch handler by itself; the gateway can then be removed (src/gateway/README.md,
// its exit plan).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { connect } from 'node:net'

const methodsSeen: string[] = []
let server: ReturnType<typeof Bun.serve>

beforeAll(() => {
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      methodsSeen.push(request.method)
      return new Response('ok')
    },
  })
})
afterAll(() => server.stop(true))

/**
 * Sends one raw request (with `Connection: close`, so a server that answers also closes) and resolves
 * with what came back once the connection is closed, whether Bun answered or dropped it.
 */
function exchange(method: string, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const socket = connect({ host: '127.0.0.1', port: server.port! }, () =>
      socket.write(`${method} /x HTTP/1.1\r\nHost: test.local\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`),
    )
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`Bun.serve neither answered nor closed the connection within ${timeoutMs} ms (${method})`))
    }, timeoutMs)
    socket.on('data', (d: Buffer) => chunks.push(d))
    socket.on('error', () => {}) // a reset is one way of dropping the request; 'close' follows
    socket.on('close', () => {
      clearTimeout(timer)
      resolve(Buffer.concat(chunks).toString('latin1'))
    })
  })
}

test('control: a raw GET reaches the handler', async () => {
  expect(await exchange('GET')).toStartWith('HTTP/1.1 200')
  expect(methodsSeen).toContain('GET')
})

test('Bun.serve still refuses LOOKUP by itself (oven-sh/bun#6556)', async () => {
  await exchange('LOOKUP')
  expect(
    methodsSeen,
    'Bun now accepts LOOKUP/SYNC/CLEAR natively (oven-sh/bun#6556), so the gateway (src/gateway) can be removed — see src/gateway/README.md, the exit plan',
  ).not.toContain('LOOKUP')
})
