// Mailed credential links (password reset, invitation) die with what they were sent for: a new
// password set by any route, a used link of the account, a changed e-mail or login. The database
// holds only a hash of each link's id.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { systemCtx } from '~/context'
import { openRequest } from '~/credentials/common'
import { resetPassword } from '~/ops/admin-ops'
import { requestKey } from '~storage/requests'
import { startMailCapture } from '../helpers/mail-capture'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let capture: Awaited<ReturnType<typeof startMailCapture>>
let admin: string
let domainId: string
const DOMAIN = 'links.master'

beforeAll(async () => {
  capture = await startMailCapture()
  t = await testService({
    env: { RESEND_API_KEY: 're_test_key', RESEND_BASE_URL: capture.url, PUBLIC_URL: 'https://platform.example' },
  })
  domainId = (await t.createDomain(DOMAIN)).id
  admin = await t.adminIn(DOMAIN)
})
afterAll(async () => {
  await t.close()
  capture.stop()
})

let n = 0
/** Each call from an address of its own: the per-address limits stay out of the way. */
const from = () => ({ 'x-real-ip': `10.7.${Math.floor(++n / 250)}.${n % 250}` })
const call = (method: string, path: string, body: unknown, token?: string) =>
  t.call(method, path, { body, headers: from(), token })

async function newUser(login: string, extra: Record<string, unknown> = {}): Promise<string> {
  const body = { login, pwd: `${login}-Pass1`, opts: { email: `${login}@example.com` }, ...extra }
  const res = await t.call('POST', '/rest/v1/domain/users', { token: admin, body })
  expect(res.status).toBe(200)
  return res.body.id
}

/** Asks for a link and answers its id, read from the mail the worker delivered. */
async function link(path: string, body: unknown, to: string, token?: string): Promise<string> {
  expect((await call('POST', path, body, token)).status).toBe(200)
  await t.run('mail-outbox')
  return /id=([0-9a-f-]{36})/.exec(capture.linkIn(capture.to(to).at(-1)!)!)![1]!
}
const resetLink = (login: string) =>
  link('/rest/v1/iam/pwd_reset_requests', { key: login, domain: DOMAIN }, `${login}@example.com`)
const invitation = (userid: string, login: string) => {
  t.clock.advance(2 * 60_000) // one invitation per e-mail address per 2 minutes
  return link('/rest/v1/iam/invites', { userid }, `${login}@example.com`, admin)
}
const useReset = (id: string, pwd: string) => call('PATCH', `/rest/v1/iam/pwd_reset_requests/${id}`, { pwd })
const accept = (id: string, body: Record<string, unknown>) => call('PATCH', `/rest/v1/iam/invites/${id}`, body)

describe('password reset links', () => {
  test('void after the user changes the password while signed in', async () => {
    await newUser('rita')
    const id = await resetLink('rita')
    const token = await t.login(DOMAIN, 'rita', 'rita-Pass1')
    const body = { current_pwd: 'rita-Pass1', new_pwd: 'rita-Pass2' }
    expect((await t.call('POST', '/rest/v1/iam/pwd_reset_requests', { token, body })).status).toBe(200)
    expect((await useReset(id, 'rita-Taken3')).status).toBe(404)
    expect(await t.login(DOMAIN, 'rita', 'rita-Pass2')).toBeTruthy()
  })

  test('void after a newer link of the account was used', async () => {
    await newUser('sam')
    const older = await resetLink('sam')
    const newer = await resetLink('sam')
    expect((await useReset(newer, 'sam-Pass2')).status).toBe(200)
    expect((await useReset(older, 'sam-Taken3')).status).toBe(404)
    expect(await t.login(DOMAIN, 'sam', 'sam-Pass2')).toBeTruthy()
  })

  test("void after the account's e-mail changed", async () => {
    const tia = await newUser('tia')
    const id = await resetLink('tia')
    const patch = { opts: { email: 'tia.new@example.com' } }
    expect((await t.call('PATCH', `/rest/v1/domain/users/${tia}`, { token: admin, body: patch })).status).toBe(200)
    expect((await useReset(id, 'tia-Taken2')).status).toBe(404)
  })

  test("void after the account's login changed", async () => {
    const uma = await newUser('uma')
    const before = await resetLink('uma')
    const rename = { login: 'uma2' }
    expect((await t.call('PATCH', `/rest/v1/domain/users/${uma}`, { token: admin, body: rename })).status).toBe(200)
    expect((await useReset(before, 'uma-Taken2')).status).toBe(404)
  })

  test('void after an administrator or an operator set the password; other changes leave them', async () => {
    const vic = await newUser('vic')
    const kept = await resetLink('vic')
    const unrelated = { name: 'Victor', opts: { email: 'vic@example.com', title: 'x' } }
    expect((await t.call('PATCH', `/rest/v1/domain/users/${vic}`, { token: admin, body: unrelated })).status).toBe(200)
    expect((await useReset(kept, 'vic-Pass2')).status).toBe(200)

    const first = await resetLink('vic')
    const body = { pwd: 'vic-Admin3' }
    expect((await t.call('PATCH', `/rest/v1/domain/users/${vic}`, { token: admin, body })).status).toBe(200)
    expect((await useReset(first, 'vic-Taken4')).status).toBe(404)

    const second = await resetLink('vic')
    await resetPassword(t.deps, 'vic', DOMAIN)
    expect((await useReset(second, 'vic-Taken5')).status).toBe(404)
  })
})

describe('invitation links', () => {
  test('void after another invitation for the account was accepted', async () => {
    const wes = await newUser('wes')
    const older = await invitation(wes, 'wes')
    const newer = await invitation(wes, 'wes')
    expect((await accept(newer, { pwd: 'wes-Pass2' })).status).toBe(200)
    expect((await accept(older, { pwd: 'wes-Taken3', login: 'wes-stolen' })).status).toBe(404)
    expect(await t.login(DOMAIN, 'wes', 'wes-Pass2')).toBeTruthy()
  })

  test('void after the e-mail changed: the old one changes neither password nor login', async () => {
    const xia = await newUser('xia')
    const id = await invitation(xia, 'xia')
    const patch = { opts: { email: 'xia.new@example.com' } }
    expect((await t.call('PATCH', `/rest/v1/domain/users/${xia}`, { token: admin, body: patch })).status).toBe(200)
    expect((await accept(id, { pwd: 'xia-Taken2', login: 'xia-stolen' })).status).toBe(404)
    expect(await t.login(DOMAIN, 'xia', 'xia-Pass1')).toBeTruthy()
  })

  test('a reset link used voids a pending invitation, and an accepted invitation a reset link', async () => {
    const yan = await newUser('yan')
    const invite = await invitation(yan, 'yan')
    expect((await useReset(await resetLink('yan'), 'yan-Pass2')).status).toBe(200)
    expect((await accept(invite, { pwd: 'yan-Taken3' })).status).toBe(404)

    const reset = await resetLink('yan')
    expect((await accept(await invitation(yan, 'yan'), { pwd: 'yan-Pass4' })).status).toBe(200)
    expect((await useReset(reset, 'yan-Taken5')).status).toBe(404)
    expect(await t.login(DOMAIN, 'yan', 'yan-Pass4')).toBeTruthy()
  })
})

test('the database holds a hash of each link id, never the id; the link works through it', async () => {
  await newUser('zoe')
  const id = await resetLink('zoe')
  const ids = (await t.deps.db.all('SELECT id FROM iam_requests')).map((r) => r[0])
  expect(ids).not.toContain(id)
  expect(ids).toContain(requestKey(id))
  // the stored hash is no link: refused as an id
  expect((await useReset(requestKey(id), 'zoe-Taken2')).status).toBe(400)
  expect((await useReset(id, 'zoe-Pass2')).status).toBe(200)
  expect(await t.deps.db.get('SELECT 1 FROM iam_requests WHERE id = ?', [requestKey(id)])).toBeUndefined()
})

test("deleting the account voids its links; a link asked for while the account's e-mail changed is not stored", async () => {
  const ada = await newUser('ada')
  await resetLink('ada')
  const links = "SELECT count(*) FROM iam_requests WHERE json_extract(doc, '$.userId') = ?"
  expect(await t.deps.db.get(links, [ada])).toEqual([1])
  expect((await t.call('DELETE', `/rest/v1/domain/users/${ada}`, { token: admin })).status).toBe(204)
  expect(await t.deps.db.get(links, [ada])).toEqual([0])

  // as the first step would store it had it read the account just before its e-mail changed
  const ben = await newUser('ben')
  const doc = { userId: ben, login: 'ben', email: 'ben.old@example.com' }
  const request = { id: crypto.randomUUID(), kind: 'pwd_reset' as const, domain: domainId, account: ben, doc }
  const mail = { domain: domainId, recipient: doc.email, subject: 's', text: 't', html: 'h' }
  const stale = openRequest(systemCtx(t.deps, domainId), { ...request, expires: t.clock.now() + 60_000 }, mail)
  await expect(stale).rejects.toMatchObject({ status: 409 })
  expect(await t.deps.db.get('SELECT 1 FROM iam_requests WHERE id = ?', [requestKey(request.id)])).toBeUndefined()
})
