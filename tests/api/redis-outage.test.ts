/**
 * A real service process on a Redis of its own, which the test pauses (nothing answers) and kills
 * and starts again: what needs Redis answers 503 with Retry-After within a second, what does not
 * keeps working, /readyz says so, and the service recovers by itself.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ServiceProcess, signInTo, startProcess } from '../helpers/process'
import { ownRedisServer } from '../helpers/redis'
import { ADMIN_PASSWORD } from '../helpers/service'

let redis: Awaited<ReturnType<typeof ownRedisServer>>
let node: ServiceProcess
let dir: string
let token: string

beforeAll(async () => {
  redis = await ownRedisServer()
  dir = mkdtempSync(join(tmpdir(), 'platform-outage-'))
  node = await startProcess({ REDIS_URL: redis.url, DATA_DIR: dir, KV_TIMEOUT_MS: '300' })
  token = await signInTo(node)
})
afterAll(async () => {
  node?.proc.kill()
  await node?.proc.exited
  await redis?.kill().catch(() => {})
  rmSync(dir, { recursive: true, force: true })
})

const call = (method: string, path: string, options: { body?: unknown; token?: string } = {}) =>
  fetch(`${node.url}${path}`, {
    method,
    headers: {
      'content-type': 'application/json',
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  })
const signIn = () =>
  call('POST', '/rest/v1/iam/sessions', {
    body: { domain: 'master', login: 'admin', pwd: ADMIN_PASSWORD, session_type: 'token' },
  })
/** The answer and how long it took. */
async function timed(request: Promise<Response>) {
  const started = performance.now()
  const res = await request
  return { res, ms: performance.now() - started, body: (await res.json()) as Record<string, unknown> }
}
async function until(check: () => Promise<boolean>, ms = 10_000) {
  const end = Date.now() + ms
  while (Date.now() < end) if (await check()) return
  throw new Error('the service did not recover in time')
}

test('with Redis up, the service is live and ready', async () => {
  const ready = await timed(call('GET', '/readyz'))
  expect(ready.res.status).toBe(200)
  expect(ready.body).toEqual({ status: 'ready', checks: { database: 'ok', kv: 'ok', workers: 'ok' } })
  expect((await call('GET', '/healthz')).status).toBe(200)
})

test('a hung Redis: sign-in fails closed with 503 within a second, signed-in reads go on, then it recovers', async () => {
  redis.pause()
  try {
    const refused = await timed(signIn())
    expect(refused.res.status).toBe(503)
    expect(refused.ms).toBeLessThan(1000)
    expect(refused.res.headers.get('retry-after')).toBe('1')
    expect(refused.body.error_code).toBe(1503)
    expect(String(refused.body.error_message)).toContain('brute-force filter')

    const read = await timed(call('GET', '/rest/v1/reference/extobjs', { token }))
    expect(read.res.status).toBe(200)

    const ready = await timed(call('GET', '/readyz'))
    expect(ready.res.status).toBe(503)
    expect(ready.ms).toBeLessThan(1500)
    expect(String(ready.body.error_message)).toContain('kv (')
    expect((ready.body.error_details as { checks: Record<string, string> }).checks.database).toBe('ok')

    // ending a session needs the store: refused, not left waiting
    const logout = await timed(call('DELETE', '/rest/v1/iam/sessions/current', { token }))
    expect(logout.res.status).toBe(503)
    expect(logout.ms).toBeLessThan(1000)
  } finally {
    redis.resume()
  }
  await until(async () => (await signIn()).status === 200)
  expect((await call('GET', '/readyz')).status).toBe(200)
  // the session the outage could not end is still there, and still works
  expect((await call('GET', '/rest/v1/iam/sessions/current', { token })).status).toBe(200)
})

test('Redis gone: writes that need only the database are acknowledged and kept; Redis back: all works again', async () => {
  await redis.kill()
  const created = await timed(
    call('POST', '/rest/v1/reference/extobjs', { token, body: { type: 'outage', value: 'during outage' } }),
  )
  expect(created.res.status).toBe(200)
  const id = String(created.body.id)
  expect((await call('GET', `/rest/v1/reference/extobjs/${id}`, { token })).status).toBe(200)
  const refused = await timed(signIn())
  expect(refused.res.status).toBe(503)
  expect(refused.ms).toBeLessThan(1000)

  await redis.start()
  await until(async () => (await signIn()).status === 200)
  expect((await call('GET', '/readyz')).status).toBe(200)
  // a fresh Redis lost every session: the old token is gone, a new sign-in reads the record written meanwhile
  const fresh = await signInTo(node)
  const read = await call('GET', `/rest/v1/reference/extobjs/${id}`, { token: fresh })
  expect(((await read.json()) as { value: string }).value).toBe('during outage')
  expect(node.out()).toContain('"redis unreachable"')
  expect(node.out()).toContain('"redis reachable again"')
  expect(node.out()).not.toContain('"internal error"')
})

test('SIGTERM while Redis is down: the service still stops cleanly and soon', async () => {
  await redis.kill()
  await Bun.sleep(100) // let the client notice
  const started = performance.now()
  node.proc.kill('SIGTERM')
  expect(await node.proc.exited).toBe(0)
  expect(performance.now() - started).toBeLessThan(5000)
})
