// MASTER_DOMAIN names the master domain at the first start only. A later start with another name
// says so in a warning (it was ignored silently), and the operator's password reset, whose domain
// is the master domain by default, still finds it (it looked for the domain MASTER_DOMAIN names).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createLogger } from '~/log'
import { resetPassword } from '~/ops/admin-ops'
import { testService, type TestService } from '../helpers/service'

let first: TestService
let renamed: TestService
const lines: { level: string; msg: string; MASTER_DOMAIN?: string; master?: string }[] = []
beforeAll(async () => {
  first = await testService()
  renamed = await testService({
    dataDir: first.dir,
    env: { MASTER_DOMAIN: 'renamed.example' },
    log: createLogger('info', (line) => lines.push(JSON.parse(line))),
  })
})
afterAll(async () => {
  await renamed.close()
  await first.close()
})

test('a start with another MASTER_DOMAIN warns, naming both', () => {
  const warned = lines.filter((l) => l.level === 'warn' && l.msg.includes('MASTER_DOMAIN'))
  expect(warned).toHaveLength(1)
  expect(warned[0]).toMatchObject({ MASTER_DOMAIN: 'renamed.example', master: 'master' })
})

test("the operator's password reset finds the master domain as it is stored", async () => {
  const pwd = await resetPassword(renamed.deps, 'admin')
  expect(await renamed.login('master', 'admin', pwd)).toBeTruthy()
})
