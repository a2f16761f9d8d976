// A task run the service refuses for a passing reason (the domain's handlers at their cap) is tried
// again every second; its warning is written once for that reason, and again at most once a minute.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createLogger } from '~/log'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
const lines: string[] = []
const MINUTE = 60_000
beforeAll(async () => {
  t = await testService({ env: { SCRIPT_MAX_PER_DOMAIN: '1' }, log: createLogger('info', (l) => lines.push(l)) })
  await t.createDomain('refused.master')
  token = await t.adminIn('refused.master')
  t.clock.advance(MINUTE - (t.clock.now() % MINUTE))
})
afterAll(() => t.close())

const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token, body })
const warnings = () => lines.filter((l) => l.includes('service task did not start'))

test('a run refused at the cap warns once a minute, not once a second', async () => {
  await call('POST', '/rest/v1/service/svcscripts', { code: 'hold', name: 'Hold', scriptdata: 'await sleep(600000)' })
  const holder = await call('POST', '/rest/v1/service/svcscript_runtimes', { code: 'hold' })
  expect(holder.status).toBe(200)
  const start = new Date(t.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z')
  const task = { name: 'refused', svcscriptcode: 'hold', intervalsec: 3600, dtstart: start }
  expect((await call('POST', '/rest/v1/service/svctasks', task)).status).toBe(200)
  for (let i = 0; i < 5; i++) {
    await t.run('svc-tasks')
    t.clock.advance(1000)
  }
  expect(warnings()).toHaveLength(1)
  expect(warnings()[0]).toContain('already runs 1 script handlers')
  t.clock.advance(MINUTE)
  await t.run('svc-tasks')
  expect(warnings()).toHaveLength(2)
  await call('DELETE', `/rest/v1/service/svcscript_runtimes/${holder.body.id}`)
})
