// Changes of model classes reach subscribers who may read them, over a real socket (issue 38): a
// one-segment class (`orders`) delivers to a websocket user and a webhook channel whose role grants
// GET on /rest/v1/model/orders/**, and a model class named like an entity's data class (`user`) is
// read-checked as the model class it is, not as the users entity.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { jobsOf } from '~storage/queue'
import { testService, type TestService } from '../helpers/service'
import { openWs, type WsClient } from '../helpers/ws'

let t: TestService
let token: string
let domain: { id: string; name: string }
let wsUrl: string
const CHANGES = ['modelevents.data_changed']
const http = (method: string, path: string, body?: unknown, as = token) => t.call(method, path, { token: as, body })
type Frame = [string, Record<string, unknown>]
const isEvent = (f: Frame) => f[0] === 'event'

async function role(name: string, path: string) {
  const r = await http('POST', '/rest/v1/domain/roles', { name, routes: [{ path, methods: ['GET'] }] })
  expect(r.status).toBe(200)
}

let users = 0
async function userWith(roleName: string): Promise<WsClient> {
  const login = `${roleName}${++users}`
  await t.createUser(domain.id, login, `${login}-Pass1`, [roleName])
  return openWs(`${wsUrl}?token=${await t.login('mc.master', login, `${login}-Pass1`)}`)
}

async function subscribe(c: WsClient, payload: Record<string, unknown>) {
  c.send(['subscribe', payload])
  return (await c.next((f) => f[0] === 'subscribe' && f[1].id === payload.id))[1]
}

beforeAll(async () => {
  t = await testService({ listen: true, licence: { webservice_subscr: 10 } })
  domain = await t.createDomain('mc.master')
  token = await t.adminIn('mc.master')
  wsUrl = `${t.service.url!.replace('http', 'ws')}/ws`
  for (const classname of ['orders', 'user']) {
    const made = await http('POST', '/rest/v1/design/classes', {
      classname,
      properties: [{ name: 'title', data_type: 'string' }],
    })
    expect(made.status).toBe(200)
  }
  await role('orders_reader', '/rest/v1/model/orders/**')
  await role('muser_reader', '/rest/v1/model/user/**')
  await role('users_reader', '/rest/v1/domain/users/**')
})
afterAll(() => t.close())

describe('websocket', () => {
  for (const objects of [['orders'], ['model/orders'], ['/rest/v1/model/orders']])
    test(`a one-segment model class named ${JSON.stringify(objects)} delivers to a reader by role`, async () => {
      const c = await userWith('orders_reader')
      expect(await subscribe(c, { id: 'o', expires: 60, events: CHANGES, objects })).toEqual({ id: 'o', expires: 60 })
      const made = await http('POST', '/rest/v1/model/orders', { title: 'o' })
      expect(made.status).toBe(200)
      await t.run('journal-pump')
      expect((await c.next(isEvent))[1]).toMatchObject({
        subscription: 'o',
        data: { class: 'orders', id: made.body.id },
      })
      c.close()
    })

  test('a one-segment model class by classpath delivers to a reader by role', async () => {
    const c = await userWith('orders_reader')
    const terms = { id: 'cp', expires: 60, events: CHANGES, classpath: '/rest/v1/model/orders' }
    expect(await subscribe(c, terms)).toEqual({ id: 'cp', expires: 60 })
    const made = await http('POST', '/rest/v1/model/orders', { title: 'cp' })
    await t.run('journal-pump')
    expect((await c.next(isEvent))[1]).toMatchObject({ subscription: 'cp', data: { id: made.body.id } })
    c.close()
  })

  test('a model class named like the users entity is read-checked as the model class', async () => {
    const modelReader = await userWith('muser_reader')
    const usersReader = await userWith('users_reader')
    const all = { id: 'all', expires: 60, events: CHANGES, objects: ['model/user'] }
    expect(await subscribe(modelReader, all)).toEqual({ id: 'all', expires: 60 })
    expect(await subscribe(usersReader, { ...all, objects: ['users'] })).toEqual({ id: 'all', expires: 60 })
    const byPath = { id: 'cp', expires: 60, events: CHANGES, classpath: '/rest/v1/domain/users' }
    expect(await subscribe(usersReader, byPath)).toEqual({ id: 'cp', expires: 60 })
    const made = await http('POST', '/rest/v1/model/user', { title: 'u' })
    expect(made.status).toBe(200)
    await t.run('journal-pump')
    expect((await modelReader.next(isEvent))[1]).toMatchObject({ data: { class: 'user', id: made.body.id } })
    // the users entity's reader may not read the model class: its change is not theirs
    await Bun.sleep(200)
    const ids = usersReader.pending(isEvent).map((f) => (f[1].data as { id: string }).id)
    expect(ids).not.toContain(made.body.id)
    modelReader.close()
    usersReader.close()
  })
})

describe('webhook channel', () => {
  test('a one-segment model class delivers to a channel whose role reads it', async () => {
    const made = await t.call('POST', '/rest/v1/service/integration_points', {
      token,
      body: { code: 'orders', type: 'subscr', url: 'https://hooks.example.com/in', opts: { roles: ['orders_reader'] } },
    })
    expect(made.status).toBe(200)
    const ch = made.body as { id: string; token_local: string }
    const sub = await http(
      'POST',
      '/rest/v1/service/webhooks',
      { events: CHANGES, objects: ['orders'], expires: 600 },
      ch.token_local,
    )
    expect(sub.status).toBe(200)
    const order = await http('POST', '/rest/v1/model/orders', { title: 'w' })
    await t.run('webhook-enqueue')
    const jobs = (await jobsOf(t.deps.db, 'webhook', { payload: { channel: ch.id } })).map((j) => j.payload)
    const ids = jobs.map((j) => (j as { envelope: { data: { id: string } } }).envelope.data.id)
    expect(ids).toContain(order.body.id)
  })
})
