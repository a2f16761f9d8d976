// Webhook delivery: bus → durable queue (once per channel, once per cluster) → signed POST to a local receiver.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import type { PlatformEvent } from '~/events/event'
import type { Doc } from '~storage/doc'
import { enqueueEvent } from '~/integration/deliveries'
import { jobsOf } from '~storage/queue'
import { testPrefix } from '../helpers/redis'
import { testService, type TestService } from '../helpers/service'

const ALLOW = { WEBHOOK_ALLOW_PRIVATE: '127.0.0.1/32' }
const prefix = testPrefix()
let a: TestService
let b: TestService
let domain: { id: string; name: string }

/** The receiver: answers with the next queued status (200 when none), verifies every signature it gets. */
const received: { id: string; body: Record<string, unknown>; verified: boolean }[] = []
const statuses: number[] = []
let secret = ''
const receiver = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    const text = await req.text()
    const headers = Object.fromEntries(req.headers)
    let verified = false
    try {
      new Webhook(secret).verify(text, headers)
      verified = true
    } catch {}
    received.push({ id: headers['webhook-id']!, body: JSON.parse(text), verified })
    return new Response(null, { status: statuses.shift() ?? 200 })
  },
})
const hookUrl = `http://127.0.0.1:${receiver.port}/hook`

/** A subscr channel; one that subscribes to data changes needs a role reading them (here admin). */
async function subscrChannel(t: TestService, code: string, url = hookUrl, inDomain = domain.name, roles?: string[]) {
  const admin = await t.adminIn(inDomain)
  const r = await t.call('POST', '/rest/v1/service/integration_points', {
    token: admin,
    body: { code, type: 'subscr', url, ...(roles ? { opts: { roles } } : {}) },
  })
  expect(r.status).toBe(200)
  return { id: r.body.id as string, token: r.body.token_local as string, secret: r.body.secret as string, admin }
}

const subscribe = (t: TestService, token: string, body: Record<string, unknown>) =>
  t.call('POST', '/rest/v1/service/webhooks', { token, body: { expires: 600, ...body } })

/** A script event; each test names its own, so the channels of other tests do not match it. */
const greeted = (event = 'greeted', sipuser = '101'): PlatformEvent => ({
  id: crypto.randomUUID(),
  class: 'customevents',
  event,
  domain: domain.id,
  time: new Date().toISOString(),
  objects: [{ type: 'sipuser', value: sipuser }],
  data: { hello: sipuser },
})

const jobs = (t: TestService, channel: string) => jobsOf(t.deps.db, 'webhook', { payload: { channel } })

/** Waits (bounded) until the bus has brought the channel `n` jobs, enqueued by passes of the webhook-events worker. */
async function waitJobs(t: TestService, channel: string, n: number) {
  const deadline = Date.now() + 3000
  for (;;) {
    await t.run('webhook-events')
    if ((await jobs(t, channel)).length >= n || Date.now() > deadline) return jobs(t, channel)
    await Bun.sleep(20)
  }
}

/** One pass of the worker and the deliveries it started. */
async function deliver(t: TestService) {
  await t.run('webhook-deliveries')
  await t.settled('webhook-deliveries')
}

beforeAll(async () => {
  a = await testService({ driver: 'remote', kvPrefix: prefix, env: ALLOW, licence: { webservice_subscr: 20 } })
  b = await testService({ driver: 'remote', kvPrefix: prefix, dataDir: a.dir, clock: a.clock, env: ALLOW })
  domain = await a.createDomain('acme.master')
})
afterAll(async () => {
  await b.close()
  await a.close()
  receiver.stop(true)
})

describe('delivery', () => {
  test('two overlapping subscriptions of one channel: one signed delivery with the envelope', async () => {
    const ch = await subscrChannel(a, 'overlap')
    secret = ch.secret
    const only900 = [{ type: 'sipuser', sipuser: '900' }]
    expect((await subscribe(a, ch.token, { events: ['customevents.*'], objects: only900 })).status).toBe(200)
    expect(
      (
        await subscribe(a, ch.token, {
          events: ['customevents.greeted'],
          objects: [{ type: 'sipuser', sipuser: '101' }],
        })
      ).status,
    ).toBe(200)
    expect((await subscribe(a, ch.token, { events: ['callevents.*'] })).status).toBe(200)
    const event = greeted('greeted', '900')
    await a.deps.bus.publish(event)
    await a.deps.bus.publish({ ...greeted('greeted', '900'), class: 'confevents' }) // matches nothing
    await a.deps.bus.publish(greeted('greeted', '901')) // another sipuser: nothing
    expect(await waitJobs(a, ch.id, 1)).toHaveLength(1)
    received.length = 0
    await deliver(a)
    expect(received).toHaveLength(1)
    const [got] = received
    expect(got!.verified).toBe(true)
    expect(got!.body).toEqual({
      id: got!.id,
      class: 'customevents',
      event: 'greeted',
      domain: 'acme.master',
      time: event.time,
      objects: event.objects,
      data: event.data,
    })
    const [log] = (await a.call('GET', `/rest/v1/service/integration_points/${ch.id}/deliveries`, { token: ch.admin }))
      .body
    expect(log).toMatchObject({
      id: got!.id,
      event: 'customevents.greeted',
      status: 'done',
      attempts: 1,
      http_status: 200,
    })
    expect(log.latency_ms).toBeNumber()
  })

  test('journal changes arrive as modelevents.data_changed, keyed by their journal seq', async () => {
    const ch = await subscrChannel(a, 'journal', hookUrl, domain.name, ['admin'])
    secret = ch.secret
    await subscribe(a, ch.token, { events: ['modelevents.data_changed'], objects: ['extobj'] })
    const created = await a.call('POST', '/rest/v1/reference/extobjs', {
      token: ch.admin,
      body: { type: 'n', value: 1 },
    })
    await a.run('webhook-enqueue')
    expect(await jobs(a, ch.id)).toHaveLength(1)
    received.length = 0
    await deliver(a)
    expect(received.map((r) => [r.verified, r.body.event, (r.body.data as { id: string }).id])).toEqual([
      [true, 'data_changed', created.body.id],
    ])
  })

  test("each domain's journal changes get their jobs in order; a domain without subscriptions, none", async () => {
    const quiet = await a.createDomain('quiet.master')
    const quietAdmin = await a.adminIn(quiet.name)
    const loud = await a.createDomain('loud.master')
    const channels = [
      await subscrChannel(a, 'in-order', hookUrl, domain.name, ['admin']),
      await subscrChannel(a, 'loud', hookUrl, loud.name, ['admin']),
    ]
    for (const ch of channels)
      await subscribe(a, ch.token, { events: ['modelevents.data_changed'], objects: ['extobj'] })
    const created: string[][] = [[], []]
    for (let i = 0; i < 3; i++)
      for (const [n, token] of [channels[0]!.admin, quietAdmin, channels[1]!.admin].entries()) {
        const r = await a.call('POST', '/rest/v1/reference/extobjs', { token, body: { type: 'n', value: i } })
        if (n !== 1) created[n / 2]!.push(r.body.id as string)
      }
    await a.run('webhook-enqueue')
    for (const [n, ch] of channels.entries()) {
      const made = (await jobs(a, ch.id)).reverse() // oldest first
      expect(made.map((j) => ((j.payload.envelope as Doc).data as Doc).id)).toEqual(created[n]!)
    }
    expect(await jobsOf(a.deps.db, 'webhook', { domain: quiet.id })).toEqual([])
    // the cursor is past every domain's changes
    expect((await a.deps.db.get("SELECT seq FROM journal_cursors WHERE name = 'webhooks'"))![0]).toBe(
      (await a.deps.db.get('SELECT MAX(seq) FROM journal'))![0],
    )
  })

  test('two service instances receiving the same bus event enqueue it once', async () => {
    const ch = await subscrChannel(a, 'cluster')
    await subscribe(a, ch.token, { events: ['customevents.cluster'] })
    await a.deps.bus.publish(greeted('cluster'))
    await waitJobs(a, ch.id, 1)
    await Bun.sleep(100)
    await b.run('webhook-events')
    // and the same event offered by both: both match, one job. One after the other: the two
    // instances share this thread, and with the remote driver on a file: URL a transaction's BEGIN
    // waits out its busy timeout synchronously, holding the thread the other's COMMIT needs
    const again = greeted('cluster')
    expect([await enqueueEvent(a.deps, again), await enqueueEvent(b.deps, again)]).toEqual([1, 1])
    expect(await jobs(a, ch.id)).toHaveLength(2)
  })

  test('an ingest answers once its deliveries are queued: durable before the 200, enqueued once', async () => {
    const ch = await subscrChannel(a, 'ingested', hookUrl, domain.name, ['admin'])
    await subscribe(a, ch.token, { events: ['callevents.ingested'] })
    const ingested = await a.call('POST', '/rest/v1/service/events', {
      token: ch.admin,
      body: [{ class: 'callevents', event: 'ingested', data: { n: 1 } }],
    })
    expect(ingested.status).toBe(200)
    // no worker has run: the job is in the queue already, a crash now would not lose it
    const queued = await jobs(a, ch.id)
    expect(queued.map((j) => (j.payload.envelope as Doc).data)).toEqual([{ n: 1 }])
    await a.run('webhook-events') // the bus's copy of the event is passed over
    expect(await jobs(a, ch.id)).toHaveLength(1)
  })

  test('a 500 is retried with backoff until it succeeds; a 400 fails for good and can be replayed', async () => {
    const ch = await subscrChannel(a, 'retry')
    secret = ch.secret
    await subscribe(a, ch.token, { events: ['customevents.retry'] })
    await deliver(a) // what earlier tests left queued, so the 500 goes to this channel
    received.length = 0
    statuses.push(500)
    await enqueueEvent(a.deps, greeted('retry'))
    await deliver(a)
    const [first] = await jobs(a, ch.id)
    expect(first).toMatchObject({ status: 'pending', attempts: 1, error: 'the receiver answered 500' })
    await deliver(a) // not due yet
    expect(received).toHaveLength(1)
    a.clock.advance(15_000)
    await deliver(a)
    expect(received.map((r) => [r.id, r.verified])).toEqual([
      [first!.id, true],
      [first!.id, true],
    ])
    expect((await jobs(a, ch.id))[0]).toMatchObject({ status: 'done', attempts: 2 })

    statuses.push(400)
    await enqueueEvent(a.deps, greeted('retry'))
    await deliver(a)
    a.clock.advance(3_600_000)
    await deliver(a)
    const log = `/rest/v1/service/integration_points/${ch.id}/deliveries`
    const [failed] = (await a.call('GET', log, { token: ch.admin })).body
    expect(failed).toMatchObject({
      status: 'failed',
      attempts: 1,
      http_status: 400,
      last_error: 'the receiver answered 400',
    })
    expect(received).toHaveLength(3)
    const replay = await a.call('POST', `${log}/${failed.id}/replay`, { token: ch.admin })
    expect(replay.body).toMatchObject({ id: failed.id, status: 'pending' })
    await deliver(a)
    expect(received).toHaveLength(4)
    expect((await a.call('GET', log, { token: ch.admin })).body[0]).toMatchObject({ status: 'done', attempts: 1 })
    expect((await a.call('POST', `${log}/${failed.id}/replay`, { token: ch.admin })).status).toBe(409)
    // domain administrators only: the channel's own token has no role for it
    expect((await a.call('GET', log, { token: ch.token })).status).toBe(403)
  })
})

describe('targets and durability', () => {
  test('a private target is refused without WEBHOOK_ALLOW_PRIVATE', async () => {
    const c = await testService({ kvPrefix: testPrefix() })
    try {
      domain = await c.createDomain('acme.master')
      const ch = await subscrChannel(c, 'private')
      await subscribe(c, ch.token, { events: ['customevents.greeted'] })
      received.length = 0
      await enqueueEvent(c.deps, greeted())
      await deliver(c)
      expect(received).toHaveLength(0)
      const [job] = await jobs(c, ch.id)
      expect(job!.status).toBe('failed')
      expect(job!.error).toContain('WEBHOOK_ALLOW_PRIVATE')
    } finally {
      await c.close()
    }
  })

  test('a journal change published before its deliveries were enqueued still gets them after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'platform-webhook-'))
    const kvPrefix = testPrefix() // the subscriptions (in Redis) outlive the process
    try {
      const first = await testService({ dataDir: dir, env: ALLOW, kvPrefix })
      domain = await first.createDomain('acme.master')
      const ch = await subscrChannel(first, 'published', hookUrl, domain.name, ['admin'])
      secret = ch.secret
      await subscribe(first, ch.token, { events: ['modelevents.data_changed'], objects: ['extobj'] })
      const created = await first.call('POST', '/rest/v1/reference/extobjs', { token: ch.admin, body: { type: 'k' } })
      await first.run('journal-pump') // published on the bus; then the process ends before enqueueing
      await first.service.stop()
      const second = await testService({ dataDir: dir, env: ALLOW, kvPrefix })
      try {
        await second.run('webhook-enqueue')
        await second.run('webhook-enqueue') // a second pass finds nothing more
        expect(await jobs(second, ch.id)).toHaveLength(1)
        received.length = 0
        await deliver(second)
        expect(received.map((r) => [r.verified, (r.body.data as { id: string }).id])).toEqual([[true, created.body.id]])
      } finally {
        await second.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('an accepted delivery survives a restart between accept and delivery', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'platform-webhook-'))
    try {
      const first = await testService({ dataDir: dir, env: ALLOW, driver: 'remote' })
      domain = await first.createDomain('acme.master')
      const ch = await subscrChannel(first, 'durable')
      secret = ch.secret
      await subscribe(first, ch.token, { events: ['customevents.greeted'] })
      await first.deps.bus.publish(greeted())
      expect(await waitJobs(first, ch.id, 1)).toHaveLength(1)
      await first.close() // the worker never ran
      const second = await testService({ dataDir: dir, env: ALLOW, driver: 'remote' })
      try {
        received.length = 0
        await deliver(second)
        expect(received.map((r) => r.verified)).toEqual([true])
        expect((await jobs(second, ch.id))[0]!.status).toBe('done')
      } finally {
        await second.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
