// Event ingest: POST /rest/v1/service/events and the Redis stream read by the event-ingest worker,
// both onto the bus (testService's kv is a real Redis under a test prefix).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { PlatformEvent } from '~/events/event'
import { INGEST_STREAM, MAX_INGEST_DATA_BYTES, MAX_INGEST_EVENTS } from '~/events/ingest'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

const PATH = '/rest/v1/service/events'
const PWD = 'boss-Pass_1'
let t: TestService
let acme: { id: string; name: string }
let other: { id: string; name: string }
let adminToken: string
let userToken: string
let masterToken: string
const seen: PlatformEvent[] = []
/** The messages published on the bus's channel since the test began counting. */
const messages: string[] = []

beforeAll(async () => {
  t = await testService()
  acme = await t.createDomain('acme.master')
  other = await t.createDomain('other.master')
  await t.createUser(acme.id, 'boss', PWD, ['admin'])
  await t.createUser(acme.id, 'ann', PWD, ['user'])
  adminToken = await t.login(acme.name, 'boss', PWD)
  userToken = await t.login(acme.name, 'ann', PWD)
  masterToken = await t.login(t.config.masterDomain, 'admin', ADMIN_PASSWORD)
  t.deps.bus.on((e) => e.class !== 'modelevents' && seen.push(e))
  const publish = t.deps.kv.publish.bind(t.deps.kv)
  t.deps.kv.publish = (channel, message) => {
    if (channel.endsWith('events')) messages.push(message)
    return publish(channel, message)
  }
})
afterAll(() => t.close())

/** The bus events with these ids, once all have arrived (pub/sub is asynchronous). */
async function arrived(ids: string[]): Promise<PlatformEvent[]> {
  const found = () => ids.map((id) => seen.find((e) => e.id === id))
  for (let i = 0; i < 400 && found().some((e) => !e); i++) await Bun.sleep(5)
  const events = found()
  if (events.some((e) => !e)) throw new Error(`events ${ids.join(', ')} did not all arrive`)
  return events as PlatformEvent[]
}

const post = (body: unknown, token = adminToken) => t.call('POST', PATH, { token, body })

describe('HTTP ingest', () => {
  test('a domain administrator publishes one event for its domain; it reaches the bus with an id and the service time', async () => {
    const res = await post({
      class: 'callevents',
      event: 'call_started',
      objects: [{ type: 'sipuser', sipuser: '101' }],
      data: { from: '101', to: '102' },
    })
    expect(res.status).toBe(200)
    expect(res.body.accepted).toBe(1)
    expect(res.body.ids).toHaveLength(1)
    const [event] = await arrived(res.body.ids)
    expect(event).toEqual({
      id: res.body.ids[0],
      class: 'callevents',
      event: 'call_started',
      domain: acme.id,
      time: new Date(t.clock.now()).toISOString(),
      objects: [{ type: 'sipuser', value: '101' }],
      data: { from: '101', to: '102' },
      queued: true, // its webhook deliveries were queued before the answer
    })
    expect(event!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/) // UUID v7
  })

  test('an array; a given time (RFC 3339, any offset) is kept in UTC; the own domain may be named', async () => {
    const res = await post([
      {
        class: 'statesevents',
        event: 'sipuser_state_changed',
        time: '2024-02-29T12:30:00.25+02:00',
        domain: acme.name,
      },
      { class: 'statesevents', event: 'sipuser_state_changed', time: '2024-03-01 00:00:00z' },
    ])
    expect(res.status).toBe(200)
    expect(res.body.accepted).toBe(2)
    // one message for the request (with Redis, a round trip an event cost 15-20 ms for 100 events)
    expect(messages.filter((m) => res.body.ids.some((id: string) => m.includes(id)))).toHaveLength(1)
    const events = await arrived(res.body.ids)
    expect(events.map((e) => [e.domain, e.time, e.objects, e.data])).toEqual([
      [acme.id, '2024-02-29T10:30:00.250Z', [], {}],
      [acme.id, '2024-03-01T00:00:00.000Z', [], {}],
    ])
  })

  test('a master administrator publishes for a working domain named by each event', async () => {
    const res = await post(
      [
        { class: 'callevents', event: 'call_ended', domain: acme.name },
        { class: 'callevents', event: 'call_ended', domain: other.name },
      ],
      masterToken,
    )
    expect(res.status).toBe(200)
    expect((await arrived(res.body.ids)).map((e) => e.domain)).toEqual([acme.id, other.id])
    const missing = await post([{ class: 'callevents', event: 'x', domain: 'nope.master' }], masterToken)
    expect([missing.status, missing.body.error_details?.field]).toEqual([404, 'events[0].domain'])
    expect(missing.body.error_message).toContain('nope.master')
    const unnamed = await post({ class: 'callevents', event: 'x' }, masterToken)
    expect([unnamed.status, unnamed.body.error_details?.field]).toEqual([400, 'events[0].domain'])
    const master = await post({ class: 'callevents', event: 'x', domain: t.config.masterDomain }, masterToken)
    expect([master.status, master.body.error_details?.field]).toEqual([400, 'events[0].domain'])
  })

  test('who may publish: no session 401, a plain user 403, another domain 403, and nothing is published', async () => {
    const before = seen.length
    expect((await t.call('POST', PATH, { body: { class: 'callevents', event: 'x' } })).status).toBe(401)
    expect((await post({ class: 'callevents', event: 'x' }, userToken)).status).toBe(403)
    const foreign = await post([
      { class: 'callevents', event: 'x' },
      { class: 'callevents', event: 'x', domain: other.name },
    ])
    expect(foreign.status).toBe(403)
    expect(foreign.body.error_message).toContain('events[1].domain')
    await Bun.sleep(50)
    expect(seen.length).toBe(before)
  })

  test('each refused member is a 400 naming it with the index', async () => {
    const ok = { class: 'callevents', event: 'call_started' }
    const cases: [unknown, string][] = [
      [{ ...ok, class: 'modelevents', event: 'data_changed' }, 'class'],
      [{ ...ok, class: 'call-events' }, 'class'],
      [{ ...ok, class: undefined }, 'class'],
      [{ ...ok, event: '1st' }, 'event'],
      [{ ...ok, event: 'x'.repeat(65) }, 'event'],
      [{ ...ok, objects: [{ type: 'sip user', value: '1' }] }, 'objects'],
      [{ ...ok, objects: { type: 'sipuser' } }, 'objects'],
      [{ ...ok, data: [1, 2] }, 'data'],
      [{ ...ok, data: 'text' }, 'data'],
      [{ ...ok, data: { big: 'x'.repeat(MAX_INGEST_DATA_BYTES) } }, 'data'],
      // webhook jobs keep data in the queue, whose delivery log reads it with SQLite's JSON functions
      [{ ...ok, data: { deep: JSON.parse(`${'['.repeat(1001)}${']'.repeat(1001)}`) } }, 'data'],
      [{ ...ok, data: { lone: '\ud800' } }, 'data'],
      [{ ...ok, time: '2024-02-30T00:00:00Z' }, 'time'],
      [{ ...ok, time: '2024-01-01T00:00:00' }, 'time'],
      [{ ...ok, time: 1700000000 }, 'time'],
      [{ ...ok, domain: 7 }, 'domain'],
      [{ ...ok, id: 'mine' }, 'id'],
    ]
    for (const [bad, member] of cases) {
      const res = await post([ok, ok, bad])
      expect([member, res.status, res.body.error_details?.field]).toEqual([member, 400, `events[2].${member}`])
    }
    const modelevents = await post({ class: 'modelevents', event: 'data_changed' })
    expect(modelevents.body.error_message).toContain('modelevents')
  })

  test('the body: not an object, empty, or more than the limit of events', async () => {
    const ok = { class: 'callevents', event: 'call_started' }
    expect((await post('text')).body.error_details?.field).toBe('events[0]')
    expect((await post([])).body.error_details?.field).toBe('events')
    const many = await post(Array.from({ length: MAX_INGEST_EVENTS + 1 }, () => ok))
    expect([many.status, many.body.error_details?.field]).toEqual([400, 'events'])
    const most = await post(Array.from({ length: MAX_INGEST_EVENTS }, () => ok))
    expect(most.body.accepted).toBe(MAX_INGEST_EVENTS)
  })
})

describe('Redis stream ingest', () => {
  test('the event-ingest worker publishes stream entries (domain by name or id) and acknowledges them; invalid ones are skipped', async () => {
    const add = (event: unknown) => t.deps.kv.xadd(INGEST_STREAM, { event: JSON.stringify(event) })
    await add({ class: 'callevents', event: 'from_stream', domain: acme.name, data: { n: 1 } })
    await add({ class: 'modelevents', event: 'data_changed', domain: acme.name })
    await t.deps.kv.xadd(INGEST_STREAM, { event: '{not json' })
    await t.deps.kv.xadd(INGEST_STREAM, { other: 'x' })
    await add({ class: 'callevents', event: 'from_stream', domain: 'nope.master' })
    await add({ class: 'callevents', event: 'from_stream' })
    await add({
      class: 'callevents',
      event: 'from_stream',
      domain: other.id,
      data: { n: 2 },
      time: '2024-01-01T00:00:00Z',
    })
    messages.length = 0
    expect(await t.run('event-ingest')).toBe(7)
    // the step's valid entries went out together
    expect(messages.map((m) => (JSON.parse(m) as PlatformEvent[]).map((e) => e.data))).toEqual([[{ n: 1 }, { n: 2 }]])
    for (let i = 0; i < 400 && seen.filter((e) => e.event === 'from_stream').length < 2; i++) await Bun.sleep(5)
    await Bun.sleep(20)
    const got = seen.filter((e) => e.event === 'from_stream')
    expect(got.map((e) => [e.domain, e.data, e.time])).toEqual([
      [acme.id, { n: 1 }, new Date(t.clock.now()).toISOString()],
      [other.id, { n: 2 }, '2024-01-01T00:00:00.000Z'],
    ])
    expect(got.every((e) => typeof e.id === 'string')).toBe(true)
    // everything was acknowledged: nothing pending, nothing new
    const pending = await t.deps.kv.xreadgroup(INGEST_STREAM, 'event-ingest', 'event-ingest', {
      count: 100,
      pending: true,
    })
    expect(pending).toEqual([])
    expect(await t.run('event-ingest')).toBe(0)
  })

  test('an entry a previous lease holder read but did not acknowledge is published by the next pass', async () => {
    await t.deps.kv.xadd(INGEST_STREAM, {
      event: JSON.stringify({ class: 'callevents', event: 'left_over', domain: acme.name }),
    })
    // the reader stopped after reading: the entry is pending for the worker's consumer name
    const read = await t.deps.kv.xreadgroup(INGEST_STREAM, 'event-ingest', 'event-ingest', {
      count: 10,
      pending: false,
    })
    expect(read).toHaveLength(1)
    expect(await t.run('event-ingest')).toBe(1)
    for (let i = 0; i < 400 && !seen.some((e) => e.event === 'left_over'); i++) await Bun.sleep(5)
    expect(seen.filter((e) => e.event === 'left_over').map((e) => e.domain)).toEqual([acme.id])
  })

  test('a step whose publish fails leaves its entries pending: the next pass publishes them, once acknowledged', async () => {
    await t.deps.kv.xadd(INGEST_STREAM, {
      event: JSON.stringify({ class: 'callevents', event: 'retried', domain: acme.name }),
    })
    const publish = t.deps.kv.publish
    t.deps.kv.publish = async (channel, message) => {
      if (channel.endsWith('events')) throw new Error('publish failed')
      return publish(channel, message)
    }
    try {
      expect(await t.run('event-ingest')).toBe(0)
    } finally {
      t.deps.kv.publish = publish
    }
    expect(await t.run('event-ingest')).toBe(1)
    for (let i = 0; i < 400 && !seen.some((e) => e.event === 'retried'); i++) await Bun.sleep(5)
    expect(seen.filter((e) => e.event === 'retried')).toHaveLength(1)
    expect(await t.run('event-ingest')).toBe(0)
  })
})
