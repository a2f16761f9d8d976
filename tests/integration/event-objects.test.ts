// Subscriptions to events that are no data change, over a real socket (issue 38): a string in
// `objects` stays the event object a script's emit or ingest binds (`["foo"]`), read as a
// collection only when `events` take modelevents; ingest takes only the classes a webhook
// subscription may name, so every event it publishes can be subscribed to.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { jobsOf } from '~storage/queue'
import { testService, type TestService } from '../helpers/service'
import { openWs } from '../helpers/ws'

let t: TestService
let token: string
let wsUrl: string
const http = (method: string, path: string, body?: unknown, as = token) => t.call(method, path, { token: as, body })
const ingest = (body: unknown) => http('POST', '/rest/v1/service/events', body)
type Frame = [string, Record<string, unknown>]

beforeAll(async () => {
  t = await testService({ listen: true, licence: { webservice_subscr: 10 } })
  await t.createDomain('eo.master')
  token = await t.adminIn('eo.master')
  wsUrl = `${t.service.url!.replace('http', 'ws')}/ws`
})
afterAll(() => t.close())

describe('objects of events that are no data change', () => {
  test('websocket: events customevents.*, objects ["foo"] is accepted and matches events bound to foo', async () => {
    const c = await openWs(`${wsUrl}?token=${token}`)
    c.send(['subscribe', { id: 'foo', expires: 60, events: ['customevents.*'], objects: ['foo'] }])
    expect((await c.next((f: Frame) => f[0] === 'subscribe'))[1]).toEqual({ id: 'foo', expires: 60 })
    expect((await ingest({ class: 'customevents', event: 'other', objects: ['bar'] })).status).toBe(200)
    expect((await ingest({ class: 'customevents', event: 'greeted', objects: ['foo'] })).status).toBe(200)
    const [, event] = await c.next((f: Frame) => f[0] === 'event')
    expect(event).toMatchObject({ subscription: 'foo', class: 'customevents', event: 'greeted' })
    c.close()
  })

  test('websocket: with modelevents, a string still names a collection (400 for none)', async () => {
    const c = await openWs(`${wsUrl}?token=${token}`)
    const events = ['modelevents.data_changed', 'customevents.*']
    c.send(['subscribe', { id: 'mixed', expires: 60, events, objects: ['foo'] }])
    const answer = (await c.next((f: Frame) => f[0] === 'subscribe'))[1]
    expect(answer.error).toMatchObject({ error_code: 1400, error_details: { field: 'objects', index: 0 } })
    c.close()
  })

  test('webhook: events callevents.*, objects ["foo"] is accepted and delivers events bound to foo', async () => {
    const made = await http('POST', '/rest/v1/service/integration_points', {
      code: 'calls',
      type: 'subscr',
      url: 'https://hooks.example.com/in',
    })
    expect(made.status).toBe(200)
    const ch = made.body as { id: string; token_local: string }
    const body = { events: ['callevents.*'], objects: ['foo'], expires: 600 }
    expect((await http('POST', '/rest/v1/service/webhooks', body, ch.token_local)).status).toBe(200)
    const nope = { events: ['modelevents.data_changed'], objects: ['foo'], expires: 600 }
    const refused = await http('POST', '/rest/v1/service/webhooks', nope, ch.token_local)
    expect(refused.status).toBe(400)
    expect(refused.body.error_details).toMatchObject({ field: 'objects', index: 0 })
    const jobs = async () => (await jobsOf(t.deps.db, 'webhook', { payload: { channel: ch.id } })).map((j) => j.payload)
    const deadline = Date.now() + 3000
    expect((await ingest({ class: 'callevents', event: 'call_start', objects: ['bar'] })).status).toBe(200)
    expect((await ingest({ class: 'callevents', event: 'call_end', objects: ['foo'] })).status).toBe(200)
    // the webhook-events worker enqueues what the bus brought it
    for (; (await jobs()).length === 0 && Date.now() < deadline; await Bun.sleep(20)) await t.run('webhook-events')
    await Bun.sleep(100)
    await t.run('webhook-events')
    expect((await jobs()).map((p) => p.event)).toEqual(['callevents.call_end'])
  })
})

describe('ingest takes the classes a webhook subscription may name', () => {
  test('another class is a 400 naming the field; a listed one is accepted', async () => {
    const refused = await ingest([
      { class: 'callevents', event: 'a' },
      { class: 'whatever', event: 'thing' },
    ])
    expect(refused.status).toBe(400)
    expect(refused.body.error_details).toMatchObject({ field: 'events[1].class' })
    expect(refused.body.error_message).toContain('callevents')
    for (const cls of ['customevents', 'callevents', 'ivrevents'])
      expect((await ingest({ class: cls, event: 'thing' })).status).toBe(200)
    expect((await ingest({ class: 'modelevents', event: 'data_changed' })).status).toBe(400)
  })
})
