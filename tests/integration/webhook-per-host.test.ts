// Webhook delivery keeps at most PER_HOST requests in flight to one host: a slow receiver gets no
// more than that at once, and every delivery still arrives. While its host is full, the worker
// claims fewer jobs rather than claiming and giving back the same backlog over and over.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { enqueueEvent } from '~/integration/deliveries'
import { deliveriesSettled, PER_HOST } from '~/workers/webhook-deliveries'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let open = 0
let most = 0
const seen = new Set<string>()
/** While set, the receiver holds every request until it is opened. */
let gate: { opened: Promise<void>; open: () => void } | null = null
const receiver = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    open++
    most = Math.max(most, open)
    seen.add(req.headers.get('webhook-id') ?? '')
    if (gate) await gate.opened
    else await Bun.sleep(100) // a slow receiver
    open--
    return new Response(null, { status: 204 })
  },
})

beforeAll(async () => {
  t = await testService({ env: { WEBHOOK_ALLOW_PRIVATE: '127.0.0.1/32' }, licence: { webservice_subscr: 5 } })
})
afterAll(async () => {
  await t.close()
  receiver.stop(true)
})

/** A domain whose `subscr` channel posts every custom event to the receiver. */
async function subscribedDomain(name: string) {
  const domain = await t.createDomain(name)
  const admin = await t.adminIn(name)
  const channel = await t.call('POST', '/rest/v1/service/integration_points', {
    token: admin,
    body: { code: 'slow', type: 'subscr', url: `http://127.0.0.1:${receiver.port}/hook` },
  })
  const token = channel.body.token_local as string
  const sub = await t.call('POST', '/rest/v1/service/webhooks', {
    token,
    body: { events: ['customevents.*'], expires: 600 },
  })
  expect(sub.status).toBe(200)
  return domain
}

const tick = (domain: string, i: number) =>
  enqueueEvent(t.deps, {
    id: crypto.randomUUID(),
    class: 'customevents',
    event: 'tick',
    domain,
    time: new Date().toISOString(),
    objects: [],
    data: { i },
  })

test(`at most ${PER_HOST} deliveries to one host at once; all of them arrive`, async () => {
  const domain = await subscribedDomain('slow.master')
  const events = 12
  for (let i = 0; i < events; i++) await tick(domain.id, i)
  // passes of the worker until every job went out (a busy host's jobs come back after a second)
  for (let pass = 0; pass < 40 && seen.size < events; pass++) {
    await t.run('webhook-deliveries')
    await deliveriesSettled(t.deps)
    if (seen.size < events) t.clock.advance(1000)
  }
  expect(seen.size).toBe(events)
  expect(most).toBe(PER_HOST)
})

test('while its host is full, a pass claims what the last one could place, not the backlog again', async () => {
  const domain = await subscribedDomain('backlog.master')
  const events = 60
  for (let i = 0; i < events; i++) await tick(domain.id, i)
  let open = () => {}
  gate = { opened: new Promise<void>((resolve) => (open = resolve)), open }
  const sent = seen.size
  /** Jobs of the domain given back to the queue untried: pending again, due after the clock's now. */
  const givenBack = async () =>
    (await t.deps.db.get(`SELECT count(*) FROM queue WHERE domain = ? AND status = 'pending' AND run_at > ?`, [
      domain.id,
      t.clock.now(),
    ]))![0]
  const running = async () =>
    (await t.deps.db.get(`SELECT count(*) FROM queue WHERE domain = ? AND status = 'running'`, [domain.id]))![0]
  try {
    // the first claim takes 32: 4 go out, 16 wait for the host, 12 go back
    await t.run('webhook-deliveries')
    expect([await running(), await givenBack()]).toEqual([20, 12])
    // nothing was delivered meanwhile: the next claim takes the 20 it placed, and gives them all back
    await t.run('webhook-deliveries')
    expect([await running(), await givenBack()]).toEqual([20, 32])
    // then one at a time while the host stays full (it took 32 each time, giving back the backlog)
    await t.run('webhook-deliveries')
    await t.run('webhook-deliveries')
    expect([await running(), await givenBack()]).toEqual([20, 34])
  } finally {
    gate.open()
    gate = null
  }
  for (let pass = 0; pass < 100 && seen.size < sent + events; pass++) {
    await t.run('webhook-deliveries')
    await deliveriesSettled(t.deps)
    if (seen.size < sent + events) t.clock.advance(1000)
  }
  expect(seen.size).toBe(sent + events)
  expect(most).toBe(PER_HOST)
})

test('events from the bus are enqueued in the order they came (their writes are not awaited one by one)', async () => {
  const domain = await subscribedDomain('order.master')
  const events = Array.from({ length: 50 }, (_, i) => ({
    id: crypto.randomUUID(),
    class: 'customevents',
    event: 'tick',
    domain: domain.id,
    time: new Date().toISOString(),
    objects: [],
    data: { i },
  }))
  await t.deps.bus.publishAll(events)
  const order = async () =>
    (await t.deps.db.all(`SELECT payload FROM queue WHERE domain = ? ORDER BY seq`, [domain.id])).map(
      (r) => (JSON.parse(r[0] as string) as { envelope: { data: { i: number } } }).envelope.data.i,
    )
  // the bus is Redis: the events come back to this process's listener a moment later
  for (const until = Date.now() + 3000; (await order()).length < 50 && Date.now() < until; ) await Bun.sleep(5)
  await t.service.webhooks.idle()
  expect(await order()).toEqual(events.map((e) => e.data.i))
})
