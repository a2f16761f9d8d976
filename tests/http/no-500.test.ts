// Bad input never yields a 500: every route of the table, every method it serves, fed malformed
// bodies, parameters and ids, by an administrator in the master domain and in a working domain.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { routes } from '../../routes/_manifest.gen'
import { METHODS } from '~/values'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let tokens: Record<string, string>
beforeAll(async () => {
  t = await testService()
  await t.createDomain('fuzz.master')
  tokens = { master: await t.login('master', 'admin', 'admin-Secret_1'), working: await t.adminIn('fuzz.master') }
  await t.call('POST', '/rest/v1/design/classes', {
    token: tokens.working,
    body: { classname: 'fz/a', properties: [{ name: 'x', data_type: 'int' }] },
  })
})
afterAll(() => t.close())

const BODIES: (string | undefined)[] = [
  undefined,
  '',
  '{',
  'null',
  '[]',
  '"s"',
  '1e999',
  '{"id":"zz"}',
  '{"a":{"b":{"c":[1,{"d":null}]}}}',
  JSON.stringify({ x: 'y'.repeat(5000) }),
  '\u0000',
]
const QUERIES = [
  '',
  '?filter=[',
  '?filter={"a":{"b":1}}',
  '?filter=["==",["property"]]',
  '?mask=%',
  '?mask=a..b',
  '?order=[{}]',
  '?limit=-1',
  '?offset=1e99',
  '?flat=maybe',
  '?params={"dtstart":"x"}',
  '?interval=["b","a"]',
  '?attachment=x',
  '?order="x"',
  '?order={"type":7}',
  '?filter=["contains",["property","x"],{"a":1}]',
  '?filter=["contains",["property","ext.ct"],"not a time"]',
  '?filter=[">",["property","ext.ct"],"2026-99-99T99:00:00Z"]',
  '?limt=1',
  '?interval=["2026-01-01","2026-01-02"]&mask=id',
]
const IDS = ['x', '00000000-0000-0000-0000-000000000000', '%E0%A4%A', '..%2F..%2Fetc', '2026-13-45', 'a'.repeat(300)]

function pathsOf(url: string): string[] {
  if (url.endsWith('/*'))
    return [
      url.replace('/*', '/fz/a'),
      url.replace('/*', '/fz/a/x'),
      url.replace('/*', '/nope/2026-01-01/x'),
      url.replace('/*', '/fz/a/'),
      url.replace('/*', '/fz/a/2026'),
      url.replace('/*', '/fz/a/2026-13'),
    ]
  if (!url.includes(':')) return [url]
  return IDS.map((id) => url.replace(/:\w+/g, id))
}

test('no route answers 500 to bad input', async () => {
  const failures: string[] = []
  let calls = 0
  let unauthenticated = 0
  for (const route of routes) {
    // ending the session would leave the rest of the sweep unauthenticated
    for (const method of METHODS.filter(
      (m) => route.module[m] && !(m === 'DELETE' && route.url === '/rest/v1/iam/sessions/current'),
    )) {
      for (const path of pathsOf(route.url)) {
        for (const [who, token] of Object.entries(tokens)) {
          for (const query of QUERIES) {
            for (const body of method === 'GET' || method === 'HEAD' ? [undefined] : BODIES) {
              const res = await t.request(method, path + query, { token, raw: body })
              calls++
              if (res.status === 401) unauthenticated++
              if (res.status >= 500)
                failures.push(
                  `${res.status} ${method} ${path}${query} as ${who} body=${JSON.stringify(body)?.slice(0, 40)}: ${(await res.text()).slice(0, 120)}`,
                )
            }
          }
        }
      }
    }
  }
  expect(calls).toBeGreaterThan(5000)
  expect(failures).toEqual([])
  // the sweep reached the handlers: the sessions stayed valid throughout (a few routes answer 401 by design)
  expect(unauthenticated / calls).toBeLessThan(0.05)
}, 120_000)
