// Scripts that try to break their surroundings: results a message cannot carry, source that leaves
// its wrapper, endless nesting, a stampede past the cap, an onStop that lets the script finish, and
// a broad allow-list entry that must not open private addresses. Each handler ends with a reason; a
// bystander on the same threads goes on.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { scriptFetch } from '~/scripts/http'
import { testService, type TestService } from '../helpers/service'

const BASE = '/rest/v1/service/svcscript_runtimes'
let t: TestService
let token: string
beforeAll(async () => {
  t = await testService({ env: { SCRIPT_MAX_PER_DOMAIN: '3', SCRIPT_THREADS: '1' } })
  await t.createDomain('hard.master')
  token = await t.adminIn('hard.master')
  const scripts: Record<string, string> = {
    symbol: 'return Symbol("x")',
    escape: '})(); (function () {',
    recurse: 'return await call("recurse", [])',
    waiter: 'await sleep(600000)',
    bystander: 'await sleep(300); return "still here"',
    polite: 'let done; const p = new Promise((r) => { done = r }); onStop(() => done("bye")); return await p',
  }
  for (const [code, scriptdata] of Object.entries(scripts))
    expect((await call('POST', '/rest/v1/service/svcscripts', { code, name: code, scriptdata })).status).toBe(200)
})
afterAll(() => t.close())

const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token, body })
const start = async (code: string) => (await call('POST', BASE, { code })).body
async function outcome(id: string) {
  for (let i = 0; i < 500; i++) {
    const body = (await call('GET', `${BASE}/${id}`)).body
    if (body.status !== 'running') return body
    await Bun.sleep(10)
  }
  throw new Error(`handler ${id} did not end`)
}

test('a result no message can carry, or source that leaves its wrapper, fails that handler alone', async () => {
  const bystander = await start('bystander')
  // a Symbol is no JSON value: the outcome records none (and the thread goes on)
  const symbol = await outcome((await start('symbol')).id)
  expect(symbol.status).toBe('done')
  expect(symbol.result).toBeUndefined()
  expect(await outcome((await start('escape')).id)).toMatchObject({
    status: 'failed',
    error: 'a script is the body of a function',
  })
  expect(await outcome(bystander.id)).toMatchObject({ status: 'done', result: 'still here' })
})

test('nesting counts toward the cap and ends: a script calling itself fails, nothing keeps running', async () => {
  const h = await start('recurse')
  expect(await outcome(h.id)).toMatchObject({ status: 'failed' })
  expect((await call('GET', BASE)).body).toEqual([])
})

test('starts racing past the cap: at most SCRIPT_MAX_PER_DOMAIN run, the others get 429', async () => {
  const answers = await Promise.all(Array.from({ length: 12 }, () => call('POST', BASE, { code: 'waiter' })))
  expect(answers.filter((a) => a.status === 200)).toHaveLength(3)
  expect(answers.filter((a) => a.status === 429)).toHaveLength(9)
  for (const a of answers.filter((x) => x.status === 200)) await call('DELETE', `${BASE}/${a.body.id}`)
})

test('an onStop branch that lets the script finish: the stop is answered and the outcome kept', async () => {
  const h = await start('polite')
  await Bun.sleep(20)
  const stop = await Promise.race([call('DELETE', `${BASE}/${h.id}`), Bun.sleep(3000).then(() => null)])
  expect(stop?.status).toBe(204)
  expect(await outcome(h.id)).toMatchObject({ status: 'done', result: 'bye' })
})

test('a broad allow-list block does not open private addresses; an unlisted name is refused first', async () => {
  const policy = { allow: ['0.0.0.0/0'], timeoutMs: 1000, maxBytes: 1024 }
  await expect(scriptFetch({ url: 'http://10.1.2.3/' }, policy)).rejects.toThrow('not a public address')
  await expect(scriptFetch({ url: 'http://127.0.0.1/' }, policy)).rejects.toThrow('not a public address')
  await expect(scriptFetch({ url: 'http://unlisted.invalid/' }, policy)).rejects.toThrow('is not among the hosts')
})
