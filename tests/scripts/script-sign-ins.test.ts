// Sign-ins made by scripts (through their data calls) are counted by the brute-force filter per
// domain (src/http/dispatch.ts): one domain's failing script sign-ins hold back its own, never another's.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

const BASE = '/rest/v1/service/svcscript_runtimes'
/** Signs in with the given password `startparam(2)` times; answers each answer's code or 'ok'. */
const SIGN_IN = `
  const out = []
  for (let i = 0; i < startparam(2); i++) {
    try {
      const body = { domain: 'ann.master', login: 'ann', pwd: startparam(1), session_type: 'token' }
      await data.create('/rest/v1/iam/sessions', body)
      out.push('ok')
    } catch (e) {
      out.push(e.message.split(' ')[1])
    }
  }
  return out`

let t: TestService
const tokens: Record<string, string> = {}
beforeAll(async () => {
  t = await testService()
  const ann = await t.createDomain('ann.master')
  await t.createUser(ann.id, 'ann', 'ann-Pass1')
  for (const domain of ['guess.master', 'honest.master']) {
    await t.createDomain(domain)
    tokens[domain] = await t.adminIn(domain)
    const body = { code: 'signin', name: 'signin', scriptdata: SIGN_IN }
    expect((await t.call('POST', '/rest/v1/service/svcscripts', { token: tokens[domain], body })).status).toBe(200)
  }
})
afterAll(() => t.close())

async function run(domain: string, pwd: string, times: number): Promise<unknown> {
  const token = tokens[domain]!
  await t.run('node-heartbeat') // the node's record lapses in 4 s of real time; tests drive its heartbeat
  const started = await t.call('POST', BASE, { token, body: { code: 'signin', startparam1: pwd, startparam2: times } })
  expect([started.status, started.body]).toEqual([200, expect.anything()])
  for (;;) {
    const read = await t.call('GET', `${BASE}/${started.body.id}`, { token })
    if (read.body.status !== 'running') return read.body
    await Bun.sleep(10)
  }
}

test("one domain's failing script sign-ins hold back its own scripts only", async () => {
  const guessed = await run('guess.master', 'wrong', 6)
  expect(guessed).toMatchObject({ status: 'done', result: ['1401', '1401', '1401', '1401', '1401', '1429'] })
  // another domain's script signs in at once: its bucket is its own
  expect(await run('honest.master', 'ann-Pass1', 1)).toMatchObject({ status: 'done', result: ['ok'] })
  // and the guessing domain stays held back
  expect(await run('guess.master', 'ann-Pass1', 1)).toMatchObject({ status: 'done', result: ['1429'] })
})
