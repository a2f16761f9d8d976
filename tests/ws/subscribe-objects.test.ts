// /ws subscribe `objects`: a collection named as the original names it (its name, its REST path, its
// singular class) delivers; a name no collection has is a 400 naming it; a subscriber that may never
// read the collection is a 403 naming it (issue 38, items 1 and 2). Over a real socket.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'
import { openWs, type WsClient } from '../helpers/ws'

let t: TestService
let token: string
let domain: { id: string; name: string }
let wsUrl: string
let n = 0
beforeAll(async () => {
  t = await testService({ listen: true })
  domain = await t.createDomain('objs.master')
  token = await t.adminIn('objs.master')
  wsUrl = `${t.service.url!.replace('http', 'ws')}/ws`
  const made = await http('POST', '/rest/v1/design/classes', {
    classname: 'crm/deals',
    properties: [{ name: 'title', data_type: 'string' }],
  })
  expect(made.status).toBe(200)
})
afterAll(() => t.close())

const http = (method: string, path: string, body?: unknown, as = token) => t.call(method, path, { token: as, body })
type Frame = [string, Record<string, unknown>]
const isEvent = (f: Frame) => f[0] === 'event'
const CHANGES = ['modelevents.data_changed']

async function subscribe(c: WsClient, payload: Record<string, unknown>) {
  c.send(['subscribe', payload])
  return (await c.next((f) => f[0] === 'subscribe' && f[1].id === payload.id))[1]
}

/** Makes one record of the collection; answers its id. */
const MAKE: Record<string, () => Promise<string>> = {
  users: async () => {
    n += 1
    const r = await http('POST', '/rest/v1/domain/users', { login: `u${n}`, name: `U ${n}`, pwd: 'Passw0rd-x' })
    return r.body.id
  },
  extobjs: async () => (await http('POST', '/rest/v1/reference/extobjs', { type: 'o', value: { n: 1 } })).body.id,
  deals: async () => (await http('POST', '/rest/v1/model/crm/deals', { title: 'd' })).body.id,
}

describe('item 1: objects name collections as the original does, and deliver', () => {
  const accepted: [string, unknown, keyof typeof MAKE, string?][] = [
    ['the original name', ['users'], 'users'],
    ['the REST path', ['/rest/v1/domain/users'], 'users'],
    ['the REST path under /rest/v1', ['domain/users'], 'users'],
    ['the singular class', ['user'], 'users'],
    ['extobjs', ['extobjs'], 'extobjs'],
    ['reference/extobjs', ['reference/extobjs'], 'extobjs'],
    ['the classpath itself', ['/rest/v1/reference/extobjs'], 'extobjs'],
    ['a model class by its name', ['deals'], 'deals'],
    ['a model class by its classname', ['crm/deals'], 'deals'],
    ['a model class by its REST path', ['/rest/v1/model/crm/deals'], 'deals'],
    ['classpath and objects naming the same collection', ['users'], 'users', '/rest/v1/domain/users'],
  ]
  for (const [name, objects, make, classpath] of accepted)
    test(`${name}: ${JSON.stringify(objects)}${classpath ? ` with classpath ${classpath}` : ''}`, async () => {
      const c = await openWs(`${wsUrl}?token=${token}`)
      const id = `s${++n}`
      const terms = { id, expires: 60, events: CHANGES, objects, ...(classpath ? { classpath } : {}) }
      expect(await subscribe(c, terms)).toEqual({ id, expires: 60 })
      const other = make === 'extobjs' ? 'users' : 'extobjs'
      await MAKE[other]!() // not named: not sent
      const made = await MAKE[make]!()
      await t.run('journal-pump')
      const [, event] = await c.next(isEvent)
      expect(event).toMatchObject({ subscription: id, data: { id: made, operation: 1 } })
      expect(c.pending(isEvent)).toEqual([])
      c.close()
    })

  test("the original's own example, as written", async () => {
    const c = await openWs(`${wsUrl}?token=${token}`)
    const example = JSON.parse(
      '{"events":["modelevents.data_changed"], "objects":["users"], "exargs":{"mask":"id,name", "filter":"{\\"name\\":\\"Orig\\"}"}}',
    )
    expect(await subscribe(c, { id: 'example', expires: 60, ...example })).toEqual({ id: 'example', expires: 60 })
    await http('POST', '/rest/v1/domain/users', { login: 'skip', name: 'Other', pwd: 'Passw0rd-x' })
    const made = (await http('POST', '/rest/v1/domain/users', { login: 'orig', name: 'Orig', pwd: 'Passw0rd-x' })).body
    await t.run('journal-pump')
    const [, event] = await c.next(isEvent)
    expect(event).toMatchObject({ subscription: 'example', class: 'modelevents', event: 'data_changed' })
    expect((event.data as { new: unknown }).new).toEqual({ id: made.id, name: 'Orig' })
    expect(c.pending(isEvent)).toEqual([])
    c.close()
  })

  const refused: [string, Record<string, unknown>, string, number?][] = [
    ['a name no collection has', { objects: ['nothing'] }, 'objects', 0],
    ['the plural written wrong', { objects: ['users', 'extobject'] }, 'objects', 1],
    ['a master-only collection in a working domain', { objects: ['domains'] }, 'objects', 0],
    ['a REST path of no collection', { objects: ['/rest/v1/domain/nothing'] }, 'objects', 0],
    [
      'classpath with objects naming another collection',
      { objects: ['users'], classpath: '/rest/v1/reference/extobjs' },
      'objects',
    ],
  ]
  for (const [name, terms, field, index] of refused)
    test(`refused with 400: ${name}`, async () => {
      const c = await openWs(`${wsUrl}?token=${token}`)
      const answer = await subscribe(c, { id: 'bad', expires: 60, events: CHANGES, ...terms })
      expect(answer.error).toMatchObject({
        error_code: 1400,
        error_details: { field, ...(index === undefined ? {} : { index }) },
      })
      // nothing was kept: the same id answers a fresh subscribe
      expect(await subscribe(c, { id: 'bad', expires: 0 })).toEqual({ id: 'bad', expires: 0 })
      c.close()
    })
})

describe('item 2: no silent subscriptions', () => {
  test('a user without read permission: 403 naming the collection, for objects and for classpath', async () => {
    await t.createUser(domain.id, 'plain', 'plain-Pass1', ['user'])
    const c = await openWs(`${wsUrl}?token=${await t.login('objs.master', 'plain', 'plain-Pass1')}`)
    const cases: [Record<string, unknown>, string, string][] = [
      [{ objects: ['users'] }, 'objects', '/rest/v1/domain/users'],
      [{ objects: ['crm/deals'] }, 'objects', '/rest/v1/model/crm/deals'],
      [{ classpath: '/rest/v1/reference/extobjs' }, 'classpath', '/rest/v1/reference/extobjs'],
    ]
    for (const [terms, field, collection] of cases) {
      const answer = await subscribe(c, { id: 'no', expires: 60, events: CHANGES, ...terms })
      expect(answer.error).toMatchObject({ error_code: 1403, error_details: { field, collection } })
      expect((answer.error as { error_message: string }).error_message).toContain(collection)
    }
    c.close()
  })

  test('a role granting GET on the collection admits it', async () => {
    const role = await http('POST', '/rest/v1/domain/roles', {
      name: 'reader',
      routes: [{ path: '/rest/v1/reference/extobjs/**', methods: ['GET'] }],
    })
    expect(role.status).toBe(200)
    await t.createUser(domain.id, 'reader', 'reader-Pass1', ['reader'])
    const c = await openWs(`${wsUrl}?token=${await t.login('objs.master', 'reader', 'reader-Pass1')}`)
    expect(await subscribe(c, { id: 'ok', expires: 60, events: CHANGES, objects: ['extobjs'] })).toEqual({
      id: 'ok',
      expires: 60,
    })
    const made = await MAKE.extobjs!()
    await t.run('journal-pump')
    expect((await c.next(isEvent))[1]).toMatchObject({ subscription: 'ok', data: { id: made } })
    c.close()
  })

  test('a role granting GET on one record only admits the collection: that record may change', async () => {
    const made = await MAKE.extobjs!()
    const role = await http('POST', '/rest/v1/domain/roles', {
      name: 'one_record',
      routes: [{ path: `/rest/v1/reference/extobjs/${made}`, methods: ['GET'] }],
    })
    expect(role.status).toBe(200)
    await t.createUser(domain.id, 'onerec', 'onerec-Pass1', ['one_record'])
    const c = await openWs(`${wsUrl}?token=${await t.login('objs.master', 'onerec', 'onerec-Pass1')}`)
    expect(await subscribe(c, { id: 'one', expires: 60, events: CHANGES, objects: ['extobjs'] })).toEqual({
      id: 'one',
      expires: 60,
    })
    // a grant on another collection's record does not open this one
    const other = await subscribe(c, { id: 'users', expires: 60, events: CHANGES, objects: ['users'] })
    expect(other.error).toMatchObject({ error_code: 1403, error_details: { field: 'objects' } })
    c.close()
  })

  test('a channel without roles: 403 for a collection, and for data changes of every collection', async () => {
    const ch = await http('POST', '/rest/v1/service/integration_points', { code: 'noroles', type: 'public' })
    expect(ch.status).toBe(200)
    const c = await openWs(`${wsUrl}?token=${ch.body.token_local}`)
    const named = await subscribe(c, { id: 'a', expires: 60, events: CHANGES, objects: ['extobjs'] })
    expect(named.error).toMatchObject({
      error_code: 1403,
      error_details: { field: 'objects', collection: '/rest/v1/reference/extobjs' },
    })
    const all = await subscribe(c, { id: 'b', expires: 60, events: CHANGES })
    expect(all.error).toMatchObject({ error_code: 1403, error_details: { field: 'events' } })
    c.close()
  })
})
