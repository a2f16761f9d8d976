// /rest/v1/service/webhooks: subscriptions of `subscr` channels, held in Redis with their lifetime.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { domainSubscriptions } from '~/integration/webhooks'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let acme: { id: string; name: string }
let admin: string
let subscr: { id: string; token: string }
let other: { id: string; token: string }
let pub: { id: string; token: string }
const base = '/rest/v1/service/webhooks'
const BODY = {
  events: ['callevents.*', 'customevents.greeted'],
  objects: [{ type: 'sipuser', sipuser: '101' }],
  expires: 60,
}

async function channel(type: string, code: string, by = admin, id?: string) {
  const r = await t.call('POST', '/rest/v1/service/integration_points', { token: by, body: { code, type, id } })
  expect(r.status).toBe(200)
  return { id: r.body.id as string, token: r.body.token_local as string }
}

beforeAll(async () => {
  t = await testService({ licence: { webservice_subscr: 10 } })
  acme = await t.createDomain('acme.master')
  admin = await t.adminIn('acme.master')
  subscr = await channel('subscr', 'crm')
  other = await channel('subscr', 'erp')
  pub = await channel('public', 'site')
})
afterAll(() => t.close())

const as = (who: { token: string }, method: string, path: string, body?: unknown) =>
  t.call(method, path, { token: who.token, body })

describe('who may subscribe', () => {
  test('a subscr channel token; a public channel or a session 403; no token 401', async () => {
    expect((await as(pub, 'POST', base, BODY)).status).toBe(403)
    const session = await t.call('POST', base, { token: admin, body: BODY })
    expect(session.status).toBe(403)
    expect(session.body.error_code).toBe(1403)
    const none = await t.call('POST', base, { body: BODY })
    expect(none.status).toBe(401)
    expect(none.body.error_code).toBe(1401)
  })

  test('working domains only: a channel of the master domain is refused', async () => {
    const master = await t.adminIn('master')
    const r = await t.call('POST', '/rest/v1/service/integration_points', {
      token: master,
      body: { code: 'm', type: 'subscr' },
    })
    expect(r.status).toBe(200)
    expect((await t.call('POST', base, { token: r.body.token_local, body: BODY })).status).toBe(403)
  })
})

describe('subscribe, read, renew, unsubscribe', () => {
  test('the spec round trip', async () => {
    const created = await as(subscr, 'POST', base, BODY)
    expect(created.status).toBe(200)
    expect(created.body).toEqual({ id: expect.any(String), msg: 'subscribed' })
    const { id } = created.body
    expect(await as(subscr, 'GET', `${base}/${id}`)).toMatchObject({
      status: 200,
      body: { objects: BODY.objects, events: BODY.events, url: '' },
    })
    const replaced = { events: ['confevents.conf_start'], objects: [], expires: 30, url: 'https://hooks.example.com/x' }
    expect((await as(subscr, 'PUT', `${base}/${id}`, replaced)).body).toEqual({ id, msg: 'subscribed' })
    expect((await as(subscr, 'GET', `${base}/${id}`)).body).toEqual({
      objects: [],
      events: replaced.events,
      url: replaced.url,
    })
    expect((await as(subscr, 'DELETE', `${base}/${id}`)).body).toEqual({ id, msg: 'unsubscribed' })
    // removed, the id is unknown: GET and a second DELETE are 404 (a lapsed one reads [])
    expect(await as(subscr, 'GET', `${base}/${id}`)).toMatchObject({ status: 404, body: { error_code: 1404 } })
    expect(await as(subscr, 'DELETE', `${base}/${id}`)).toMatchObject({ status: 404, body: { error_code: 1404 } })
  })

  test('an unknown id, or another channel\'s, is 404 1404 "token not found"', async () => {
    const { id } = (await as(subscr, 'POST', base, BODY)).body
    for (const [who, path] of [
      [subscr, `${base}/${crypto.randomUUID()}`],
      [subscr, `${base}/not-an-id`],
      [other, `${base}/${id}`],
    ] as const) {
      const r = await as(who, 'GET', path)
      expect(r.status).toBe(404)
      expect(r.body).toEqual({ error_code: 1404, error_message: 'token not found' })
      expect((await as(who, 'PUT', path, BODY)).status).toBe(404)
      expect((await as(who, 'DELETE', path)).status).toBe(404)
    }
  })

  test('validation: events masks, objects, expires 1..86400, url; each 400 names its field', async () => {
    const bad: [unknown, string][] = [
      [{ ...BODY, events: [] }, 'events'],
      [{ ...BODY, events: ['callevents'] }, 'events'],
      [{ ...BODY, events: ['modelevents.*'] }, 'events'],
      [{ ...BODY, objects: [{ type: 'sip user', value: '1' }] }, 'objects'],
      [{ ...BODY, objects: 'x' }, 'objects'],
      [{ ...BODY, expires: 0 }, 'expires'],
      [{ ...BODY, expires: 86401 }, 'expires'],
      [{ ...BODY, expires: 1.5 }, 'expires'],
      [{ events: BODY.events }, 'expires'],
      [{ ...BODY, url: 'ftp://x' }, 'url'],
      [{ ...BODY, color: 'red' }, 'color'],
    ]
    for (const [body, field] of bad) {
      const r = await as(subscr, 'POST', base, body)
      expect([r.status, r.body.error_details?.field]).toEqual([400, field])
    }
    expect((await as(subscr, 'POST', base, { ...BODY, expires: 86400 })).status).toBe(200)
  })
})

describe('expiry', () => {
  test('on the service clock: GET answers [] after expires without renewal; PUT brings it back', async () => {
    const { id } = (await as(subscr, 'POST', base, { ...BODY, expires: 10 })).body
    t.clock.advance(9_000)
    expect((await as(subscr, 'GET', `${base}/${id}`)).body).toMatchObject({ events: BODY.events })
    t.clock.advance(1_000)
    expect(await as(subscr, 'GET', `${base}/${id}`)).toMatchObject({ status: 200, body: [] })
    expect((await as(subscr, 'PUT', `${base}/${id}`, BODY)).body).toEqual({ id, msg: 'subscribed' })
    expect((await as(subscr, 'GET', `${base}/${id}`)).body).toMatchObject({ events: BODY.events })
  })

  test('in Redis: the record lapses with its TTL in real time, so every process sees it gone', async () => {
    const { id } = (await as(subscr, 'POST', base, { ...BODY, expires: 1 })).body
    const key = `webhook:sub:${acme.id}:${id}`
    expect(await t.deps.kv.ttl(key)).toBeGreaterThan(0)
    const deadline = Date.now() + 3000
    while ((await t.deps.kv.get(key)) !== null && Date.now() < deadline) await Bun.sleep(100)
    expect(await as(subscr, 'GET', `${base}/${id}`)).toMatchObject({ status: 200, body: [] })
  })
})

describe('tenant walls', () => {
  // channel ids are unique within a domain only, and a client may choose one
  test("a channel of another domain with the same id reaches none of this domain's subscriptions", async () => {
    const { id } = (await as(subscr, 'POST', base, BODY)).body
    await t.createDomain('rival.master')
    const twin = await channel('subscr', 'twin', await t.adminIn('rival.master'), subscr.id)
    expect(twin.id).toBe(subscr.id)
    const path = `${base}/${id}`
    expect((await as(twin, 'GET', path)).status).toBe(404)
    expect((await as(twin, 'PUT', path, { ...BODY, url: 'https://rival.example/x' })).status).toBe(404)
    expect((await as(twin, 'DELETE', path)).status).toBe(404)
    expect((await as(subscr, 'GET', path)).body).toEqual({ objects: BODY.objects, events: BODY.events, url: '' })
  })

  test('a record kept before the keys named their domain: its channel keeps it, a same-id channel elsewhere does not', async () => {
    const id = crypto.randomUUID()
    const sub = { id, domain: acme.id, channel: subscr.id, ...BODY, url: '', until: t.clock.now() + 60_000 }
    await t.deps.kv.set(`webhook:sub:${id}`, JSON.stringify(sub), 60_000)
    await t.deps.kv.sadd(`webhook:subs:${acme.id}`, id)
    expect((await domainSubscriptions(t.deps, acme.id)).map((s) => s.id)).toContain(id)
    // the same id in another domain's index is not believed: the record names acme
    const rival = await t.createDomain('rival2.master')
    await t.deps.kv.sadd(`webhook:subs:${rival.id}`, id)
    expect((await domainSubscriptions(t.deps, rival.id)).map((s) => s.id)).not.toContain(id)
    const twin = await channel('subscr', 'twin2', await t.adminIn('rival2.master'), subscr.id)
    expect((await as(twin, 'GET', `${base}/${id}`)).status).toBe(404)
    expect((await as(subscr, 'GET', `${base}/${id}`)).body).toMatchObject({ events: BODY.events })
    // renewed, it is kept under the new key only
    expect((await as(subscr, 'PUT', `${base}/${id}`, { ...BODY, expires: 30 })).status).toBe(200)
    expect(await t.deps.kv.get(`webhook:sub:${id}`)).toBeNull()
    expect(await t.deps.kv.get(`webhook:sub:${acme.id}:${id}`)).not.toBeNull()
    // removed, it is unknown as any other removed id: 404
    const gone = crypto.randomUUID()
    await t.deps.kv.set(`webhook:sub:${gone}`, JSON.stringify({ ...sub, id: gone }), 60_000)
    expect((await as(subscr, 'DELETE', `${base}/${gone}`)).body).toEqual({ id: gone, msg: 'unsubscribed' })
    expect((await as(subscr, 'GET', `${base}/${gone}`)).status).toBe(404)
  })
})
