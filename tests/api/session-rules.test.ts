// The session rules of the spec, scenario by scenario: which credential GET, PATCH and DELETE of
// the current session use; domain switching; sliding lifetime; the per-user cap.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

let t: TestService
const CURRENT = '/rest/v1/iam/sessions/current'
beforeAll(async () => {
  // the in-process store follows the test clock, so lifetimes can be tested without waiting
  t = await testService({ kv: 'memory', env: { SESSION_IDLE_TIMEOUT_SEC: '600', SESSION_MAX_PER_USER: '3' } })
  const d = await t.createDomain('rules.master')
  await t.createDomain('other.master')
  await t.createUser(d.id, 'ann', 'ann-Pass1', ['user'])
})
afterAll(() => t.close())

const cookieOf = (res: { headers: Headers }) => /RSession=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')?.[1]
const adminCookie = () => t.login('master', 'admin', 'admin-Secret_1', 'cookie')
const adminToken = () => t.login('master', 'admin', 'admin-Secret_1', 'token')

describe('GET current: a valid token first, otherwise the cookie', () => {
  test('token and cookie of different domains: the token wins', async () => {
    const cookie = await t.login('rules.master', 'ann', 'ann-Pass1', 'cookie')
    const token = await adminToken()
    expect((await t.call('GET', CURRENT, { token, cookie })).body.login).toBe('admin')
  })
  test('an invalid token falls back to the cookie', async () => {
    const cookie = await t.login('rules.master', 'ann', 'ann-Pass1', 'cookie')
    expect((await t.call('GET', CURRENT, { token: 'forged', cookie })).body.login).toBe('ann')
  })
})

describe('PATCH current: with an Authorization header only the token counts', () => {
  test('an invalid token never falls back to the cookie', async () => {
    const cookie = await adminCookie()
    const res = await t.call('PATCH', CURRENT, { token: 'forged', cookie, body: { domain: 'rules.master' } })
    expect(res.status).toBe(401)
    expect((await t.call('GET', CURRENT, { cookie })).body.domain).toBe('master')
  })
  test('without Authorization the cookie session switches: 204 with a new cookie; the old one ends', async () => {
    const cookie = await adminCookie()
    const res = await t.call('PATCH', CURRENT, { cookie, body: { domain: 'rules.master' } })
    expect(res.status).toBe(204)
    const next = cookieOf(res)!
    expect(next).not.toBe(cookie)
    expect((await t.call('GET', CURRENT, { cookie: next })).body).toMatchObject({
      domain: 'rules.master',
      domain_is_master: false,
      roles: ['admin'],
    })
    expect((await t.call('GET', CURRENT, { cookie })).status).toBe(401)
  })
  test('a token session switches in place and keeps its token', async () => {
    const token = await adminToken()
    const res = await t.call('PATCH', CURRENT, { token, body: { domain: 'other.master' } })
    expect(res.status).toBe(204)
    expect(res.headers.get('set-cookie')).toBeNull()
    expect((await t.call('GET', CURRENT, { token })).body.domain).toBe('other.master')
  })
  test("only into a domain listed in the session's domains", async () => {
    const ann = await t.login('rules.master', 'ann', 'ann-Pass1')
    const me = await t.call('GET', CURRENT, { token: ann })
    expect(me.body.domains).toEqual([{ domain: 'rules.master', is_master: false }])
    const res = await t.call('PATCH', CURRENT, { token: ann, body: { domain: 'other.master' } })
    expect(res.status).toBe(403)
    expect(
      (await t.call('PATCH', CURRENT, { token: await adminToken(), body: { domain: 'no-such.master' } })).status,
    ).toBe(403)
    expect((await t.call('PATCH', CURRENT, { token: ann, body: {} })).body.error_details).toEqual({ field: 'domain' })
  })
  test("a master administrator's domains list every domain", async () => {
    const domains = (await t.call('GET', CURRENT, { token: await adminToken() })).body.domains
    expect(domains).toEqual([
      { domain: 'master', is_master: true },
      { domain: 'other.master', is_master: false },
      { domain: 'rules.master', is_master: false },
    ])
  })
})

describe('DELETE current', () => {
  test('with Authorization: the token session ends, the cookie session lives', async () => {
    const cookie = await adminCookie()
    const token = await adminToken()
    expect((await t.call('DELETE', CURRENT, { token, cookie })).status).toBe(204)
    expect((await t.call('GET', CURRENT, { token })).status).toBe(401)
    expect((await t.call('GET', CURRENT, { cookie })).status).toBe(200)
  })
  test('with an invalid token nothing ends', async () => {
    const cookie = await adminCookie()
    expect((await t.call('DELETE', CURRENT, { token: 'forged', cookie })).status).toBe(401)
    expect((await t.call('GET', CURRENT, { cookie })).status).toBe(200)
  })
})

describe('lifetime', () => {
  test('idle sessions expire; use slides the lifetime and re-issues the cookie', async () => {
    const cookie = await t.login('rules.master', 'ann', 'ann-Pass1', 'cookie')
    t.clock.advance(500_000) // 500 s of 600
    const used = await t.call('GET', '/rest/v1/user/info', { cookie })
    expect(used.status).toBe(200)
    const reissued = used.headers.get('set-cookie')!
    expect(reissued).toContain(`RSession=${cookie};`)
    expect(Date.parse(/Expires=([^;]+)/.exec(reissued)![1]!)).toBe(t.clock.now() + 600_000 - (t.clock.now() % 1000))
    t.clock.advance(500_000) // 1000 s after login, 500 s after the last use
    expect((await t.call('GET', '/rest/v1/user/info', { cookie })).status).toBe(200)
    t.clock.advance(601_000)
    expect((await t.call('GET', '/rest/v1/user/info', { cookie })).status).toBe(401)
  })

  test('a user has at most SESSION_MAX_PER_USER sessions; the oldest is ended', async () => {
    const sessions: string[] = []
    for (let i = 0; i < 4; i++) {
      sessions.push(await t.login('rules.master', 'ann', 'ann-Pass1'))
      t.clock.advance(10)
    }
    const alive = await Promise.all(sessions.map(async (s) => (await t.call('GET', CURRENT, { token: s })).status))
    expect(alive).toEqual([401, 200, 200, 200])
  })
})
