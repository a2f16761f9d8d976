// Each domain's webhook subscriptions as the deliveries read them (src/integration/subscription-cache.ts):
// read from the KV store once, kept until a change drops them in every process, lapses seen at use.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '~/clock'
import type { PlatformEvent } from '~/events/event'
import { deliveryJobs } from '~/integration/deliveries'
import { SubscriptionCache } from '~/integration/subscription-cache'
import type { Subscription } from '~/integration/webhook-keys'
import { testPrefix, testRedisKv } from '../helpers/redis'
import { testService, type TestService } from '../helpers/service'

async function until(done: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const end = Date.now() + 5000
  while (!(await done())) {
    if (Date.now() > end) throw new Error(`not within 5 s: ${what}`)
    await Bun.sleep(5)
  }
}

test("a change in one process drops that domain's subscriptions in the others, and only that domain's", async () => {
  const prefix = testPrefix()
  const [a, b] = await Promise.all([testRedisKv(prefix), testRedisKv(prefix)])
  const clock = new ManualClock(Date.now())
  const here = new SubscriptionCache(a.kv, clock)
  const there = new SubscriptionCache(b.kv, clock)
  await Promise.all([here.start(), there.start()])
  const reads: string[] = []
  const read = (domain: string) => async () => {
    reads.push(domain)
    return [{ id: `${domain}-sub` } as Subscription]
  }
  try {
    for (const domain of ['d1', 'd2', 'd1', 'd2']) await there.of(domain, read(domain))
    expect(reads).toEqual(['d1', 'd2'])
    await here.changed('d1')
    await until(async () => {
      await there.of('d1', read('d1'))
      return reads.length === 3
    }, 'the other process reads d1 again')
    await there.of('d2', read('d2'))
    expect(reads).toEqual(['d1', 'd2', 'd1'])
  } finally {
    await Promise.all([a.cleanup(), b.cleanup()])
  }
})

describe('the deliveries of a domain on the service', () => {
  let t: TestService
  let domain: string
  let admin: string
  const base = '/rest/v1/service/webhooks'
  const BODY = { events: ['customevents.greeted'], objects: [{ type: 'sipuser', sipuser: '101' }], expires: 60 }
  let smembers = 0
  const channel = async (code: string) => {
    const r = await t.call('POST', '/rest/v1/service/integration_points', {
      token: admin,
      body: { code, type: 'subscr' },
    })
    expect(r.status).toBe(200)
    return { id: r.body.id as string, token: r.body.token_local as string }
  }
  const subscribe = async (who: { token: string }, body: object = BODY) => {
    const r = await t.call('POST', base, { token: who.token, body })
    expect(r.status).toBe(200)
    return r.body.id as string
  }
  let n = 0
  /** The channels the deliveries of a new event go to. */
  const channelsOfNext = async () => {
    const event: PlatformEvent = {
      id: `greeting-${++n}`,
      class: 'customevents',
      event: 'greeted',
      domain,
      time: new Date().toISOString(),
      objects: [{ type: 'sipuser', value: '101' }],
      data: {},
    }
    return (await deliveryJobs(t.deps, event)).map((j) => (j.payload as { channel: string }).channel).sort()
  }

  beforeAll(async () => {
    t = await testService({ licence: { webservice_subscr: 10 } })
    domain = (await t.createDomain('cached.master')).id
    admin = await t.adminIn('cached.master')
    const kv = t.deps.kv
    const read = kv.smembers.bind(kv)
    kv.smembers = (key) => {
      if (key.endsWith(`webhook:subs:${domain}`)) smembers++
      return read(key)
    }
  })
  afterAll(() => t.close())

  test('the index is read once for many events; a subscribe, an unsubscribe and a lapse are seen by the next event', async () => {
    const crm = await channel('crm')
    const erp = await channel('erp')
    const first = await subscribe(crm)
    expect(await channelsOfNext()).toEqual([crm.id])
    const reads = smembers
    expect(await channelsOfNext()).toEqual([crm.id])
    expect(await channelsOfNext()).toEqual([crm.id])
    expect(smembers).toBe(reads)
    // a new subscription of another channel: the next event goes to both
    await subscribe(erp, { ...BODY, expires: 20 })
    expect(await channelsOfNext()).toEqual([crm.id, erp.id].sort())
    // gone: the next event is not delivered to it
    expect((await t.call('DELETE', `${base}/${first}`, { token: crm.token })).status).toBe(200)
    expect(await channelsOfNext()).toEqual([erp.id])
    // lapsed (past its 20 s on the service's clock, within what is kept): left out without reading the store again
    const before = smembers
    t.clock.advance(21_000)
    expect(await channelsOfNext()).toEqual([])
    expect(smembers).toBe(before)
  })
})
