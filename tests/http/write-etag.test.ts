// Writes answer the new version's ETag: POST, PUT and PATCH of an object carry the tag a GET of it
// then gives, so an If-Match can follow at once, without a GET in between, and the tag of a version
// replaced since is refused (412). Over the collections with such writes (extobjs among them, whose
// `value` is stored apart and read back last), class records (POST, PUT, PATCH), callback orders and
// settings.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

let t: TestService
let master: string
let admin: string
let userId: string
beforeAll(async () => {
  t = await testService()
  master = await t.login('master', 'admin', ADMIN_PASSWORD)
  const domain = await t.createDomain('tags.master')
  admin = await t.adminIn('tags.master')
  userId = await t.createUser(domain.id, 'tagged', 'tagged-Pass1')
})
afterAll(() => t.close())

/** A write and its ETag, which must be the GET's of `url` right after. */
async function write(token: string, method: string, path: string, body: unknown, ifMatch?: string) {
  const res = await t.call(method, path, { token, body, headers: ifMatch ? { 'if-match': ifMatch } : {} })
  expect([res.status, res.text]).toEqual([200, expect.any(String)])
  const etag = res.headers.get('etag')
  expect(etag).toMatch(/^"[0-9a-z]+"$/)
  return { body: res.body, etag: etag! }
}
const getTag = async (token: string, url: string) => {
  const res = await t.request('GET', url, { token })
  expect(res.status).toBe(200)
  return res.headers.get('etag')
}

/** POST, then PATCH with the POST's tag, then PATCH with the tag that PATCH answered; the first tag is refused after. */
async function roundTrip(token: string, base: string, create: unknown, changes: unknown[]) {
  const made = await write(token, 'POST', base, create)
  const url = `${base}/${made.body.id}`
  expect(await getTag(token, url)).toBe(made.etag)
  let tag = made.etag
  for (const change of changes) {
    const changed = await write(token, 'PATCH', url, change, tag)
    expect(changed.etag).not.toBe(tag)
    expect(await getTag(token, url)).toBe(changed.etag)
    tag = changed.etag
  }
  const stale = await t.call('PATCH', url, { token, body: changes[0], headers: { 'if-match': made.etag } })
  expect([stale.status, stale.body.error_details?.field]).toEqual([412, 'If-Match'])
}

describe('collections: POST and PATCH answer the ETag GET then gives', () => {
  const cases: [string, string, () => string, unknown, unknown[]][] = [
    [
      'extobjs (value read back last)',
      '/rest/v1/reference/extobjs',
      () => admin,
      { value: { n: 1 }, type: 'tagged', opts: { title: 'x' } },
      [{ value: { n: 2 } }, { opts: { title: 'y' } }],
    ],
    ['projects', '/rest/v1/domain/projects', () => admin, { code: 'tp', name: 'P' }, [{ name: 'Q' }]],
    ['users', '/rest/v1/domain/users', () => admin, { login: 'etag-user', pwd: 'etag-Pass1' }, [{ name: 'N' }]],
    ['roles', '/rest/v1/domain/roles', () => admin, { name: 'etag_role' }, [{ name: 'etag_role_2' }]],
    ['groups (a view adds members)', '/rest/v1/domain/groups', () => admin, { code: 'tg' }, [{ name: 'G' }]],
    [
      'SIP accounts (a view)',
      '/rest/v1/uc/sipusers',
      () => admin,
      { login: 'etag.sip', pwd: 'Sip-pass1', phonenumber: '555' },
      [{ phonenumber: '556' }],
    ],
    [
      'service tasks',
      '/rest/v1/service/svctasks',
      () => admin,
      { name: 'T', svcscriptcode: 'cleardata' },
      [{ name: 'U' }],
    ],
    [
      'service scripts',
      '/rest/v1/service/svcscripts',
      () => admin,
      { code: 'etag_script', name: 'S', scriptdata: 'log("a")' },
      [{ scriptdata: 'log("b")' }],
    ],
    [
      'classes',
      '/rest/v1/design/classes',
      () => admin,
      { classname: 'etag/defined', properties: [{ name: 'a', data_type: 'string' }] },
      [{ opts: { title: 'Defined' } }],
    ],
    ['domains', '/rest/v1/domain/domains', () => master, { name: 'etag-made.master' }, [{ solution: 'changed' }]],
    ['border rules', '/rest/v1/master/borderrules', () => master, { action: 'deny', priority: 7 }, [{ priority: 8 }]],
  ]
  for (const [what, base, token, create, changes] of cases)
    test(what, async () => {
      await roundTrip(token(), base, create, changes)
    })
})

describe('class records: POST, PUT and PATCH answer the ETag GET then gives', () => {
  const base = '/rest/v1/model/etag/items'
  beforeAll(async () => {
    const res = await t.call('POST', '/rest/v1/design/classes', {
      token: admin,
      body: {
        classname: 'etag/items',
        properties: [
          { name: 'title', data_type: 'string', required: true },
          { name: 'qty', data_type: 'int', default: 1 },
          { name: 'meta', data_type: 'any' },
        ],
      },
    })
    expect(res.status).toBe(200)
  })

  test('each write is followed at once by an If-Match write with its tag', async () => {
    const made = await write(admin, 'POST', base, { title: 'a', meta: { z: 1, a: [1, 2] } })
    const url = `${base}/${made.body.id}`
    expect(await getTag(admin, url)).toBe(made.etag)
    const replaced = await write(admin, 'PUT', url, { title: 'b', meta: { y: 2 } }, made.etag)
    expect(await getTag(admin, url)).toBe(replaced.etag)
    const patched = await write(admin, 'PATCH', url, { qty: 5 }, replaced.etag)
    expect(await getTag(admin, url)).toBe(patched.etag)
    for (const old of [made.etag, replaced.etag]) {
      const stale = await t.call('PATCH', url, { token: admin, body: { qty: 6 }, headers: { 'if-match': old } })
      expect(stale.status).toBe(412)
    }
  })
})

test('a callback order: PATCH answers the ETag its GET then gives', async () => {
  const sip = await write(admin, 'POST', '/rest/v1/uc/sipusers', {
    login: 'cb.sip',
    phonenumber: '777',
    iduser: userId,
  })
  const dateTime = '2026-03-10T09:00:00.000Z'
  const order = await write(admin, 'POST', '/rest/v1/model/telephony/CallbackRequests', {
    boxPhoneNumber: '777',
    abonentPhoneNumber: '+7900',
    dateTime,
  })
  const user = await t.login('tags.master', 'tagged', 'tagged-Pass1')
  const url = `/rest/v1/user/sip/accounts/${sip.body.id}/callback_requests/2026-03-10/${order.body.id}`
  const tag = await getTag(user, url)
  const viewed = await write(user, 'PATCH', url, { status: 'viewed' }, tag!)
  expect(await getTag(user, url)).toBe(viewed.etag)
  expect((await write(user, 'PATCH', url, { status: 'done' }, viewed.etag)).body.status).toBe('done')
})

test('a setting: PATCH answers the ETag its GET then gives', async () => {
  const url = '/rest/v1/domain/settings/self_register_allowed'
  const changed = await write(admin, 'PATCH', url, { value: true })
  expect(await getTag(admin, url)).toBe(changed.etag)
})

test('a channel: its creation shows its secrets once and carries no ETag; a PATCH answers the tag its GET then gives, and If-Match takes either', async () => {
  const base = '/rest/v1/service/integration_points'
  const made = await t.call('POST', base, { token: admin, body: { code: 'etag-ch', type: 'subscr' } })
  expect(made.status).toBe(200)
  expect(made.headers.get('etag')).toBeNull()
  const url = `${base}/${made.body.id}`
  const first = await write(admin, 'PATCH', url, { opts: { title: 'T' } })
  const second = await write(admin, 'PATCH', url, { opts: { title: 'U' } }, first.etag)
  const stale = await t.call('PATCH', url, {
    token: admin,
    body: { opts: { title: 'V' } },
    headers: { 'if-match': first.etag },
  })
  expect(stale.status).toBe(412)
  const third = await write(admin, 'PATCH', url, { opts: { title: 'W' } }, second.etag)
  expect(third.body.opts.title).toBe('W')
  // the GET adds the domain's file figures, which are no part of the channel's version: same tag
  const read = await t.call('GET', url, { token: admin })
  expect(read.body.files_quota).toBeDefined()
  expect(read.headers.get('etag')).toBe(third.etag)
  // its text holds live figures: an If-None-Match with the tag gets the channel again, not a 304
  const again = await t.call('GET', url, { token: admin, headers: { 'if-none-match': third.etag } })
  expect([again.status, again.body.files_quota]).toEqual([200, read.body.files_quota])
  expect((await write(admin, 'PATCH', url, { opts: { title: 'X' } }, third.etag)).body.opts.title).toBe('X')
})
