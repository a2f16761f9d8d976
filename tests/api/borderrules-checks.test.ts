// The original's border-rule examples as written, and its two checks over HTTP: the checker answers
// which check decided and which rule.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
const base = '/rest/v1/master/borderrules'
beforeAll(async () => {
  t = await testService()
  token = await t.login('master', 'admin', ADMIN_PASSWORD)
})
afterAll(() => t.close())

const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token, body })
const ask = async (query: string) => (await call('GET', `/rest/v1/master/borderrules_check?${query}`)).body

test("the original's create and list examples run as written, and decide as their fields say", async () => {
  // the create example's answer, sent back as the body (its id too)
  const created = await call('POST', base, {
    id: '9a7a73b7-016c-cd10-9ca9-50e54938780c',
    enabled: 1,
    priority: 91,
    site: '*',
    service: 'sip',
    domain: 'docs[.]rootdomain[.]ru',
    username: '',
    useragent: '',
    remoteipmask: '0.0.0.0/0',
    action: 'allow',
    opts: { title: '', comment: '' },
  })
  expect(created.status).toBe(200)
  // the list example's second rule, with its site ''
  const denied = await call('POST', base, {
    id: '592aac52-016c-cd11-5ca7-50e54938780c',
    enabled: 1,
    priority: 92,
    site: '',
    service: 'sip',
    domain: '',
    username: 'abcde',
    useragent: '',
    remoteipmask: '0.0.0.0/0',
    action: 'deny',
    opts: { title: '' },
  })
  expect(denied.status).toBe(200)
  const list = await call('GET', `${base}?offset=0&limit=5`)
  const listed = list.body.map((r: { id: string; priority: number }) => [r.id, r.priority])
  expect(listed.sort((a: [string, number], b: [string, number]) => a[1] - b[1])).toEqual([
    ['9a7a73b7-016c-cd10-9ca9-50e54938780c', 91],
    ['592aac52-016c-cd11-5ca7-50e54938780c', 92],
  ])

  const rows: [query: string, rule: string | null, check: string | null, action: string][] = [
    // abcde is denied, unless it comes from the allowed domain (91 before 92)
    ['ip=192.0.2.1&username=abcde', denied.body.id, 'all', 'deny'],
    ['ip=192.0.2.1&username=abcde&domain=docs.rootdomain.ru', created.body.id, 'all', 'allow'],
    ['ip=192.0.2.1&username=abcdef', denied.body.id, 'all', 'deny'], // a pattern matches a part
    ['ip=192.0.2.1&username=ann', null, null, 'allow'],
    ['ip=2001:db8::1&username=abcde', null, null, 'allow'], // 0.0.0.0/0 covers IPv4 only
  ]
  for (const [query, rule, check, action] of rows)
    expect([query, await ask(query)]).toMatchObject([query, { action, check, rule: rule && { id: rule } }])
  for (const r of [created, denied]) await call('DELETE', `${base}/${r.body.id}`)
})

test('two checks: address-only rules first (a deny or drop ends it), then every rule by priority', async () => {
  const make = async (body: Record<string, unknown>) => (await call('POST', base, body)).body.id as string
  const whitelist = await make({ priority: 1, domain: '^docs[.]rootdomain[.]ru$' }) // action: allow by default
  const scanner = await make({ priority: 2, useragent: 'friendly-scanner', action: 'drop' })
  const trusted = await make({ priority: 5, remoteipmask: '10.0.0.0/8' })
  const banned = await make({ priority: 50, remoteipmask: '203.0.113.0/24', action: 'deny' })

  const rows: [query: string, rule: string | null, check: string | null, action: string][] = [
    ['ip=203.0.113.7&domain=docs.rootdomain.ru', banned, 'address', 'deny'],
    ['ip=10.1.1.1&useragent=friendly-scanner/1.0', scanner, 'all', 'drop'],
    ['ip=192.0.2.1&useragent=Friendly-Scanner', scanner, 'all', 'drop'],
    ['ip=192.0.2.1&useragent=friendly-scanner&domain=docs.rootdomain.ru', whitelist, 'all', 'allow'],
    ['ip=10.1.1.1', trusted, 'all', 'allow'],
    ['ip=192.0.2.1', null, null, 'allow'],
  ]
  const run = async () => {
    for (const [query, rule, check, action] of rows)
      expect([query, await ask(query)]).toMatchObject([query, { action, check, rule: rule && { id: rule } }])
  }
  await run()
  // a catch-all drop filters by address alone: it now ends the first check for every address not
  // allowed before it there, whitelisted domain or not (the original's warning about whitelists)
  const dropAll = await make({ priority: 100, action: 'drop' })
  rows.splice(3, 1, ['ip=192.0.2.1&useragent=friendly-scanner&domain=docs.rootdomain.ru', dropAll, 'address', 'drop'])
  rows.splice(2, 1, ['ip=192.0.2.1&useragent=Friendly-Scanner', dropAll, 'address', 'drop'])
  rows.splice(5, 1, ['ip=192.0.2.1', dropAll, 'address', 'drop'])
  await run()
})

test('a pattern that can backtrack catastrophically is a 400 naming the field, at create and at patch', async () => {
  const res = await call('POST', base, { priority: 1, useragent: '(a+)+$' })
  expect([res.status, res.body.error_details]).toEqual([400, { field: 'useragent' }])
  expect(res.body.error_message).toContain('backtrack')
  const ok = (await call('POST', base, { priority: 1, useragent: 'a+$' })).body
  const patched = await call('PATCH', `${base}/${ok.id}`, { domain: '(\\w+\\s?)*$' })
  expect([patched.status, patched.body.error_details]).toEqual([400, { field: 'domain' }])
})
