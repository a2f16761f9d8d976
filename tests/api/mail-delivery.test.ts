// The mail worker and a provider that fails: each attempt's outcome is kept on the message, the
// message is retried with backoff, and given up after MAX_ATTEMPTS; the request that sent it is not.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mailTo } from '~/mail/mail'
import { MAX_ATTEMPTS } from '~/workers/mail-outbox'
import { startMailCapture } from '../helpers/mail-capture'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let capture: Awaited<ReturnType<typeof startMailCapture>>
beforeAll(async () => {
  capture = await startMailCapture()
  t = await testService({ env: { RESEND_API_KEY: 're_test_key', RESEND_BASE_URL: capture.url } })
  await t.createDomain('retry.master')
  const admin = await t.adminIn('retry.master')
  const ann = { login: 'ann', name: 'Ann', pwd: 'ann-Pass1', opts: { email: 'ann@example.com' } }
  await t.call('POST', '/rest/v1/domain/users', { token: admin, body: ann })
})
afterAll(async () => {
  await t.close()
  capture.stop()
})

/** Asks for a password-reset link (a mail), then lets the mail worker make one pass. */
async function askForLink(address: string) {
  const res = await t.call('POST', '/rest/v1/iam/pwd_reset_requests', {
    body: { key: 'ann', domain: 'retry.master' },
    headers: { 'x-real-ip': address },
  })
  await t.run('mail-outbox')
  return res
}
const newest = async () => (await mailTo(t.deps.db, 'ann@example.com'))[0]!

test('a failed delivery is recorded and retried; the request is kept and the answer does not change', async () => {
  capture.setFailing(true)
  const res = await askForLink('10.9.4.1')
  expect(res.body).toEqual({
    error_code: 0,
    result: true,
    result_msg: 'a link to set a new password was sent by e-mail',
  })
  expect(await newest()).toMatchObject({ status: 'pending', attempts: 1 })
  expect((await newest()).error).toContain('capture server told to fail')
  capture.setFailing(false)
  await t.run('mail-outbox')
  expect((await newest()).status).toBe('pending') // not due yet
  t.clock.advance(30_000)
  await t.run('mail-outbox')
  expect(await newest()).toMatchObject({ status: 'sent', attempts: 2, providerId: expect.stringMatching(/^captured-/) })
  const link = capture.linkIn(capture.to('ann@example.com').at(-1)!)!
  const id = /id=([0-9a-f-]{36})/.exec(link)![1]
  expect((await t.call('PATCH', `/rest/v1/iam/pwd_reset_requests/${id}`, { body: { pwd: 'ann-Pass6' } })).status).toBe(
    200,
  )
})

test(`after ${MAX_ATTEMPTS} failed attempts a message is marked failed`, async () => {
  capture.setFailing(true)
  await askForLink('10.9.4.2')
  for (let i = 1; i < MAX_ATTEMPTS; i++) {
    t.clock.advance(3 * 3600_000)
    await t.run('mail-outbox')
  }
  capture.setFailing(false)
  expect(await newest()).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS })
})
