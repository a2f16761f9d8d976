// Housekeeping: expired credential requests go; finished queue jobs are kept a week, then go.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { DAY_MS } from '~/clock'
import { FINISHED_JOBS_KEPT_MS } from '~/workers/housekeeping'
import { testService, type TestService } from '../helpers/service'

let t: TestService
beforeAll(async () => {
  t = await testService({ kv: 'memory' })
  await t.createDomain('keep.master')
  const admin = await t.adminIn('keep.master')
  await t.call('POST', '/rest/v1/domain/users', {
    token: admin,
    body: { login: 'kim', pwd: 'kim-Pass11', opts: { email: 'kim@example.com' } },
  })
})
afterAll(() => t.close())

const count = async (sql: string) => (await t.deps.db.get(sql))![0] as number

test('a credential request outliving its lifetime is removed; a current one stays', async () => {
  const ask = () => t.call('POST', '/rest/v1/iam/pwd_reset_requests', { body: { key: 'kim', domain: 'keep.master' } })
  expect((await ask()).status).toBe(200)
  t.clock.advance(DAY_MS) // the first link (one hour) has expired
  expect((await ask()).status).toBe(200)
  expect(await count('SELECT count(*) FROM iam_requests')).toBe(2)
  await t.run('housekeeping')
  expect(await count('SELECT count(*) FROM iam_requests')).toBe(1)
})

test('finished jobs are kept for a week, then removed; unfinished ones stay', async () => {
  const now = new Date(t.clock.now()).toISOString()
  const recent = `SELECT count(*) FROM queue WHERE status = 'done' AND finished = '${now}'`
  expect(await count(recent)).toBe(1) // the newest mail of the test above, recorded as logged just now
  await t.deps.db.run(
    `INSERT INTO queue (id, kind, domain, payload, status, run_at, created) VALUES ('waiting', 'mail', 'x', '{}', 'pending', 0, '2000-01-01')`,
  )
  t.clock.advance(FINISHED_JOBS_KEPT_MS - 60_000)
  await t.run('housekeeping')
  expect(await count(recent)).toBe(1)
  t.clock.advance(DAY_MS)
  await t.run('housekeeping')
  expect(await count(`SELECT count(*) FROM queue WHERE status = 'done'`)).toBe(0)
  expect(await count(`SELECT count(*) FROM queue WHERE id = 'waiting'`)).toBe(1)
})
