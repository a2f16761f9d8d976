// The one-step password change proves the current password: wrong guesses count as failed sign-ins,
// per address and per account, with 429 and Retry-After beyond the limit.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { FAILURE_WINDOW_MS, MAX_FAILURES } from '~/identity/brute-force'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
beforeAll(async () => {
  t = await testService()
  const d = await t.createDomain('guess.master')
  await t.createUser(d.id, 'gus', 'gus-Pass1')
  token = await t.login('guess.master', 'gus', 'gus-Pass1')
})
afterAll(() => t.close())

const change = (current_pwd: string, address: string) =>
  t.call('POST', '/rest/v1/iam/pwd_reset_requests', {
    token,
    body: { current_pwd, new_pwd: 'gus-Pass2' },
    headers: { 'x-real-ip': address },
  })

test('wrong current passwords are limited per address and per account; the right one works once the window passes', async () => {
  for (let i = 0; i < MAX_FAILURES; i++) expect((await change(`wrong-${i}`, '10.61.0.1')).status).toBe(412)
  const banned = await change('gus-Pass1', '10.61.0.1')
  expect(banned.status).toBe(429)
  expect(banned.headers.get('retry-after')).toBeTruthy()
  // another address guessing the same account is held back too
  const elsewhere = await change('wrong', '10.61.0.2')
  expect([elsewhere.status, elsewhere.body.error_message]).toEqual([
    429,
    'too many failed sign-ins from this account; try again later',
  ])
  t.clock.advance(FAILURE_WINDOW_MS)
  expect((await change('gus-Pass1', '10.61.0.3')).status).toBe(200)
})
