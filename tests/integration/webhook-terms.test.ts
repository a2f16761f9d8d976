// Webhook subscriptions' terms over a real socket (issue 38): objects name collections as the
// original does and deliver (item 1); no silent subscriptions: unknown names and event classes are
// a 400, a channel that may never read what it names a 403 (item 2); DELETE makes the id unknown,
// the channel's url is read back, objects come back as sent, the delivery log takes list
// parameters (item 6).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { jobsOf } from '~storage/queue'
import { MAX_PER_CHANNEL } from '~/integration/webhooks'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let admin: string
let reader: { id: string; token: string }
let bare: { id: string; token: string }
const base = '/rest/v1/service/webhooks'
const CHANNEL_URL = 'https://hooks.example.com/in'
const CHANGES = ['modelevents.data_changed']

/** A request over the listening socket; answers status and JSON body. */
async function wire(method: string, path: string, token: string, body?: unknown) {
  const res = await fetch(`${t.service.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

async function channel(code: string, roles?: string[]) {
  const body = { code, type: 'subscr', url: CHANNEL_URL, ...(roles ? { opts: { roles } } : {}) }
  const r = await wire('POST', '/rest/v1/service/integration_points', admin, body)
  expect(r.status).toBe(200)
  return { id: r.body.id as string, token: r.body.token_local as string }
}

beforeAll(async () => {
  t = await testService({ listen: true, licence: { webservice_subscr: 13 } })
  await t.createDomain('hooks.master')
  admin = await t.adminIn('hooks.master')
  reader = await channel('reader', ['admin'])
  bare = await channel('bare')
})
afterAll(() => t.close())

const post = (who: { token: string }, body: Record<string, unknown>) =>
  wire('POST', base, who.token, { expires: 600, ...body })
const jobsFor = async (ch: { id: string }) =>
  (await jobsOf(t.deps.db, 'webhook', { payload: { channel: ch.id } })).map((j) => j.payload)

describe('item 1: objects name collections and deliver', () => {
  const forms: [unknown[], string][] = [
    [['users'], '/rest/v1/domain/users'],
    [['/rest/v1/domain/users'], '/rest/v1/domain/users'],
    [['user'], '/rest/v1/domain/users'],
    [['extobjs'], '/rest/v1/reference/extobjs'],
    [['reference/extobjs'], '/rest/v1/reference/extobjs'],
    [[{ type: 'class', class: 'extobjs' }], '/rest/v1/reference/extobjs'],
  ]
  let n = 0
  for (const [objects, collection] of forms)
    test(`${JSON.stringify(objects)} delivers changes of ${collection}, and reads back as sent`, async () => {
      const ch = await channel(`c${++n}`, ['admin'])
      const made = await post(ch, { events: CHANGES, objects })
      expect(made.status).toBe(200)
      expect((await wire('GET', `${base}/${made.body.id}`, ch.token)).body).toEqual({
        objects,
        events: CHANGES,
        url: CHANNEL_URL,
      })
      const other = collection.endsWith('users') ? '/rest/v1/reference/extobjs' : '/rest/v1/domain/users'
      const body = (path: string) =>
        path.endsWith('users') ? { login: `w${n}`, name: 'W', pwd: 'Passw0rd-x' } : { type: 'w' }
      await wire('POST', other, admin, body(other)) // not named: no delivery
      const created = await wire('POST', collection, admin, body(collection))
      expect(created.status).toBe(200)
      await t.run('webhook-enqueue')
      const jobs = await jobsFor(ch)
      expect(jobs).toHaveLength(1)
      expect(jobs[0]).toMatchObject({ event: 'modelevents.data_changed', envelope: { data: { id: created.body.id } } })
    })

  test('an objects item naming no collection of the domain is a 400 naming it', async () => {
    for (const objects of [['nothing'], [{ type: 'sipuser', sipuser: '1' }, 'userz'], ['domains']]) {
      const r = await post(reader, { events: CHANGES, objects })
      expect(r.status).toBe(400)
      expect(r.body.error_details).toMatchObject({ field: 'objects', index: objects.length - 1 })
    }
  })
})

describe('item 2: no silent subscriptions', () => {
  test('a channel without roles: 403 naming the collection, or events for every collection', async () => {
    const named = await post(bare, { events: CHANGES, objects: ['users'] })
    expect(named.status).toBe(403)
    expect(named.body.error_details).toEqual({ field: 'objects', collection: '/rest/v1/domain/users' })
    expect(named.body.error_message).toContain('/rest/v1/domain/users')
    const all = await post(bare, { events: CHANGES })
    expect(all.status).toBe(403)
    expect(all.body.error_details).toEqual({ field: 'events' })
    // events that are no data change need no read permission
    expect((await post(bare, { events: ['callevents.*', 'customevents.greeted'] })).status).toBe(200)
  })

  test('read permission is checked again at delivery: a channel whose role was taken away gets no change', async () => {
    const ch = await channel('revoked', ['admin'])
    expect((await post(ch, { events: CHANGES, objects: ['extobjs'] })).status).toBe(200)
    await wire('POST', '/rest/v1/reference/extobjs', admin, { type: 'before' })
    await t.run('webhook-enqueue')
    expect(await jobsFor(ch)).toHaveLength(1)
    const patched = await wire('PATCH', `/rest/v1/service/integration_points/${ch.id}`, admin, { opts: { roles: [] } })
    expect(patched.status).toBe(200)
    await wire('POST', '/rest/v1/reference/extobjs', admin, { type: 'after' })
    await t.run('webhook-enqueue')
    expect(await jobsFor(ch)).toHaveLength(1)
  })

  const classes: [string, number][] = [
    ['whatever.thing', 400],
    ['whatever.*', 400],
    ['modelevents.other', 400],
    ['callevents.call_start', 200],
    ['confevents.*', 200],
    ['providerevents.*', 200],
    ['statesevents.sipuser_state_changed', 200],
    ['registrarevents.*', 200],
    ['ccsevents.call_create', 200],
    ['ivrevents.*', 200],
    ['customevents.anything', 200],
    ['modelevents.data_changed', 200],
  ]
  for (const [mask, status] of classes)
    test(`events ["callevents.*", "${mask}"]: ${status}`, async () => {
      const r = await post(reader, { events: ['callevents.*', mask] })
      expect(r.status).toBe(status)
      if (status === 400) expect(r.body.error_details).toEqual({ field: 'events', index: 1 })
    })
})

describe('item 6: the webhook points', () => {
  test('DELETE then GET is a 404, and a second DELETE a 404', async () => {
    const { id } = (await post(reader, { events: ['callevents.*'] })).body
    expect((await wire('DELETE', `${base}/${id}`, reader.token)).body).toEqual({ id, msg: 'unsubscribed' })
    for (const method of ['GET', 'DELETE']) {
      const r = await wire(method, `${base}/${id}`, reader.token)
      expect(r).toEqual({ status: 404, body: { error_code: 1404, error_message: 'token not found' } })
    }
  })

  test("without url it reads back the channel's url; with one, its own", async () => {
    const plain = (await post(reader, { events: ['callevents.*'] })).body.id
    expect((await wire('GET', `${base}/${plain}`, reader.token)).body.url).toBe(CHANNEL_URL)
    const own = (await post(reader, { events: ['callevents.*'], url: 'https://other.example.com/x' })).body.id
    expect((await wire('GET', `${base}/${own}`, reader.token)).body.url).toBe('https://other.example.com/x')
  })

  test('objects come back in the form they were sent', async () => {
    const objects = [
      { type: 'sipuser', sipuser: '101' },
      { type: 'sipuser', value: '102' },
      { type: 'conf', conf: '7', note: 'kept' },
      'users',
      '/rest/v1/reference/extobjs',
    ]
    const { id } = (await post(reader, { events: ['callevents.*', ...CHANGES], objects })).body
    expect((await wire('GET', `${base}/${id}`, reader.token)).body.objects).toEqual(objects)
  })

  test('the delivery log takes limit, offset and mask; another parameter is a 400 naming it', async () => {
    const ch = await channel('logged', ['admin'])
    await post(ch, { events: CHANGES, objects: ['extobjs'] })
    for (const type of ['a', 'b', 'c']) await wire('POST', '/rest/v1/reference/extobjs', admin, { type })
    await t.run('webhook-enqueue')
    const log = `/rest/v1/service/integration_points/${ch.id}/deliveries`
    const all = (await wire('GET', log, admin)).body as { id: string }[]
    expect(all).toHaveLength(3)
    const page = await wire('GET', `${log}?limit=1&offset=1&mask=id,status`, admin)
    expect(page).toEqual({ status: 200, body: [{ id: all[1]!.id, status: 'pending' }] })
    const cases: [string, string][] = [
      ['unknown=1', 'unknown'],
      ['limit=x', 'limit'],
      ['offset=-1', 'offset'],
      ['mask=nope', 'mask'],
      ['filter={}', 'filter'],
    ]
    for (const [query, field] of cases) {
      const r = await wire('GET', `${log}?${query}`, admin)
      expect(r.status).toBe(400)
      expect(r.body.error_details).toMatchObject({ field })
    }
  })
})

describe('a channel holds at most MAX_PER_CHANNEL live subscriptions', () => {
  test('the next is a 409; a lapsed id renewed counts as a new one, a live one renewed takes no room', async () => {
    const mine = await channel('capped', ['admin'])
    const ids = async (n: number, expires: number) => {
      const made: string[] = []
      for (let i = 0; i < n; i++) made.push((await post(mine, { events: CHANGES, expires })).body.id)
      return made
    }
    const lapsing = await ids(MAX_PER_CHANNEL, 60)
    const over = await post(mine, { events: CHANGES })
    expect([over.status, over.body.error_message]).toEqual([
      409,
      `a channel holds at most ${MAX_PER_CHANNEL} subscriptions`,
    ])
    t.clock.advance(61_000) // all lapsed
    const live = await ids(MAX_PER_CHANNEL, 600)
    const put = (id: string) => wire('PUT', `${base}/${id}`, mine.token, { events: CHANGES, expires: 600 })
    const refused = await put(lapsing[0]!)
    expect(refused.status).toBe(409) // it would be the 101st
    expect((await put(live[0]!)).status).toBe(200) // a live one renewed
    await wire('DELETE', `${base}/${live[1]}`, mine.token)
    expect((await put(lapsing[0]!)).status).toBe(200) // room again
    expect((await wire('GET', base, mine.token)).body).toHaveLength(MAX_PER_CHANNEL)
  }, 30_000)
})

describe('beyond the spec: GET of the collection lists the calling channel its subscriptions', () => {
  test("its own live ones only, soonest to lapse first, with the terms read back and when each lapses; another caller's 403", async () => {
    const mine = await channel('lister', ['admin'])
    const other = await channel('other-lister', ['admin'])
    expect(await wire('GET', base, mine.token)).toEqual({ status: 200, body: [] })
    const later = (await post(mine, { events: ['callevents.*'], expires: 900, url: 'https://b.example.com/x' })).body
    const sooner = (await post(mine, { events: CHANGES, objects: ['users'], expires: 300 })).body
    await post(other, { events: ['callevents.*'] })
    const now = t.clock.now()
    const listed = await wire('GET', base, mine.token)
    expect(listed).toEqual({
      status: 200,
      body: [
        {
          id: sooner.id,
          events: CHANGES,
          objects: ['users'],
          url: CHANNEL_URL,
          until: new Date(now + 300_000).toISOString(),
        },
        {
          id: later.id,
          events: ['callevents.*'],
          objects: [],
          url: 'https://b.example.com/x',
          until: new Date(now + 900_000).toISOString(),
        },
      ],
    })
    await wire('DELETE', `${base}/${sooner.id}`, mine.token)
    expect((await wire('GET', base, mine.token)).body.map((s: { id: string }) => s.id)).toEqual([later.id])
    expect((await wire('GET', base, admin)).status).toBe(403)
  })
})
