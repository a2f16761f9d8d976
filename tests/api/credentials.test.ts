// Credential flows over HTTP: password change and recovery, invitations, self-registration; their
// mails (through a Resend stand-in), limits, lifetimes (test clock), and every error of the spec.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { INVITATION_LIFETIME_MS } from '~/credentials/invitations-api'
import { RESET_LIFETIME_MS } from '~/credentials/password-reset-api'
import { SELF_REGISTRATION_LIFETIME_MS } from '~/credentials/self-registration-api'
import { startMailCapture } from '../helpers/mail-capture'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let capture: Awaited<ReturnType<typeof startMailCapture>>
let admin: string
const ok = (msg?: string) => ({ error_code: 0, result: true, ...(msg ? { result_msg: msg } : {}) })
const idIn = (link: string) => /id=([0-9a-f-]{36})/.exec(link)![1]!

beforeAll(async () => {
  capture = await startMailCapture()
  t = await testService({
    env: { RESEND_API_KEY: 're_test_key', RESEND_BASE_URL: capture.url, PUBLIC_URL: 'https://platform.example' },
  })
  await t.createDomain('mail.master')
  admin = await t.adminIn('mail.master')
  await t.call('POST', '/rest/v1/domain/users', {
    token: admin,
    body: { login: 'ann', name: 'Ann', pwd: 'ann-Pass1', opts: { email: 'Ann@Example.com' } },
  })
})
afterAll(async () => {
  await t.close()
  capture.stop()
})

const from = (address: string) => ({ 'x-real-ip': address })
/** A call, then one pass of the mail worker: what the call queued has been delivered (or failed) when it returns. */
async function delivered<T>(call: Promise<T>): Promise<T> {
  const res = await call
  await t.run('mail-outbox')
  return res
}
const post = (path: string, body: unknown, address = '10.9.0.1', token?: string) =>
  delivered(t.call('POST', path, { body, headers: from(address), token }))
const patch = (path: string, body: unknown, address = '10.9.0.1') =>
  delivered(t.call('PATCH', path, { body, headers: from(address) }))

describe('password change in one step (signed in)', () => {
  test('both fields required, the current one checked, the policy applied; other sessions end', async () => {
    const token = await t.login('mail.master', 'ann', 'ann-Pass1')
    const other = await t.login('mail.master', 'ann', 'ann-Pass1')
    const cases: [unknown, string][] = [
      [{ current_pwd: 'ann-Pass1' }, 'new_pwd'],
      [{ new_pwd: 'x' }, 'current_pwd'],
      [{ current_pwd: 'wrong-one', new_pwd: 'ann-Pass2' }, 'current_pwd'],
      [{ current_pwd: 'ann-Pass1', new_pwd: 'short' }, 'new_pwd'],
      [{ current_pwd: 'ann-Pass1', new_pwd: 'spaces not allowed' }, 'new_pwd'],
    ]
    for (const [body, field] of cases) {
      const res = await t.call('POST', '/rest/v1/iam/pwd_reset_requests', { token, body })
      expect([field, res.status, res.body.error_code, res.body.error_details?.field]).toEqual([field, 412, 1501, field])
    }
    const done = await t.call('POST', '/rest/v1/iam/pwd_reset_requests', {
      token,
      body: { current_pwd: 'ann-Pass1', new_pwd: 'ann-Pass2' },
    })
    expect(done.status).toBe(200)
    expect(done.body).toEqual(ok('password changed'))
    expect((await t.call('GET', '/rest/v1/user/info', { token })).status).toBe(200)
    expect((await t.call('GET', '/rest/v1/user/info', { token: other })).status).toBe(401)
    expect(await t.login('mail.master', 'ann', 'ann-Pass2')).toBeTruthy()
    expect(
      (await t.call('POST', '/rest/v1/iam/pwd_reset_requests', { body: { current_pwd: 'a', new_pwd: 'b' } })).status,
    ).toBe(401)
  })
})

describe('password recovery in two steps', () => {
  test('by login and domain: a mail with a link; the link sets the password once; sessions end', async () => {
    const session = await t.login('mail.master', 'ann', 'ann-Pass2')
    const res = await post('/rest/v1/iam/pwd_reset_requests', { key: 'ann', domain: 'mail.master' }, '10.9.1.1')
    expect(res.body).toEqual(ok('a link to set a new password was sent by e-mail'))
    const mail = capture.to('ann@example.com').at(-1)!
    expect(mail).toMatchObject({ subject: 'Reset your password', authorization: 'Bearer re_test_key' })
    expect(mail.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/)
    const link = capture.linkIn(mail)!
    expect(link).toStartWith('https://platform.example/pages/reset-password?id=')
    expect(mail.html).toContain(link)
    const id = idIn(link)
    expect((await patch(`/rest/v1/iam/pwd_reset_requests/${id}`, { pwd: 'bad pwd' })).body).toMatchObject({
      error_code: 1501,
      error_details: { field: 'pwd' },
    })
    const done = await patch(`/rest/v1/iam/pwd_reset_requests/${id}`, { pwd: 'ann-Pass3' })
    expect(done.body).toEqual({ ...ok('password changed'), user: { domain: 'mail.master', login: 'ann' } })
    expect((await patch(`/rest/v1/iam/pwd_reset_requests/${id}`, { pwd: 'ann-Pass4' })).status).toBe(404)
    expect((await t.call('GET', '/rest/v1/user/info', { token: session })).status).toBe(401)
    expect(await t.login('mail.master', 'ann', 'ann-Pass3')).toBeTruthy()
    const journal = (
      await t.journal((await t.deps.db.get("SELECT id FROM domains WHERE name = 'mail.master'"))![0] as string)
    ).at(-1)
    expect(journal).toMatchObject({ cmdtype: 'update', objtype: 'user', fields: 'pwd', modifiername: 'ann' })
  })

  test('by e-mail, with or without the domain; the key is not case-sensitive', async () => {
    await post('/rest/v1/iam/pwd_reset_requests', { key: 'ANN@example.com' }, '10.9.1.2')
    expect(capture.to('ann@example.com').at(-1)!.subject).toBe('Reset your password')
    const before = capture.mails.length
    await post('/rest/v1/iam/pwd_reset_requests', { key: 'ann@example.com', domain: 'mail.master' }, '10.9.1.3')
    expect(capture.mails.length).toBe(before + 1)
  })

  test('errors: unknown e-mail 412/1413; login without domain 412/1501; bad body', async () => {
    const unknown = await post('/rest/v1/iam/pwd_reset_requests', { key: 'nobody@example.com' }, '10.9.1.4')
    expect(unknown.status).toBe(412)
    expect(unknown.body.error_code).toBe(1413)
    const unknownLogin = await post(
      '/rest/v1/iam/pwd_reset_requests',
      { key: 'nobody', domain: 'mail.master' },
      '10.9.1.5',
    )
    expect(unknownLogin.body.error_code).toBe(1413)
    expect((await post('/rest/v1/iam/pwd_reset_requests', { key: 'ann' }, '10.9.1.6')).body).toMatchObject({
      error_code: 1501,
      error_details: { field: 'domain' },
    })
    expect((await post('/rest/v1/iam/pwd_reset_requests', {}, '10.9.1.7')).body).toMatchObject({
      error_code: 1501,
      error_details: { field: 'key' },
    })
    for (const [i, body] of ['"hello"', '5', '[1]'].entries()) {
      const res = await t.call('POST', '/rest/v1/iam/pwd_reset_requests', {
        raw: body,
        headers: from(`10.9.1.${20 + i}`),
      })
      expect([body, res.status, res.body.error_code]).toEqual([body, 412, 1501])
    }
    expect(
      (await patch('/rest/v1/iam/pwd_reset_requests/0192a3b4-0000-4000-8000-000000000001', { pwd: 'ann-Pass9' }))
        .status,
    ).toBe(404)
    expect(
      (await patch('/rest/v1/iam/pwd_reset_requests/not-a-uuid', { pwd: 'ann-Pass9' })).body.error_details,
    ).toEqual({ field: 'id' })
  })

  test('two requests racing from one address: one passes', async () => {
    const both = await Promise.all(
      [0, 1].map(() => post('/rest/v1/iam/pwd_reset_requests', { key: 'ann', domain: 'mail.master' }, '10.9.2.9')),
    )
    expect(both.map((r) => r.status).sort()).not.toEqual([200, 200])
  })

  test('one request a minute per address (429 with Retry-After)', async () => {
    expect(
      (await post('/rest/v1/iam/pwd_reset_requests', { key: 'ann', domain: 'mail.master' }, '10.9.2.1')).status,
    ).toBe(200)
    const again = await post('/rest/v1/iam/pwd_reset_requests', { key: 'ann', domain: 'mail.master' }, '10.9.2.1')
    expect(again.status).toBe(429)
    expect(again.headers.get('retry-after')).toBe('60')
    expect(
      (await post('/rest/v1/iam/pwd_reset_requests', { key: 'ann', domain: 'mail.master' }, '10.9.2.2')).status,
    ).toBe(200)
    t.clock.advance(60_000)
    expect(
      (await post('/rest/v1/iam/pwd_reset_requests', { key: 'ann', domain: 'mail.master' }, '10.9.2.1')).status,
    ).toBe(200)
  })

  test('a request lives exactly one hour', async () => {
    // one link at a time: a used link voids the account's others (tests/api/credential-links.test.ts)
    await post('/rest/v1/iam/pwd_reset_requests', { key: 'ann', domain: 'mail.master' }, '10.9.3.1')
    const id1 = idIn(capture.linkIn(capture.to('ann@example.com').at(-1)!)!)
    t.clock.advance(RESET_LIFETIME_MS - 1)
    expect((await patch(`/rest/v1/iam/pwd_reset_requests/${id1}`, { pwd: 'ann-Pass4' })).status).toBe(200)
    await post('/rest/v1/iam/pwd_reset_requests', { key: 'ann', domain: 'mail.master' }, '10.9.3.2')
    const id2 = idIn(capture.linkIn(capture.to('ann@example.com').at(-1)!)!)
    t.clock.advance(RESET_LIFETIME_MS)
    expect((await patch(`/rest/v1/iam/pwd_reset_requests/${id2}`, { pwd: 'ann-Pass5' })).status).toBe(404)
    expect(await t.login('mail.master', 'ann', 'ann-Pass4')).toBeTruthy()
  })
})

describe('invitations', () => {
  let bob: string
  beforeAll(async () => {
    bob = (
      await t.call('POST', '/rest/v1/domain/users', {
        token: admin,
        body: { login: 'bob', opts: { email: 'bob@example.com' } },
      })
    ).body.id
  })

  test('an administrator invites a user: mail with a link; PATCH sets pwd, login, name and deletes the invitation', async () => {
    const res = await post('/rest/v1/iam/invites', { userid: bob }, '10.9.5.1', admin)
    expect(res.body).toEqual(ok('the invitation was sent by e-mail'))
    const mail = capture.to('bob@example.com').at(-1)!
    expect(mail.subject).toBe('Invitation to mail.master')
    const link = capture.linkIn(mail)!
    expect(link).toStartWith('https://platform.example/pages/invite?id=')
    const done = await patch(`/rest/v1/iam/invites/${idIn(link)}`, {
      pwd: 'bob-Pass1',
      login: 'robert',
      name: 'Robert',
    })
    expect(done.body).toEqual({
      ...ok('the invitation was accepted'),
      user: { domain: 'mail.master', login: 'robert' },
    })
    expect((await patch(`/rest/v1/iam/invites/${idIn(link)}`, { pwd: 'bob-Pass2' })).status).toBe(404)
    const token = await t.login('mail.master', 'robert', 'bob-Pass1')
    expect((await t.call('GET', '/rest/v1/user/info', { token })).body).toMatchObject({
      login: 'robert',
      name: 'Robert',
    })
  })

  test('login and name stay unless given; a taken login is 412/1501', async () => {
    t.clock.advance(2 * 60_000)
    await post('/rest/v1/iam/invites', { userid: bob }, '10.9.5.2', admin)
    const id = idIn(capture.linkIn(capture.to('bob@example.com').at(-1)!)!)
    expect((await patch(`/rest/v1/iam/invites/${id}`, { pwd: 'bob-Pass2', login: 'ann' })).body).toMatchObject({
      error_code: 1501,
      error_details: { field: 'login' },
    })
    expect((await patch(`/rest/v1/iam/invites/${id}`, { pwd: 'bob-Pass2' })).body.user).toEqual({
      domain: 'mail.master',
      login: 'robert',
    })
  })

  test('only a domain administrator; unknown user 412/1413; one per 2 minutes per e-mail and per address', async () => {
    const robert = await t.login('mail.master', 'robert', 'bob-Pass2')
    expect((await post('/rest/v1/iam/invites', { userid: bob }, '10.9.6.1', robert)).status).toBe(403)
    expect((await post('/rest/v1/iam/invites', { userid: bob }, '10.9.6.1')).status).toBe(401)
    const unknown = await post(
      '/rest/v1/iam/invites',
      { userid: '0192a3b4-0000-7000-8000-000000000001' },
      '10.9.6.2',
      admin,
    )
    expect([unknown.status, unknown.body.error_code]).toEqual([412, 1413])
    t.clock.advance(2 * 60_000)
    expect((await post('/rest/v1/iam/invites', { userid: bob }, '10.9.6.3', admin)).status).toBe(200)
    const sameMail = await post('/rest/v1/iam/invites', { userid: bob }, '10.9.6.4', admin)
    expect(sameMail.status).toBe(429)
    const carl = (
      await t.call('POST', '/rest/v1/domain/users', {
        token: admin,
        body: { login: 'carl', opts: { email: 'carl@example.com' } },
      })
    ).body.id
    expect((await post('/rest/v1/iam/invites', { userid: carl }, '10.9.6.3', admin)).status).toBe(429) // same address
    expect((await post('/rest/v1/iam/invites', { userid: carl }, '10.9.6.5', admin)).status).toBe(200)
  })

  test('an invitation lives exactly three days', async () => {
    t.clock.advance(2 * 60_000)
    await post('/rest/v1/iam/invites', { userid: bob }, '10.9.7.1', admin)
    const id = idIn(capture.linkIn(capture.to('bob@example.com').at(-1)!)!)
    t.clock.advance(INVITATION_LIFETIME_MS)
    expect((await patch(`/rest/v1/iam/invites/${id}`, { pwd: 'bob-Pass3' })).status).toBe(404)
  })
})

describe('self-registration', () => {
  test('closed unless the domain allows it: 412/1501 naming domain', async () => {
    const res = await post(
      '/rest/v1/iam/self_register_requests',
      { domain: 'mail.master', login: 'dan', name: 'Dan', email: 'dan@example.com' },
      '10.9.8.1',
    )
    expect(res.body).toMatchObject({ error_code: 1501, error_details: { field: 'domain' } })
    expect(
      (
        await post(
          '/rest/v1/iam/self_register_requests',
          { domain: 'master', login: 'dan', name: 'Dan', email: 'dan@example.com' },
          '10.9.8.2',
        )
      ).body.error_details,
    ).toEqual({ field: 'domain' })
  })

  test('values validated, login and e-mail unique (412/1501 with the field)', async () => {
    await t.call('PATCH', '/rest/v1/domain/settings/self_register_allowed', { token: admin, body: { value: true } })
    const cases: [Record<string, unknown>, string][] = [
      [{ login: 'x y', name: 'X', email: 'x@example.com' }, 'login'],
      [{ login: 'xy', name: '', email: 'x@example.com' }, 'name'],
      [{ login: 'xy', name: 'X', email: 'not-mail' }, 'email'],
      [{ login: 'robert', name: 'X', email: 'x@example.com' }, 'login'],
      [{ login: 'xy', name: 'X', email: 'ANN@example.com' }, 'email'],
      [{ name: 'X', email: 'x@example.com' }, 'login'],
    ]
    let n = 0
    for (const [body, field] of cases) {
      const res = await post('/rest/v1/iam/self_register_requests', { domain: 'mail.master', ...body }, `10.9.9.${++n}`)
      expect([field, res.status, res.body.error_code, res.body.error_details?.field]).toEqual([field, 412, 1501, field])
    }
    // text that could not be stored once confirmed is refused now
    const body = { domain: 'mail.master', login: 'lone', name: 'X\ud800', email: 'lone@example.com' }
    const lone = await post('/rest/v1/iam/self_register_requests', body, '10.9.9.99')
    expect([lone.status, lone.body.error_details?.field]).toEqual([400, 'name'])
  })

  test('a confirmation mail; PATCH {pwd} creates the account from the template, with a random id', async () => {
    const group = (await t.call('POST', '/rest/v1/domain/groups', { token: admin, body: { code: 'newcomers' } })).body
      .id
    await t.call('PATCH', '/rest/v1/domain/settings/self_register_template', {
      token: admin,
      body: { value: { roles: ['user'], groups: [group], opts: { title: 'self' } } },
    })
    const res = await post(
      '/rest/v1/iam/self_register_requests',
      { domain: 'MAIL.master', login: 'dan', name: 'Dan', email: 'Dan@Example.com' },
      '10.9.10.1',
    )
    expect(res.body).toEqual(ok('a confirmation link was sent by e-mail'))
    const mail = capture.to('dan@example.com').at(-1)!
    expect(mail.subject).toBe('Confirm your registration in mail.master')
    const link = capture.linkIn(mail)!
    expect(link).toStartWith('https://platform.example/pages/confirm-registration?id=')
    expect(
      (await patch(`/rest/v1/iam/self_register_requests/${idIn(link)}`, { pwd: 'no' })).body.error_details,
    ).toMatchObject({ field: 'pwd' })
    const done = await patch(`/rest/v1/iam/self_register_requests/${idIn(link)}`, { pwd: 'dan-Pass1' })
    expect(done.body).toEqual({ ...ok('the account was created'), user: { domain: 'mail.master', login: 'dan' } })
    const token = await t.login('mail.master', 'dan', 'dan-Pass1')
    const info = (await t.call('GET', '/rest/v1/user/info', { token })).body
    expect(info).toMatchObject({
      login: 'dan',
      name: 'Dan',
      email: 'dan@example.com',
      roles: ['user'],
      groups: [{ id: group, code: 'newcomers' }],
    })
    expect(info.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    const stored = (await t.call('GET', `/rest/v1/domain/users/${info.id}`, { token: admin })).body
    expect(stored.opts).toEqual({ title: 'self', email: 'dan@example.com', self_registered: true })
    expect((await patch(`/rest/v1/iam/self_register_requests/${idIn(link)}`, { pwd: 'dan-Pass2' })).status).toBe(404)
  })

  test('one request per 2 minutes per address; a request lives exactly one day', async () => {
    const body = { domain: 'mail.master', login: 'eve', name: 'Eve', email: 'eve@example.com' }
    expect((await post('/rest/v1/iam/self_register_requests', body, '10.9.11.1')).status).toBe(200)
    const again = await post('/rest/v1/iam/self_register_requests', { ...body, login: 'eve2' }, '10.9.11.1')
    expect([again.status, again.headers.get('retry-after')]).toEqual([429, '120'])
    const id = idIn(capture.linkIn(capture.to('eve@example.com').at(-1)!)!)
    t.clock.advance(SELF_REGISTRATION_LIFETIME_MS)
    expect((await patch(`/rest/v1/iam/self_register_requests/${id}`, { pwd: 'eve-Pass1' })).status).toBe(404)
  })
})

test('with an external authorization script, the whole area answers a clear error', async () => {
  const master = await t.login('master', 'admin', 'admin-Secret_1')
  // the setting names an existing script of the master domain
  const script = { code: 'sso_check', name: 'SSO', scriptdata: 'return null' }
  expect((await t.call('POST', '/rest/v1/service/svcscripts', { token: master, body: script })).status).toBe(200)
  const set = await t.call('PATCH', '/rest/v1/domain/settings/iam_token_svcscript_code', {
    token: master,
    body: { value: 'sso_check' },
  })
  expect(set.status).toBe(200)
  const calls: [string, string, unknown][] = [
    ['POST', '/rest/v1/iam/pwd_reset_requests', { key: 'ann', domain: 'mail.master' }],
    ['PATCH', '/rest/v1/iam/pwd_reset_requests/0192a3b4-0000-4000-8000-000000000001', { pwd: 'x' }],
    [
      'POST',
      '/rest/v1/iam/self_register_requests',
      { domain: 'mail.master', login: 'z', name: 'Z', email: 'z@example.com' },
    ],
    ['PATCH', '/rest/v1/iam/invites/0192a3b4-0000-4000-8000-000000000001', { pwd: 'x' }],
  ]
  for (const [method, path, body] of calls) {
    const res = await t.call(method, path, { body, headers: from('10.9.12.1') })
    expect([path, res.status]).toEqual([path, 403])
    expect(res.body.error_message).toContain("external authorization script 'sso_check'")
  }
  await t.call('PATCH', '/rest/v1/domain/settings/iam_token_svcscript_code', { token: master, body: { value: '' } })
})
