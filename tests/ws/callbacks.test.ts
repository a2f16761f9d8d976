// Callback orders over the websocket: each user subscribes to their own SIP account's orders and
// receives only those; another user's account is refused as over REST; `rest` on the collection
// needs `interval` like REST.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'
import { openWs, type WsClient } from '../helpers/ws'

const MODEL = '/rest/v1/model/telephony/CallbackRequests'
const base = (account: string) => `/rest/v1/user/sip/accounts/${account}/callback_requests`

let t: TestService
let admin: string
let ann: string
let bob: string
let annAccount: string
let bobAccount: string
let wsUrl: string
beforeAll(async () => {
  t = await testService({ listen: true })
  const domain = await t.createDomain('cbws.master')
  admin = await t.adminIn('cbws.master')
  const account = async (login: string, phonenumber: string, iduser: string) =>
    (await t.call('POST', '/rest/v1/uc/sipusers', { token: admin, body: { login, phonenumber, iduser } })).body.id
  annAccount = await account('ann.sip', '101', await t.createUser(domain.id, 'ann', 'ann-Pass1'))
  bobAccount = await account('bob.sip', '202', await t.createUser(domain.id, 'bob', 'bob-Pass1'))
  ann = await t.login('cbws.master', 'ann', 'ann-Pass1')
  bob = await t.login('cbws.master', 'bob', 'bob-Pass1')
  wsUrl = `${t.service.url!.replace('http', 'ws')}/ws`
})
afterAll(() => t.close())

type Frame = [string, Record<string, unknown>]
const isEvent = (f: Frame) => f[0] === 'event'
async function subscribe(c: WsClient, id: string, account: string) {
  c.send(['subscribe', { id, expires: 300, events: ['modelevents.data_changed'], classpath: base(account) }])
  return (await c.next((f) => f[0] === 'subscribe' && f[1].id === id))[1]
}
const place = async (box: string) =>
  (
    await t.call('POST', MODEL, {
      token: admin,
      body: { boxPhoneNumber: box, abonentPhoneNumber: '+7900', dateTime: '2026-03-10T09:00:00.000Z' },
    })
  ).body

test('each user receives the changes of their own account only', async () => {
  const annWs = await openWs(`${wsUrl}?token=${ann}`)
  const bobWs = await openWs(`${wsUrl}?token=${bob}`)
  expect(await subscribe(annWs, 'mine', annAccount)).toEqual({ id: 'mine', expires: 300 })
  expect(await subscribe(bobWs, 'mine', bobAccount)).toEqual({ id: 'mine', expires: 300 })
  // bob cannot listen to ann's box: the same 404 as REST, nothing subscribed
  expect((await subscribe(bobWs, 'theirs', annAccount)).error).toMatchObject({ error_code: 1404 })

  const forAnn = await place('101')
  const forBob = await place('202')
  const patched = await t.call('PATCH', `${base(annAccount)}/2026-03-10/${forAnn.id}`, {
    token: ann,
    body: { status: 'viewed' },
  })
  expect(patched.status).toBe(200)
  await t.run('journal-pump')

  const annEvents = [await annWs.next(isEvent), await annWs.next(isEvent)]
  expect(annEvents.map(([, e]) => e.data)).toEqual([
    expect.objectContaining({ operation: 1, id: forAnn.id }),
    expect.objectContaining({ operation: 2, id: forAnn.id, new: expect.objectContaining({ status: 'viewed' }) }),
  ])
  expect((await bobWs.next(isEvent))[1].data).toMatchObject({ operation: 1, id: forBob.id })
  annWs.send(['subscribe', { id: 'probe', expires: 1, events: ['custom.ping'] }])
  await annWs.next((f) => f[0] === 'subscribe' && f[1].id === 'probe')
  expect(annWs.pending(isEvent)).toEqual([])
  expect(bobWs.pending(isEvent)).toEqual([])
  annWs.close()
  bobWs.close()
})

test('rest on the collection needs interval, as REST does, and lists only the own box', async () => {
  const c = await openWs(`${wsUrl}?token=${ann}`)
  c.send(['rest', { qid: 1, operation: 'read', classpath: base(annAccount) }])
  expect((await c.next((f) => f[1].qid === 1))[1].error).toMatchObject({ error_details: { field: 'interval' } })
  c.send(['rest', { qid: 2, operation: 'read', classpath: base(annAccount), interval: ['2026-03-01', '2026-03-31'] }])
  const list = (await c.next((f) => f[1].qid === 2))[1].result as { boxPhoneNumber: string }[]
  expect(list.length).toBeGreaterThan(0)
  expect(list.every((o) => o.boxPhoneNumber === '101')).toBe(true)
  c.send(['rest', { qid: 3, operation: 'read', classpath: base(bobAccount), interval: ['2026-03-01', '2026-03-31'] }])
  expect((await c.next((f) => f[1].qid === 3))[1].error).toMatchObject({ error_code: 1404 })
  c.close()
})

test('an account given to another user stops its orders reaching the old owner at once', async () => {
  const annWs = await openWs(`${wsUrl}?token=${ann}`)
  expect(await subscribe(annWs, 'box', annAccount)).toEqual({ id: 'box', expires: 300 })
  const before = await place('101')
  await t.run('journal-pump')
  expect((await annWs.next(isEvent))[1].data).toMatchObject({ id: before.id })
  const bobId = (await t.call('GET', '/rest/v1/iam/sessions/current', { token: bob })).body.user_id
  const moved = await t.call('PATCH', `/rest/v1/uc/sipusers/${annAccount}`, { token: admin, body: { iduser: bobId } })
  expect(moved.status).toBe(200)
  await place('101')
  await t.run('journal-pump')
  annWs.send(['subscribe', { id: 'probe', expires: 1, events: ['custom.ping'] }])
  await annWs.next((f) => f[0] === 'subscribe' && f[1].id === 'probe')
  expect(annWs.pending(isEvent)).toEqual([])
  await t.call('PATCH', `/rest/v1/uc/sipusers/${annAccount}`, {
    token: admin,
    body: { iduser: (await t.call('GET', '/rest/v1/iam/sessions/current', { token: ann })).body.user_id },
  })
  annWs.close()
})
