// Headers every answer carries: no caching of per-caller answers, no type sniffing, and a 401 that
// says how to authenticate.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

let t: TestService
beforeAll(async () => {
  t = await testService()
})
afterAll(() => t.close())

test('API answers, errors included, carry Cache-Control: no-store and X-Content-Type-Options: nosniff', async () => {
  const token = await t.login('master', 'admin', ADMIN_PASSWORD)
  for (const res of [
    await t.call('GET', '/rest/v1/iam/sessions/current', { token }),
    await t.call('GET', '/rest/v1/reference/extobjs', { token }),
    await t.call('GET', '/rest/v1/no/such/path', { token }),
    await t.request('GET', '/pages/sign-in'),
  ]) {
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  }
})

test('a 401 carries WWW-Authenticate', async () => {
  const res = await t.call('GET', '/rest/v1/reference/extobjs')
  expect(res.status).toBe(401)
  expect(res.headers.get('www-authenticate')).toBe('Bearer realm="platform"')
})
