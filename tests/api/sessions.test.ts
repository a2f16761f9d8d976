// POST /rest/v1/iam/sessions and /current: cookie and token sessions, over the in-process app.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

let t: TestService
beforeAll(async () => {
  t = await testService()
})
afterAll(() => t.close())

const login = (body: unknown, o: { cookie?: string } = {}) => t.call('POST', '/rest/v1/iam/sessions', { body, ...o })
const cookieOf = (res: { headers: Headers }) => /RSession=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')?.[1]

describe('creating a session', () => {
  test('cookie session: 204 and RSession with Path=/, SameSite=Strict, HttpOnly, Expires', async () => {
    const res = await login({ domain: 'master', login: 'admin', pwd: ADMIN_PASSWORD })
    expect(res.status).toBe(204)
    expect(res.text).toBe('')
    const cookie = res.headers.get('set-cookie')!
    expect(cookie).toMatch(/^RSession=[A-Za-z0-9_-]{43}; /)
    expect(cookie).toContain('Path=/;')
    expect(cookie).toContain('HttpOnly')
    expect(cookie).toContain('SameSite=Strict')
    const expires = Date.parse(/Expires=([^;]+)/.exec(cookie)![1]!)
    expect(expires - t.clock.now()).toBeGreaterThan(t.config.sessionIdleTimeoutSec * 1000 - 2000)
  })

  test('session_type cookie is the same as none', async () => {
    const res = await login({ domain: 'master', login: 'admin', pwd: ADMIN_PASSWORD, session_type: 'cookie' })
    expect(res.status).toBe(204)
    expect(cookieOf(res)).toBeTruthy()
  })

  test('token session: 200 with session_token used as a bearer token', async () => {
    const res = await login({ domain: 'master', login: 'admin', pwd: ADMIN_PASSWORD, session_type: 'token' })
    expect(res.status).toBe(200)
    expect(res.headers.get('set-cookie')).toBeNull()
    const token = res.body.session_token
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const me = await t.call('GET', '/rest/v1/iam/sessions/current', { token })
    expect(me.status).toBe(200)
    expect(me.body.login).toBe('admin')
  })

  test('token_clone_cookie copies the cookie session into a new token session', async () => {
    const cookie = cookieOf(await login({ domain: 'master', login: 'admin', pwd: ADMIN_PASSWORD }))!
    const res = await login({ session_type: 'token_clone_cookie', domain: 'ignored', login: 'x', pwd: 'y' }, { cookie })
    expect(res.status).toBe(200)
    expect(res.body.session_token).not.toBe(cookie)
    const me = await t.call('GET', '/rest/v1/iam/sessions/current', { token: res.body.session_token })
    expect(me.body.user_id).toBe((await t.call('GET', '/rest/v1/iam/sessions/current', { cookie })).body.user_id)
    expect((await login({ session_type: 'token_clone_cookie' })).status).toBe(401)
  })

  test('wrong credentials: one error body, no hint which part was wrong', async () => {
    const bodies = await Promise.all([
      login({ domain: 'master', login: 'admin', pwd: 'wrong' }),
      login({ domain: 'master', login: 'nobody', pwd: ADMIN_PASSWORD }),
      login({ domain: 'nowhere', login: 'admin', pwd: ADMIN_PASSWORD }),
    ])
    for (const res of bodies) {
      expect(res.status).toBe(401)
      expect(res.body).toEqual({ error_code: 1401, error_message: 'invalid domain, login or password' })
      expect(res.headers.get('set-cookie')).toBeNull()
    }
  })

  test('missing or malformed fields are named', async () => {
    expect((await login({ domain: 'master', login: 'admin' })).body.error_details).toEqual({ field: 'pwd' })
    expect((await login({ domain: 'master', login: 5, pwd: 'x' })).body.error_details).toEqual({ field: 'login' })
    expect((await login({ domain: 'master', login: 'a', pwd: 'x', session_type: 'jwt' })).body.error_details).toEqual({
      field: 'session_type',
    })
    expect((await login({ domain: 'master', login: 'a', pwd: 'x', extra: 1 })).body.error_details).toEqual({
      field: 'extra',
    })
    const notJson = await t.call('POST', '/rest/v1/iam/sessions', { raw: '{"domain":' })
    expect(notJson.status).toBe(400)
    expect(notJson.body.error_details).toEqual({ field: 'body' })
  })

  test('a token login without an external authorization script is a 401 that reveals nothing', async () => {
    const res = await login({ token: 'abc' })
    expect(res.status).toBe(401)
    expect(res.body.error_message).toBe('the token was not accepted')
  })
})

describe('the current session', () => {
  test('GET current has every field of the spec', async () => {
    const cookie = cookieOf(await login({ domain: 'master', login: 'admin', pwd: ADMIN_PASSWORD }))!
    const res = await t.call('GET', '/rest/v1/iam/sessions/current', { cookie })
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(
      [
        'domain',
        'domain_is_master',
        'domains',
        'login',
        'name',
        'name_login',
        'roles',
        'solution',
        'tags',
        'user_id',
        'webapps',
      ].sort(),
    )
    expect(res.body).toMatchObject({ domain: 'master', domain_is_master: true, login: 'admin', roles: ['admin'] })
    expect(res.body.domains).toContainEqual({ domain: 'master', is_master: true })
  })

  test("after the account's login is renamed and given to another, the session still shows its own account", async () => {
    await t.createDomain('rename.master')
    const admin = await t.adminIn('rename.master')
    const carl = await t.call('POST', '/rest/v1/domain/users', {
      token: admin,
      body: { login: 'carl', name: 'Carl', pwd: 'carl-Pass1' },
    })
    const signedIn = await login({ domain: 'rename.master', login: 'carl', pwd: 'carl-Pass1', session_type: 'token' })
    const token = signedIn.body.session_token as string
    await t.call('PATCH', `/rest/v1/domain/users/${carl.body.id}`, { token: admin, body: { login: 'carl.old' } })
    await t.call('POST', '/rest/v1/domain/users', {
      token: admin,
      body: { login: 'carl', name: 'Someone Else', pwd: 'else-Pass1', opts: { tags: ['vip'] } },
    })
    const current = await t.call('GET', '/rest/v1/iam/sessions/current', { token })
    expect(current.status).toBe(200)
    expect(current.body).toMatchObject({ user_id: carl.body.id, login: 'carl.old', name: 'Carl', tags: [] })
  })

  test('a session switched into a domain that is deleted and created again with its id does not act in the new one', async () => {
    const master = (await login({ domain: 'master', login: 'admin', pwd: ADMIN_PASSWORD, session_type: 'token' })).body
      .session_token as string
    const id = '0192a3b4-0000-7000-8000-0000000d0e1d'
    const create = () =>
      t.call('POST', '/rest/v1/domain/domains', { token: master, body: { id, name: 'reborn.master' } })
    expect((await create()).status).toBe(200)
    const switched = (await login({ domain: 'master', login: 'admin', pwd: ADMIN_PASSWORD, session_type: 'token' }))
      .body.session_token as string
    expect(
      (await t.call('PATCH', '/rest/v1/iam/sessions/current', { token: switched, body: { domain: 'reborn.master' } }))
        .status,
    ).toBe(204)
    expect((await t.call('GET', '/rest/v1/reference/extobjs', { token: switched })).status).toBe(200)
    expect((await t.call('DELETE', `/rest/v1/domain/domains/${id}`, { token: master })).status).toBe(204)
    t.clock.advance(1000) // another creation time
    expect((await create()).status).toBe(200)
    const after = await t.call('GET', '/rest/v1/reference/extobjs', { token: switched })
    expect([after.status, after.body.error_message]).toEqual([401, 'the domain of this session no longer exists'])
  })

  test('without a session: 401 body', async () => {
    const res = await t.call('GET', '/rest/v1/iam/sessions/current')
    expect(res.status).toBe(401)
    expect(res.body.error_code).toBe(1401)
  })

  test('DELETE current (cookie) replaces the cookie with deleted and a past expiry; the session is gone', async () => {
    const cookie = cookieOf(await login({ domain: 'master', login: 'admin', pwd: ADMIN_PASSWORD }))!
    const res = await t.call('DELETE', '/rest/v1/iam/sessions/current', { cookie })
    expect(res.status).toBe(204)
    const set = res.headers.get('set-cookie')!
    expect(set).toStartWith('RSession=deleted;')
    expect(Date.parse(/Expires=([^;]+)/.exec(set)![1]!)).toBeLessThan(Date.now())
    expect((await t.call('GET', '/rest/v1/iam/sessions/current', { cookie })).status).toBe(401)
    expect((await t.call('GET', '/rest/v1/reference/extobjs', { cookie })).status).toBe(401)
  })

  test('DELETE current with a token ends the token session and leaves the cookie session alive', async () => {
    const cookie = cookieOf(await login({ domain: 'master', login: 'admin', pwd: ADMIN_PASSWORD }))!
    const token = (await login({ domain: 'master', login: 'admin', pwd: ADMIN_PASSWORD, session_type: 'token' })).body
      .session_token
    const res = await t.call('DELETE', '/rest/v1/iam/sessions/current', { token, cookie })
    expect(res.status).toBe(204)
    expect(res.headers.get('set-cookie')).toBeNull()
    expect((await t.call('GET', '/rest/v1/iam/sessions/current', { token })).status).toBe(401)
    expect((await t.call('GET', '/rest/v1/iam/sessions/current', { cookie })).status).toBe(200)
  })

  test('a protected endpoint without a session answers 401; with a bad token too', async () => {
    expect((await t.call('GET', '/rest/v1/reference/extobjs')).status).toBe(401)
    const bad = await t.call('GET', '/rest/v1/reference/extobjs', { token: 'not-a-session' })
    expect(bad.status).toBe(401)
    expect(bad.body.error_message).toBe('session not found or expired')
  })

  test('a cookie session id presented as a bearer token is refused', async () => {
    const cookie = cookieOf(await login({ domain: 'master', login: 'admin', pwd: ADMIN_PASSWORD }))!
    expect((await t.call('GET', '/rest/v1/reference/extobjs', { token: cookie })).status).toBe(401)
  })
})
