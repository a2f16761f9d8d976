// Without RESEND_API_KEY nothing is sent: every message is kept in the outbox and written to the
// log with its link, so a newcomer can finish each flow locally.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createLogger } from '~/log'
import { mailTo } from '~/mail/mail'
import { testService, type TestService } from '../helpers/service'

let t: TestService
const lines: string[] = []
beforeAll(async () => {
  t = await testService({ log: createLogger('info', (l) => lines.push(l)) })
  const d = await t.createDomain('local.master')
  const admin = await t.adminIn('local.master')
  await t.call('POST', '/rest/v1/domain/users', {
    token: admin,
    body: { login: 'ann', opts: { email: 'ann@example.com' } },
  })
  expect(d.id).toBeTruthy()
})
afterAll(() => t.close())

test('the message is in the outbox as logged, and its link is in the log', async () => {
  const res = await t.call('POST', '/rest/v1/iam/pwd_reset_requests', { body: { key: 'ann', domain: 'local.master' } })
  expect(res.body.result).toBe(true)
  const [row] = await mailTo(t.deps.db, 'ann@example.com')
  expect(row).toMatchObject({ status: 'logged', subject: 'Reset your password', attempts: 0 })
  const link = /http:\/\/\S+\/pages\/reset-password\?id=[0-9a-f-]{36}/.exec(row!.text)![0]
  const logged = lines.map((l) => JSON.parse(l)).find((l) => l.msg.startsWith('mail') && l.to === 'ann@example.com')
  expect(logged.text).toContain(link)
  // the flow can be finished from what the log shows
  const id = /id=(.+)$/.exec(link)![1]
  expect((await t.call('PATCH', `/rest/v1/iam/pwd_reset_requests/${id}`, { body: { pwd: 'ann-Pass1' } })).status).toBe(
    200,
  )
})
