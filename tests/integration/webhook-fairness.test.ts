// Webhook delivery shared between tenants (issue 35): one domain whose receivers hang, five host
// names of one receiver (one address and port) and five receivers on addresses of their own, with a
// backlog older than everything else; another domain's deliveries still arrive on time, and the
// receiver of five names never has more than PER_HOST requests open. Real sockets, the worker on
// its own schedule and wake-ups.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ManualClock } from '~/clock'
import type { PlatformEvent } from '~/events/event'
import { enqueueEvent } from '~/integration/deliveries'
import { resolveAll } from '~/net/outbound'
import { PER_HOST } from '~/integration/delivery-slots'
import { testService, type TestService } from '../helpers/service'

/** Time as it passes: the deliveries here are timed in real time (the receivers hang for real). */
class RealClock extends ManualClock {
  override now() {
    return Date.now()
  }
}

let t: TestService
/** Requests open at the hanging receiver of five names, and the most at once. */
let open = 0
let most = 0
const hang = (hostname: string, counted: boolean) =>
  Bun.serve({
    hostname,
    port: 0,
    fetch() {
      if (counted) most = Math.max(most, ++open)
      return new Promise<Response>(() => {}) // never answers
    },
  })
const fiveNames = hang('127.0.0.1', true)
const ownAddresses = [2, 3, 4, 5, 6].map((n) => hang(`127.0.0.${n}`, false))
const hanging = [fiveNames, ...ownAddresses]
const hangingUrls = [
  ...[1, 2, 3, 4, 5].map((n) => `http://hook-${n}.test:${fiveNames.port}/hook`),
  ...ownAddresses.map((s) => `http://${s.hostname}:${s.port}/hook`),
]

/** The other domain's receiver: when each event (by its `data.n`) arrived. */
const arrived = new Map<number, number>()
const receiver = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    const { data } = (await req.json()) as { data: { n: number } }
    arrived.set(data.n, performance.now())
    return new Response(null, { status: 204 })
  },
})

beforeAll(async () => {
  t = await testService({
    env: { WEBHOOK_ALLOW_PRIVATE: '127.0.0.0/8' },
    clock: new RealClock(),
    schedule: true,
    licence: { webservice_subscr: 20 },
    // the names hook-<n>.test are the tenant's own, all of them the one receiver on 127.0.0.1
    workers: { resolveTargets: async (host) => (host.endsWith('.test') ? ['127.0.0.1'] : resolveAll(host)) },
  })
})
afterAll(async () => {
  for (const s of hanging) s.stop(true) // the hung deliveries end (and are retried later), so the service can stop
  await t.close()
  receiver.stop(true)
})

/** A domain with a subscribed channel to each url; answers the domain's id. */
async function tenant(name: string, urls: string[]): Promise<string> {
  const domain = await t.createDomain(name)
  const admin = await t.adminIn(name)
  for (const [i, url] of urls.entries()) {
    const channel = await t.call('POST', '/rest/v1/service/integration_points', {
      token: admin,
      body: { code: `c${i}`, type: 'subscr', url },
    })
    const token = channel.body.token_local as string
    const sub = await t.call('POST', '/rest/v1/service/webhooks', {
      token,
      body: { events: ['customevents.*'], expires: 600 },
    })
    if (sub.status !== 200) throw new Error(`${i} ${sub.status} ${sub.text}`)
  }
  return domain.id
}

const event = (domain: string, n: number): PlatformEvent => ({
  id: crypto.randomUUID(),
  class: 'customevents',
  event: 'tick',
  domain,
  time: new Date().toISOString(),
  objects: [],
  data: { n },
})

test("a domain's hanging receivers do not hold another domain's deliveries back", async () => {
  const slow = await tenant('hanging.master', hangingUrls)
  const fine = await tenant('fine.master', [`http://127.0.0.1:${receiver.port}/hook`])
  // the hanging domain's backlog comes first: 100 events for each of its 10 receivers
  for (let n = 0; n < 100; n++) await enqueueEvent(t.deps, event(slow, n))
  while (open < PER_HOST) await Bun.sleep(10) // its deliveries have taken what they may

  const sent = new Map<number, number>()
  for (let n = 0; n < 40; n++) {
    sent.set(n, performance.now())
    await enqueueEvent(t.deps, event(fine, n))
    await Bun.sleep(25)
  }
  const deadline = performance.now() + 5000
  while (arrived.size < sent.size && performance.now() < deadline) await Bun.sleep(20)
  const waits = [...sent].map(([n, at]) => (arrived.get(n) ?? Number.POSITIVE_INFINITY) - at).sort((a, b) => a - b)
  const p99 = waits[Math.ceil(waits.length * 0.99) - 1]!
  expect(arrived.size).toBe(sent.size)
  expect(p99).toBeLessThan(1000)
  expect(most).toBe(PER_HOST) // five names, one address and port: one host's slots
})
