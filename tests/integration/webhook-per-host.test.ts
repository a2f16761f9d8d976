// Webhook delivery keeps at most PER_HOST requests in flight to one host: a slow receiver gets no
// more than that at once, and every delivery still arrives.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { enqueueEvent } from '~/integration/deliveries'
import { PER_HOST } from '~/integration/delivery-slots'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let open = 0
let most = 0
const seen = new Set<string>()
const receiver = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    open++
    most = Math.max(most, open)
    seen.add(req.headers.get('webhook-id') ?? '')
    await Bun.sleep(100) // a slow receiver
    open--
    return new Response(null, { status: 204 })
  },
})

beforeAll(async () => {
  t = await testService({ env: { WEBHOOK_ALLOW_PRIVATE: '127.0.0.1/32' } })
})
afterAll(async () => {
  await t.close()
  receiver.stop(true)
})

test(`at most ${PER_HOST} deliveries to one host at once; all of them arrive`, async () => {
  const domain = await t.createDomain('slow.master')
  const admin = await t.adminIn('slow.master')
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
  const events = 12
  for (let i = 0; i < events; i++)
    await enqueueEvent(t.deps, {
      id: crypto.randomUUID(),
      class: 'customevents',
      event: 'tick',
      domain: domain.id,
      time: new Date().toISOString(),
      objects: [],
      data: { i },
    })
  // passes of the worker until every job went out (a busy host's jobs come back after a second)
  for (let pass = 0; pass < 40 && seen.size < events; pass++) {
    await t.run('webhook-deliveries')
    await t.settled('webhook-deliveries')
    if (seen.size < events) t.clock.advance(1000)
  }
  expect(seen.size).toBe(events)
  expect(most).toBe(PER_HOST)
})
