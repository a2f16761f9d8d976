// The licence's limits where this service creates what they count: working domains and service
// scripts, installation-wide, checked inside the create's transaction (a refused create leaves no
// row and no journal record, and concurrent creates cannot both pass).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let admin: string
beforeAll(async () => {
  t = await testService()
  admin = await t.login('master', 'admin', 'admin-Secret_1')
})
afterAll(() => t.close())

const domainsUrl = '/rest/v1/domain/domains'
const scriptsUrl = '/rest/v1/service/svcscripts'
const createDomain = (name: string) => t.call('POST', domainsUrl, { token: admin, body: { name } })
const countRows = async (table: string) => (await t.deps.db.get(`SELECT count(*) FROM ${table}`))![0] as number
const expectLimit = (res: { status: number; body: Record<string, unknown> }, limit: string, value: number) => {
  expect(res.status).toBe(403)
  expect(res.body).toEqual({
    error_code: 1403,
    error_message: `licence limit reached: ${limit} = ${value}`,
    error_details: { limit, value },
  })
}

describe('domains', () => {
  test('the evaluation licence allows 5 working domains (the master domain not counted)', async () => {
    for (let i = 1; i <= 5; i++) expect((await createDomain(`d${i}.master`)).status).toBe(200)
    const journaled = (await t.journal(t.master.id)).length
    expectLimit(await createDomain('d6.master'), 'domains', 5)
    expect(await countRows('domains')).toBe(6) // the master domain and five working domains
    expect((await t.journal(t.master.id)).length).toBe(journaled)
    expect((await t.call('LOOKUP', domainsUrl, { token: admin, body: 'd6.master' })).status).toBe(404)
  })

  test('a bigger licence lets the next one in; deleting a domain frees its place', async () => {
    expect((await t.licence({ domains: 6 })).dql.domains).toBe(6)
    const sixth = await createDomain('d6.master')
    expect(sixth.status).toBe(200)
    expectLimit(await createDomain('d7.master'), 'domains', 6)
    expect((await t.call('DELETE', `${domainsUrl}/${sixth.body.id}`, { token: admin })).status).toBe(204)
    expect((await createDomain('d7.master')).status).toBe(200)
  })

  test('concurrent creates at the limit: exactly as many pass as there are places', async () => {
    await t.licence({ domains: 8 }) // six working domains exist: two places
    const results = await Promise.all(['c1', 'c2', 'c3', 'c4'].map((n) => createDomain(`${n}.master`)))
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 403, 403])
    expect(await countRows('domains')).toBe(9)
  })

  test('when the licence expires, the evaluation limit applies again to new domains', async () => {
    await t.licence({ domains: 8 }) // replaced below by one that expires
    const { issueLicence } = await import('../../scripts/licence-issue')
    const expires = new Date(t.clock.now() + 60_000)
    const token = await issueLicence({ installation: t.installation, dql: { domains: 20 }, expires })
    expect((await t.call('POST', '/rest/v1/master/license', { token: admin, body: token })).status).toBe(200)
    expect((await createDomain('e1.master')).status).toBe(200)
    t.clock.advance(60_000)
    expectLimit(await createDomain('e2.master'), 'domains', 5)
    // existing domains stay; only creating more is refused
    expect((await t.call('GET', domainsUrl, { token: admin })).body).toHaveLength(9)
  })
})

describe('service scripts', () => {
  let s: TestService
  let one: string
  let two: string
  beforeAll(async () => {
    s = await testService()
    await s.createDomain('one.master')
    await s.createDomain('two.master')
    one = await s.adminIn('one.master')
    two = await s.adminIn('two.master')
  })
  afterAll(() => s.close())
  const createScript = (token: string, code: string) =>
    s.call('POST', scriptsUrl, { token, body: { code, name: code, scriptdata: 'x' } })

  test('10 scripts under the evaluation licence, counted across every domain', async () => {
    for (let i = 0; i < 6; i++) expect((await createScript(one, `a${i}`)).status).toBe(200)
    for (let i = 0; i < 4; i++) expect((await createScript(two, `b${i}`)).status).toBe(200)
    expectLimit(await createScript(one, 'a6'), 'svcscripts', 10)
    expectLimit(await createScript(two, 'b4'), 'svcscripts', 10)
    expect((await s.call('GET', scriptsUrl, { token: two })).body).toHaveLength(4)
  })

  test('changing a script is not creating one; a bigger licence lets more in', async () => {
    const [first] = (await s.call('GET', scriptsUrl, { token: one })).body
    const patched = await s.call('PATCH', `${scriptsUrl}/${first.id}`, { token: one, body: { name: 'renamed' } })
    expect(patched.status).toBe(200)
    await s.licence({ svcscripts: 12 })
    expect((await createScript(one, 'a6')).status).toBe(200)
    expect((await createScript(two, 'b4')).status).toBe(200)
    expectLimit(await createScript(two, 'b5'), 'svcscripts', 12)
  })
})
