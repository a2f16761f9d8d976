// Sign-ins racing what ends an account's sessions: a session made after a password change (or the
// account's deletion) had ended the others must not outlive it. The race is forced: the change runs
// in full when the sign-in is about to write its session, after its credentials were checked.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

let t: TestService
let admin: string
let domainId: string
const DOMAIN = 'races.master'
const SESSIONS = '/rest/v1/iam/sessions'

beforeAll(async () => {
  t = await testService({ kv: 'memory' })
  domainId = (await t.createDomain(DOMAIN)).id
  admin = await t.adminIn(DOMAIN)
})
afterAll(() => t.close())

/** Runs `step` when the next session is about to be written. */
function beforeNextSession(step: () => Promise<unknown>) {
  const kv = t.deps.kv
  const set = kv.set
  kv.set = async (key, value, ttlMs) => {
    if (key.startsWith('session:')) {
      kv.set = set
      await step()
    }
    return set(key, value, ttlMs)
  }
}

async function setPassword(userId: string, pwd: string) {
  const res = await t.call('PATCH', `/rest/v1/domain/users/${userId}`, { token: admin, body: { pwd } })
  expect(res.status).toBe(200)
}

/** Whether the session is alive anywhere: this process still answers it, or the store still holds it. */
async function works(id: string | undefined): Promise<boolean> {
  if (!id) return false
  return (await t.deps.sessions.get(id)) !== null || (await t.deps.kv.get(`session:${id}`)) !== null
}

const tokenOf = (res: { body: { session_token?: string } | null }) => res.body?.session_token
const cookieOf = (res: { headers: Headers }) => /RSession=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1]

test('a sign-in with the old password whose session is made after the change ends with the others', async () => {
  const ann = await t.createUser(domainId, 'ann', 'Pass-0000')
  const before = await t.login(DOMAIN, 'ann', 'Pass-0000')
  beforeNextSession(() => setPassword(ann, 'Pass-0001'))
  const res = await t.call('POST', SESSIONS, {
    body: { domain: DOMAIN, login: 'ann', pwd: 'Pass-0000', session_type: 'token' },
  })
  expect(await works(tokenOf(res))).toBe(false)
  expect(await works(before)).toBe(false)
  expect(res.status).toBe(401)
  expect(await t.login(DOMAIN, 'ann', 'Pass-0001')).toBeTruthy()
})

test('a sign-in whose account is deleted before its session is made fails', async () => {
  const bob = await t.createUser(domainId, 'bob', 'Pass-0000')
  beforeNextSession(async () => {
    expect((await t.call('DELETE', `/rest/v1/domain/users/${bob}`, { token: admin })).status).toBe(204)
  })
  const res = await t.call('POST', SESSIONS, {
    body: { domain: DOMAIN, login: 'bob', pwd: 'Pass-0000', session_type: 'token' },
  })
  expect(await works(tokenOf(res))).toBe(false)
  expect(res.status).toBe(401)
})

test('a token cloned from a cookie session as the password changes ends with it', async () => {
  const cid = await t.createUser(domainId, 'cid', 'Pass-0000')
  const cookie = await t.login(DOMAIN, 'cid', 'Pass-0000', 'cookie')
  beforeNextSession(() => setPassword(cid, 'Pass-0001'))
  const res = await t.call('POST', SESSIONS, { cookie, body: { session_type: 'token_clone_cookie' } })
  expect(await works(tokenOf(res))).toBe(false)
  expect(await works(cookie)).toBe(false)
  expect(res.status).toBe(401)
})

test('a cookie session switching domain as the password changes ends with it', async () => {
  const dan = await t.createUser(domainId, 'dan', 'Pass-0000')
  const cookie = await t.login(DOMAIN, 'dan', 'Pass-0000', 'cookie')
  beforeNextSession(() => setPassword(dan, 'Pass-0001'))
  const res = await t.call('PATCH', `${SESSIONS}/current`, { cookie, body: { domain: DOMAIN } })
  expect(await works(cookieOf(res))).toBe(false)
  expect(await works(cookie)).toBe(false)
  expect(res.status).toBe(401)
})

test('the session that changed its own password goes on, and what is made from it lives', async () => {
  await t.createUser(domainId, 'eve', 'Pass-0000')
  const other = await t.login(DOMAIN, 'eve', 'Pass-0000')
  const cookie = await t.login(DOMAIN, 'eve', 'Pass-0000', 'cookie')
  const change = await t.call('POST', '/rest/v1/iam/pwd_reset_requests', {
    cookie,
    body: { current_pwd: 'Pass-0000', new_pwd: 'Pass-0001' },
  })
  expect(change.status).toBe(200)
  expect(await works(other)).toBe(false)
  expect(await works(cookie)).toBe(true)
  const clone = await t.call('POST', SESSIONS, { cookie, body: { session_type: 'token_clone_cookie' } })
  expect(clone.status).toBe(200)
  expect(await works(tokenOf(clone))).toBe(true)
  const moved = await t.call('PATCH', `${SESSIONS}/current`, { cookie, body: { domain: DOMAIN } })
  expect(moved.status).toBe(204)
  expect(await works(cookieOf(moved))).toBe(true)
})

test("an administrator's new password for another account leaves the administrator's sessions as they were", async () => {
  const fay = await t.createUser(domainId, 'fay', 'Pass-0000')
  const cookie = await t.login('master', 'admin', ADMIN_PASSWORD, 'cookie')
  const moved = await t.call('PATCH', `${SESSIONS}/current`, { cookie, body: { domain: DOMAIN } })
  const inDomain = cookieOf(moved)!
  const change = await t.call('PATCH', `/rest/v1/domain/users/${fay}`, { cookie: inDomain, body: { pwd: 'Pass-0001' } })
  expect(change.status).toBe(200)
  const clone = await t.call('POST', SESSIONS, { cookie: inDomain, body: { session_type: 'token_clone_cookie' } })
  expect(clone.status).toBe(200)
  expect(await works(tokenOf(clone))).toBe(true)
})
