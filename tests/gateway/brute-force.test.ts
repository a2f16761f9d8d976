// The brute-force filter over real sockets: the client address comes from the connection (through
// the gateway), failures are counted per address in Redis, and the ban holds across processes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { FAILURE_WINDOW_MS } from '~/identity/brute-force'
import { httpRequest, RawClient } from '../helpers/raw-http'
import { testPrefix } from '../helpers/redis'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

let a: TestService
let b: TestService
const prefix = testPrefix()
beforeAll(async () => {
  // two processes of one cluster: their own databases, one Redis prefix
  a = await testService({ listen: true, kvPrefix: prefix })
  b = await testService({ listen: true, kvPrefix: prefix, clock: a.clock })
})
afterAll(async () => {
  await a.close()
  await b.close()
})

const portOf = (t: TestService) => Number(new URL(t.service.url!).port)

async function send(
  t: TestService,
  from: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const c = await RawClient.open(portOf(t), '127.0.0.1', from)
  c.write(
    httpRequest(
      method,
      path,
      { 'content-type': 'application/json', ...headers },
      body === undefined ? undefined : JSON.stringify(body),
    ),
  )
  const [r] = await c.responses(1)
  c.end()
  return r!
}
const login = (t: TestService, from: string, pwd: string, headers?: Record<string, string>) =>
  send(
    t,
    from,
    'POST',
    '/rest/v1/iam/sessions',
    { domain: 'master', login: 'admin', pwd, session_type: 'token' },
    headers,
  )

describe('per client address', () => {
  test('5 failures within 3 minutes ban the address, even for correct credentials; other addresses are unaffected', async () => {
    for (let i = 0; i < 5; i++) expect((await login(a, '127.0.0.2', 'wrong')).status).toBe(401)
    const banned = await login(a, '127.0.0.2', ADMIN_PASSWORD)
    expect(banned.status).toBe(429)
    expect(JSON.parse(banned.body)).toMatchObject({ error_code: 1429 })
    expect(Number(banned.headers['retry-after'])).toBe(FAILURE_WINDOW_MS / 1000)
    expect((await login(a, '127.0.0.1', ADMIN_PASSWORD)).status).toBe(200)
  })

  test('guesses sent in parallel cannot slip past the limit', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => login(a, '127.0.0.7', 'wrong')))
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(5)
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(15)
    expect((await login(a, '127.0.0.7', ADMIN_PASSWORD)).status).toBe(429)
  })

  test('right sign-ins sent in parallel from one address all get in (those in flight wait for each other)', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => login(a, '127.0.0.8', ADMIN_PASSWORD)))
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200))
    // and they left nothing counted against the address
    for (let i = 0; i < 4; i++) expect((await login(a, '127.0.0.8', 'wrong')).status).toBe(401)
    expect((await login(a, '127.0.0.8', ADMIN_PASSWORD)).status).toBe(200)
  })

  test('the ban holds in another process sharing the store', async () => {
    expect((await login(b, '127.0.0.2', ADMIN_PASSWORD)).status).toBe(429)
    expect((await login(b, '127.0.0.1', ADMIN_PASSWORD)).status).toBe(200)
  })

  test('Retry-After counts down; when the oldest failure leaves the window the address may try again', async () => {
    a.clock.advance(60_000)
    expect(Number((await login(a, '127.0.0.2', ADMIN_PASSWORD)).headers['retry-after'])).toBe(120)
    a.clock.advance(120_000)
    expect((await login(a, '127.0.0.2', ADMIN_PASSWORD)).status).toBe(200)
  })

  test('requests naming a session that does not exist count as failures', async () => {
    for (let i = 0; i < 3; i++)
      expect(
        (await send(a, '127.0.0.3', 'GET', '/rest/v1/user/info', undefined, { cookie: 'RSession=made-up' })).status,
      ).toBe(401)
    for (let i = 0; i < 2; i++)
      expect(
        (await send(a, '127.0.0.3', 'GET', '/rest/v1/user/info', undefined, { authorization: 'Bearer guessed' }))
          .status,
      ).toBe(401)
    expect((await login(a, '127.0.0.3', ADMIN_PASSWORD)).status).toBe(429)
    // a request without any session id is not a failure
    expect((await send(a, '127.0.0.4', 'GET', '/rest/v1/user/info')).status).toBe(401)
    expect((await login(a, '127.0.0.4', ADMIN_PASSWORD)).status).toBe(200)
  })

  test('websocket upgrades naming no session or channel count as failures too', async () => {
    const upgrade = { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13' }
    const key = () => ({
      'sec-websocket-key': Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64'),
    })
    for (let i = 0; i < 3; i++)
      expect(
        (await send(a, '127.0.0.9', 'GET', `/ws?token=guess${i}`, undefined, { ...upgrade, ...key() })).status,
      ).toBe(401)
    for (let i = 0; i < 2; i++)
      expect(
        (await send(a, '127.0.0.9', 'GET', '/ws', undefined, { ...upgrade, ...key(), authorization: 'Bearer guessed' }))
          .status,
      ).toBe(401)
    expect((await login(a, '127.0.0.9', ADMIN_PASSWORD)).status).toBe(429)
  })
})

describe('TRUST_PROXY', () => {
  test('X-Forwarded-For is believed only from a trusted peer', async () => {
    const trusting = await testService({ listen: true, env: { TRUST_PROXY: '127.0.0.5' } })
    for (let i = 0; i < 5; i++) await login(trusting, '127.0.0.5', 'wrong', { 'x-forwarded-for': '203.0.113.7' })
    expect((await login(trusting, '127.0.0.5', ADMIN_PASSWORD, { 'x-forwarded-for': '203.0.113.7' })).status).toBe(429)
    expect((await login(trusting, '127.0.0.5', ADMIN_PASSWORD, { 'x-forwarded-for': '203.0.113.8' })).status).toBe(200)
    // an untrusted peer's X-Forwarded-For is ignored: its own address is what counts
    for (let i = 0; i < 5; i++) await login(trusting, '127.0.0.6', 'wrong', { 'x-forwarded-for': `198.51.100.${i}` })
    expect((await login(trusting, '127.0.0.6', ADMIN_PASSWORD, { 'x-forwarded-for': '198.51.100.99' })).status).toBe(
      429,
    )
    await trusting.close()
  })

  test('IPv6 clients count by their /64: a host that picks a new address for every guess is still banned', async () => {
    const trusting = await testService({ listen: true, env: { TRUST_PROXY: '127.0.0.5' } })
    for (let i = 1; i <= 5; i++)
      expect((await login(trusting, '127.0.0.5', 'wrong', { 'x-forwarded-for': `2001:db8:1:2::${i}` })).status).toBe(
        401,
      )
    const again = await login(trusting, '127.0.0.5', ADMIN_PASSWORD, { 'x-forwarded-for': '2001:db8:1:2:ffff::9' })
    expect(again.status).toBe(429)
    // another /64 is another client
    const other = await login(trusting, '127.0.0.5', ADMIN_PASSWORD, { 'x-forwarded-for': '2001:db8:1:3::1' })
    expect(other.status).toBe(200)
    await trusting.close()
  })
})
