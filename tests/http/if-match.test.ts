// If-Match under concurrency for what GET shapes with a view (groups, SIP accounts) and for model
// records: of writers sending the same ETag together exactly one wins, the others get a 412 naming
// If-Match. A check before the write's transaction let several through (groups, SIP accounts), and
// record writes did not check at all.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

const N = 20
let t: TestService
let token: string
let domainId: string
beforeAll(async () => {
  t = await testService()
  domainId = (await t.createDomain('ifm.master')).id
  token = await t.adminIn('ifm.master')
})
afterAll(() => t.close())

const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
  t.call(method, path, { token, body, headers })
const etagOf = async (url: string) => (await t.request('GET', url, { token })).headers.get('etag')!
const statuses = (rs: { status: number }[]) => rs.map((r) => r.status).sort()
const refusedForIfMatch = (rs: { status: number; body: any }[]) =>
  rs.filter((r) => r.status === 412).every((r) => r.body.error_details?.field === 'If-Match')

/** N PATCHes sent together, each with the tag: the statuses, sorted. */
async function samePatches(url: string, etag: string, body: (i: number) => unknown) {
  const rs = await Promise.all(Array.from({ length: N }, (_, i) => call('PATCH', url, body(i), { 'if-match': etag })))
  expect(refusedForIfMatch(rs)).toBe(true)
  return statuses(rs)
}
const oneWins = [200, ...Array(N - 1).fill(412)]

describe('entities with a view', () => {
  // concurrent changes of groups (long work) each wait DRAIN_MS (5 s) for the others: one batch for both
  test('groups: of PATCHes with the same ETag one applies, also when they change only the members', async () => {
    const [g, h] = await Promise.all(
      ['g-race', 'g-members'].map(async (code) => (await call('POST', '/rest/v1/domain/groups', { code })).body),
    )
    const [gUrl, hUrl] = [`/rest/v1/domain/groups/${g.id}`, `/rest/v1/domain/groups/${h.id}`]
    const ids: string[] = []
    for (const i of [0, 1, 2]) ids.push(await t.createUser(domainId, `m${i}`, 'member-Pass1'))
    const [gTag, hTag] = [await etagOf(gUrl), await etagOf(hUrl)]
    const [named, joined] = await Promise.all([
      samePatches(gUrl, gTag, (i) => ({ name: `n${i}` })),
      // the group's row stays as it was: only its view (members) changes
      Promise.all([0, 1].map((i) => call('PATCH', hUrl, { members: [ids[i]] }, { 'if-match': hTag }))),
    ])
    expect(named).toEqual(oneWins)
    expect(statuses(joined)).toEqual([200, 412])
    expect(refusedForIfMatch(joined)).toBe(true)
    // a user joining the group by its own groups changes the group's tag too
    const now = await etagOf(hUrl)
    expect((await call('PATCH', `/rest/v1/domain/users/${ids[2]}`, { groups: [h.id] })).status).toBe(200)
    expect((await call('PATCH', hUrl, { name: 'late' }, { 'if-match': now })).status).toBe(412)
  }, 30_000)

  test('a SIP account: of PATCHes with the same ETag one applies; the rest are 412 naming If-Match', async () => {
    const s = (await call('POST', '/rest/v1/uc/sipusers', { login: 'race', pwd: 'Sip-pass1', phonenumber: '100' })).body
    const url = `/rest/v1/uc/sipusers/${s.id}`
    expect(await samePatches(url, await etagOf(url), (i) => ({ phonenumber: `2${i}` }))).toEqual(oneWins)
  })

  test('a group: a DELETE whose tag a change of its members outdates before its transaction is a 412', async () => {
    const k = (await call('POST', '/rest/v1/domain/groups', { code: 'g-delete' })).body
    const url = `/rest/v1/domain/groups/${k.id}`
    const user = await t.createUser(domainId, 'joiner', 'joiner-Pass1')
    const etag = await etagOf(url)
    // the user's PATCH hashes a password before it writes; the DELETE (long work) waits for it to end
    const [joined, deleted] = await Promise.all([
      call('PATCH', `/rest/v1/domain/users/${user}`, { groups: [k.id], pwd: 'joiner-Pass2' }),
      call('DELETE', url, undefined, { 'if-match': etag }),
    ])
    expect(joined.status).toBe(200)
    expect(deleted.status).toBe(412)
    expect(deleted.body.error_details).toEqual({ field: 'If-Match' })
    expect((await call('GET', url)).body.members).toEqual([user])
  })
})

describe('model records', () => {
  let url: string
  beforeAll(async () => {
    const cls = await call('POST', '/rest/v1/design/classes', {
      classname: 'ifm/deals',
      properties: [
        { name: 'amount', data_type: 'long' },
        { name: 'title', data_type: 'string' },
      ],
    })
    expect(cls.status).toBe(200)
    const rec = await call('POST', '/rest/v1/model/ifm/deals', { amount: 1, title: 'a' })
    url = `/rest/v1/model/ifm/deals/${rec.body.id}`
  })

  test('PUT, PATCH and DELETE with a tag not the current one are 412 naming If-Match, and change nothing', async () => {
    const before = await call('GET', url)
    const bogus = { 'if-match': '"bogus"' }
    for (const r of [
      await call('PATCH', url, { amount: 2 }, bogus),
      await call('PUT', url, { amount: 3, title: 'b' }, bogus),
      await call('DELETE', url, undefined, bogus),
    ]) {
      expect(r.status).toBe(412)
      expect(r.body.error_details).toEqual({ field: 'If-Match' })
    }
    expect((await call('GET', url)).body).toEqual(before.body)
  })

  test('of PATCHes with the same ETag one applies; the current tag (or *) lets PUT and DELETE through', async () => {
    expect(await samePatches(url, await etagOf(url), (i) => ({ amount: 100 + i }))).toEqual(oneWins)
    const put = await call('PUT', url, { amount: 7, title: 'c' }, { 'if-match': `"other", ${await etagOf(url)}` })
    expect(put.status).toBe(200)
    expect((await call('PATCH', url, { amount: 8 }, { 'if-match': '*' })).status).toBe(200)
    expect((await call('DELETE', url, undefined, { 'if-match': await etagOf(url) })).status).toBe(204)
  })
})
