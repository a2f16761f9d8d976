// Webhook deliveries handed to this process's worker as they are enqueued: inserted claimed and
// delivered once committed, without a pass of the worker; pending while the queue has a backlog or
// the domain has no room; a job already queued is not taken; a failed write lets its holds go.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { deliveryJobs, enqueueEvent, queueDeliveries } from '~/integration/deliveries'
import { DeliveryHandoff, type HandoffTaker } from '~/integration/delivery-handoff'
import { channels } from '~/integration/channels'
import { DOMAIN_MAX } from '~/integration/delivery-slots'
import type { PlatformEvent } from '~/events/event'
import { tx } from '~storage/db'
import { jobsOf, type NewJob } from '~storage/queue'
import { testService, type TestService } from '../helpers/service'

describe('the hand-off', () => {
  /** A taker that holds up to `room` jobs and records what it was told. */
  const taker = (room: number) => {
    const told = { held: 0, dropped: [] as string[], started: [] as string[] }
    const t: HandoffTaker = {
      leaseMs: 60_000,
      hold: () => (told.held < room ? (told.held++, true) : false),
      drop: (domain) => void told.dropped.push(domain),
      start: (jobs) => void told.started.push(...jobs.map((job) => `${job.id} ${job.status} ${job.attempts}`)),
    }
    return { t, told }
  }
  const job = (id: string, domain = 'd1'): NewJob => ({ id, kind: 'webhook', domain, payload: {}, runAt: 0 })

  test('with no worker attached nothing is reserved', () => {
    expect(new DeliveryHandoff().reserve([job('a')], 0)).toBeNull()
  })

  test('reserves what the worker holds; the inserted start claimed, the others are let go, once', () => {
    const handoff = new DeliveryHandoff()
    const { t, told } = taker(2)
    handoff.attach(t)
    const r = handoff.reserve([job('a'), job('b'), job('c')], 1000)!
    expect([r.has('a'), r.has('b'), r.has('c'), r.leaseMs]).toEqual([true, true, false, 60_000])
    r.started(new Set(['a']))
    r.started(new Set(['a', 'b']))
    r.cancelled()
    expect(told).toEqual({ held: 2, dropped: ['d1'], started: ['a running 1'] })
  })

  test('only jobs due now and of no serial are reserved, each id once', () => {
    const handoff = new DeliveryHandoff()
    const { t, told } = taker(10)
    handoff.attach(t)
    const later = { ...job('later'), runAt: 2000 }
    const serial = { ...job('serial'), serial: 'one at a time' }
    const r = handoff.reserve([job('a'), job('a'), later, serial], 1000)!
    expect([r.has('a'), r.has('later'), r.has('serial'), told.held]).toEqual([true, false, false, 1])
    r.started(new Set(['a']))
    expect(told.started).toEqual(['a running 1'])
  })

  test('a failed write lets every hold go; a detached worker takes nothing, a later one stays attached', () => {
    const handoff = new DeliveryHandoff()
    const first = taker(5)
    const detach = handoff.attach(first.t)
    handoff.reserve([job('a', 'x'), job('b', 'y')], 0)!.cancelled()
    expect(first.told).toEqual({ held: 2, dropped: ['x', 'y'], started: [] })
    detach()
    expect(handoff.reserve([job('c')], 0)).toBeNull()
    const second = taker(5)
    handoff.attach(second.t)
    detach() // the first's detach no longer applies
    expect(handoff.reserve([job('d')], 0)?.has('d')).toBe(true)
  })
})

describe('deliveries handed over by the service', () => {
  let t: TestService
  const domains: { id: string; name: string }[] = []
  const seen: string[] = []
  const receiver = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      seen.push(req.headers.get('webhook-id') ?? '')
      return new Response(null, { status: 204 })
    },
  })
  /** Event n of domain a (0) or b (1). */
  const event = (n: number, of = 0): PlatformEvent => ({
    id: `event-${of}-${n}`,
    class: 'customevents',
    event: 'tick',
    domain: domains[of]!.id,
    time: new Date().toISOString(),
    objects: [],
    data: { n },
  })
  /** The jobs of events from..to of a domain, for one write (as the ingest of a batch makes it). */
  const jobsFor = async (from: number, to: number, of = 0) => {
    const made: NewJob[] = []
    for (let n = from; n < to; n++) made.push(...(await deliveryJobs(t.deps, event(n, of))))
    return made
  }
  const pending = async (of = 0) =>
    (await jobsOf(t.deps.db, 'webhook', { domain: domains[of]!.id })).filter((j) => j.status === 'pending').length
  const passes = () => t.service.workers.stats()['webhook-deliveries']!.runs
  const pass = async () => {
    await t.run('webhook-deliveries')
    await t.settled('webhook-deliveries')
  }

  beforeAll(async () => {
    t = await testService({ env: { WEBHOOK_ALLOW_PRIVATE: '127.0.0.1/32' } })
    for (const name of ['a.handoff.master', 'b.handoff.master']) {
      domains.push(await t.createDomain(name))
      const admin = await t.adminIn(name)
      const channel = await t.call('POST', '/rest/v1/service/integration_points', {
        token: admin,
        body: { code: 'fast', type: 'subscr', url: `http://127.0.0.1:${receiver.port}/hook` },
      })
      const sub = await t.call('POST', '/rest/v1/service/webhooks', {
        token: channel.body.token_local,
        body: { events: ['customevents.*'], expires: 600 },
      })
      expect(sub.status).toBe(200)
    }
  })
  afterAll(async () => {
    await t.close()
    receiver.stop(true)
  })

  test('while a pass has left due jobs in the queue, new jobs wait there too: the backlog goes first', async () => {
    // before any pass the queue may hold a backlog: nothing is handed over
    await queueDeliveries(t.deps, await jobsFor(0, 40))
    expect(await pending()).toBe(40)
    // a claim takes 32 at most: the pass leaves due jobs behind, and b's new job waits behind them
    await pass()
    await queueDeliveries(t.deps, await jobsFor(0, 1, 1))
    expect(await pending(1)).toBe(1)
    // passes take the rest (those given back while the host was busy come due a second later)
    for (let i = 0; i < 5 && seen.length < 41; i++) {
      t.clock.advance(1000)
      await pass()
    }
    expect([seen.length, await pending(), await pending(1)]).toEqual([41, 0, 0])
  })

  test('then a new job is delivered once committed, claimed in its insert, without a pass', async () => {
    const before = passes()
    seen.length = 0
    await enqueueEvent(t.deps, event(1, 1))
    await t.settled('webhook-deliveries')
    const [job] = await jobsOf(t.deps.db, 'webhook', { domain: domains[1]!.id }, 1)
    expect([seen, job?.status, job?.attempts]).toEqual([[job!.id], 'done', 1])
    expect(passes()).toBe(before)
  })

  test('a job already queued, or twice in one write, is taken once: one delivery', async () => {
    seen.length = 0
    expect(await Promise.all([enqueueEvent(t.deps, event(50)), enqueueEvent(t.deps, event(50))])).toEqual([1, 1])
    const twice = await jobsFor(51, 52)
    await queueDeliveries(t.deps, [...twice, ...twice])
    await t.settled('webhook-deliveries')
    expect(seen).toHaveLength(2)
  })

  test(`a domain's jobs beyond its room (${DOMAIN_MAX}) wait in the queue for a pass`, async () => {
    seen.length = 0
    await queueDeliveries(t.deps, await jobsFor(100, 100 + DOMAIN_MAX + 6))
    expect(await pending()).toBe(6)
    await t.settled('webhook-deliveries')
    expect(seen).toHaveLength(DOMAIN_MAX)
    await pass()
    expect(seen).toHaveLength(DOMAIN_MAX + 6)
  })

  test('a batch reads its channel once for all its jobs; the next batch reads it again', async () => {
    seen.length = 0
    let reads = 0
    const repo = t.deps.repo
    t.deps.repo = ((table) => {
      const r = repo(table)
      if (table.table !== channels.table.table) return r
      return Object.assign(Object.create(r), {
        get: (...args: Parameters<typeof r.get>) => (reads++, r.get(...args)),
      })
    }) as typeof repo
    try {
      await queueDeliveries(t.deps, await jobsFor(700, 720))
      await t.settled('webhook-deliveries')
      expect([seen.length, reads]).toEqual([20, 1])
      await enqueueEvent(t.deps, event(720))
      await t.settled('webhook-deliveries')
      expect([seen.length, reads]).toEqual([21, 2])
    } finally {
      t.deps.repo = repo
    }
  })

  test('a write that fails delivers nothing, and no hold of any hand-off so far was kept', async () => {
    seen.length = 0
    const made = await jobsFor(500, 501)
    // the rest of the write fails: its statement names no table
    const failing = function* () {
      yield* tx.run('INSERT INTO no_such_table VALUES (1)')
    }
    await expect(queueDeliveries(t.deps, made, failing)).rejects.toThrow('no_such_table')
    await t.settled('webhook-deliveries')
    expect(seen).toHaveLength(0)
    expect((await jobsOf(t.deps.db, 'webhook', { domain: domains[0]!.id })).map((j) => j.id)).not.toContain(made[0]!.id)
    // a domain's whole room is handed over again: one hold kept would leave a job pending
    await queueDeliveries(t.deps, await jobsFor(600, 600 + DOMAIN_MAX))
    expect(await pending()).toBe(0)
    await t.settled('webhook-deliveries')
    expect(seen).toHaveLength(DOMAIN_MAX)
  })
})
