// /ws with an integration channel's token: the socket acts as the channel (its roles), its writes
// are journaled as the channel, its subscriptions get pushes, and a deleted channel's socket closes.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'
import { openWs, upgradeAnswer } from '../helpers/ws'

let t: TestService
let admin: string
let wsUrl: string
beforeAll(async () => {
  t = await testService({ listen: true })
  await t.createDomain('chws.master')
  admin = await t.adminIn('chws.master')
  wsUrl = `${t.service.url!.replace('http', 'ws')}/ws`
})
afterAll(() => t.close())

test('a channel token opens a socket that reads, writes and subscribes as the channel', async () => {
  const made = await t.call('POST', '/rest/v1/service/integration_points', {
    token: admin,
    body: { code: 'crm', type: 'public', opts: { roles: ['admin'] } },
  })
  expect(made.status).toBe(200)
  const { id, token_local: token } = made.body
  expect((await upgradeAnswer(`${t.service.url}/ws?token=${'0'.repeat(32)}`)).status).toBe(401)
  const c = await openWs(`${wsUrl}?token=${token}`)
  c.send([
    'rest',
    { qid: 1, operation: 'create', classpath: '/rest/v1/reference/extobjs', content: { type: 'from-channel' } },
  ])
  const created = (await c.next((f) => f[0] === 'rest' && f[1].qid === 1))[1].result as { id: string }
  const [row] = (await t.deps.db.all('SELECT modifierid, initiator FROM journal WHERE objid = ?', [created.id])) as [
    string,
    string,
  ][]
  expect(row).toEqual([id, 'websocket'])

  c.send([
    'subscribe',
    { id: 's', expires: 60, events: ['modelevents.data_changed'], classpath: '/rest/v1/reference/extobjs' },
  ])
  await c.next((f) => f[0] === 'subscribe')
  const other = (await t.call('POST', '/rest/v1/reference/extobjs', { token: admin, body: { type: 'pushed' } })).body
  await t.run('journal-pump')
  // its own create and the administrator's, in journal order
  const events = [await c.next((f) => f[0] === 'event'), await c.next((f) => f[0] === 'event')]
  expect(events.map(([, e]) => (e.data as { id: string }).id)).toEqual([created.id, other.id])

  expect((await t.call('DELETE', `/rest/v1/service/integration_points/${id}`, { token: admin })).status).toBe(204)
  await t.run('ws-sessions')
  expect(await c.closed).toMatchObject({ code: 4001 })
})
