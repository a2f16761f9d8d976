// Cross-site request forgery: a cookie-authenticated request that may change something, and a
// websocket opened with the cookie, are refused when a browser says they come from another site;
// the service's own origin, an origin CORS_ORIGINS lists, reads, tokens and non-browser clients pass.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { upgradeAnswer } from '../helpers/ws'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

let t: TestService
let cookie: string
let token: string
const APP = 'https://app.example.com'
beforeAll(async () => {
  t = await testService({ listen: true, env: { CORS_ORIGINS: APP } })
  cookie = `RSession=${await t.login('master', 'admin', ADMIN_PASSWORD, 'cookie')}`
  token = await t.login('master', 'admin', ADMIN_PASSWORD)
})
afterAll(() => t.close())

let n = 0
/** Creates a user over the socket, as a browser would send it: cookie or token, and the headers given. */
async function createUser(auth: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.service.url}/rest/v1/domain/users`, {
    method: 'POST',
    headers: { ...auth, ...headers },
    body: JSON.stringify({ login: `csrf${++n}`, name: 'x', pwd: 'csrf-Pass1' }),
  })
  return { status: res.status, body: (await res.json()) as { error_details?: unknown } }
}

test('a write with the cookie from another site is a 403 naming Origin; from the service itself it goes', async () => {
  const forged = await createUser({ cookie }, { origin: 'https://evil.example' })
  expect(forged.status).toBe(403)
  expect(forged.body.error_details).toEqual({ field: 'Origin' })
  expect((await createUser({ cookie }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403)
  expect((await createUser({ cookie }, { origin: 'null' })).status).toBe(403)
  const own = new URL(t.service.url!).origin
  expect((await createUser({ cookie }, { origin: own })).status).toBe(200)
  expect((await createUser({ cookie }, { origin: APP })).status).toBe(200)
  // no browser says nothing of where it comes from; a token is never sent by a browser on its own
  expect((await createUser({ cookie })).status).toBe(200)
  expect((await createUser({ authorization: `Bearer ${token}` }, { origin: 'https://evil.example' })).status).toBe(200)
  // reading is not refused (another site cannot read the answer without CORS)
  const read = await fetch(`${t.service.url}/rest/v1/domain/users`, {
    headers: { cookie, origin: 'https://evil.example' },
  })
  expect(read.status).toBe(200)
})

test('a websocket opened with the cookie from another site is refused; from the service itself it opens', async () => {
  const ws = `${t.service.url}/ws`
  const forged = await upgradeAnswer(ws, { cookie, origin: 'https://evil.example' })
  expect(forged.status).toBe(403)
  expect(forged.body.error_details).toEqual({ field: 'Origin' })
  const host = new URL(t.service.url!).host
  expect((await upgradeAnswer(ws, { cookie, host, origin: `http://${host}` })).status).toBe(101)
  expect((await upgradeAnswer(`${ws}?token=${token}`, { origin: 'https://evil.example' })).status).toBe(101)
})
