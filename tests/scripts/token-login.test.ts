// POST /rest/v1/iam/sessions {token}: the master domain's iam_token_svcscript_code script turns an
// external token into {domain, login}; every failure is the same 401, counted by the brute-force filter.
// A script that does not answer in time says nothing of the token: a 503 at the deadline, not counted.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

let t: TestService
let master: string
beforeAll(async () => {
  t = await testService({ env: { SCRIPT_TOKEN_LOGIN_SEC: '1' } })
  const domain = await t.createDomain('tok.master')
  await t.createUser(domain.id, 'ann', 'ann-Pass1')
  master = await t.login('master', 'admin', ADMIN_PASSWORD)
  const scriptdata = `
    const token = startparam(1)
    if (token === 'good') return { domain: 'tok.master', login: 'ann' }
    if (token === 'slow') await sleep(60000)
    if (token === 'boom') throw new Error('no such token')
    if (token === 'odd') return 'not an object'
    return { domain: 'tok.master', login: 'nobody' }`
  const saved = await t.call('POST', '/rest/v1/service/svcscripts', {
    token: master,
    body: { code: 'sso', name: 'SSO', scriptdata },
  })
  expect(saved.status).toBe(200)
  const set = await t.call('PATCH', '/rest/v1/domain/settings/iam_token_svcscript_code', {
    token: master,
    body: { value: 'sso' },
  })
  expect(set.status).toBe(200)
})
afterAll(() => t.close())

const login = (body: unknown, address = '10.77.0.1') =>
  t.call('POST', '/rest/v1/iam/sessions', { body, headers: { 'x-real-ip': address } })

test('a token the script accepts signs in the user it names, as a token or a cookie session', async () => {
  const res = await login({ token: 'good', session_type: 'token' }, '10.77.1.1')
  expect(res.status).toBe(200)
  const current = await t.call('GET', '/rest/v1/iam/sessions/current', { token: res.body.session_token })
  expect(current.body).toMatchObject({ login: 'ann', domain: 'tok.master' })
  const cookie = await login({ token: 'good' }, '10.77.1.2')
  expect(cookie.status).toBe(204)
  expect(cookie.headers.get('set-cookie')).toContain('RSession=')
})

test('an unknown login, a failing or odd script: the same 401, revealing nothing', async () => {
  for (const [token, address] of [
    ['other', '10.77.2.1'],
    ['boom', '10.77.2.2'],
    ['odd', '10.77.2.4'],
    ['', '10.77.2.5'],
  ] as const) {
    const res = await login({ token, session_type: 'token' }, address)
    expect([token, res.status, res.body.error_message]).toEqual([token, 401, 'the token was not accepted'])
  }
})

test('wrong tokens count as failed sign-ins: the address is held back after too many', async () => {
  const statuses = []
  for (let i = 0; i < 7; i++) statuses.push((await login({ token: `wrong-${i}` }, '10.77.3.1')).status)
  expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401])
  expect(statuses.at(-1)).toBe(429)
})

test('a script that does not answer in time: 503 at the deadline, not a failed sign-in', async () => {
  const statuses = []
  // five counted failures would hold the address back (429) from the next sign-in
  for (let i = 0; i < 5; i++) {
    const started = performance.now()
    const res = await login({ token: 'slow' }, '10.77.4.1')
    statuses.push(res.status)
    // SCRIPT_TOKEN_LOGIN_SEC is 1 here
    expect(performance.now() - started).toBeLessThan(1500)
    expect(res.headers.get('retry-after')).toBe('1')
  }
  expect(statuses).toEqual([503, 503, 503, 503, 503])
  expect((await login({ token: 'good', session_type: 'token' }, '10.77.4.1')).status).toBe(200)
})
