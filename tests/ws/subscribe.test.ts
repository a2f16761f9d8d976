// /ws subscribe: change pushes filtered and masked, renewal, unsubscribe, expiry on the clock, read
// permission at delivery time, resume from a journal seq without gap or duplicate, and fan-out
// between two service instances sharing Redis and the database.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { dataChangedText } from '~/events/event'
import { journalTextAfter } from '~storage/journal'
import { testPrefix } from '../helpers/redis'
import { testService, type TestService } from '../helpers/service'
import { openWs, type WsClient } from '../helpers/ws'

let t: TestService
let token: string
let domain: { id: string; name: string }
let wsUrl: string
beforeAll(async () => {
  t = await testService({ listen: true })
  domain = await t.createDomain('sub.master')
  token = await t.adminIn('sub.master')
  wsUrl = `${t.service.url!.replace('http', 'ws')}/ws`
})
afterAll(() => t.close())

const http = (method: string, path: string, body?: unknown, as = token) => t.call(method, path, { token: as, body })
const EXTOBJS = '/rest/v1/reference/extobjs'
type Frame = [string, Record<string, unknown>]
const isEvent = (f: Frame) => f[0] === 'event'

async function subscribe(c: WsClient, payload: Record<string, unknown>) {
  c.send(['subscribe', payload])
  return (await c.next((f) => f[0] === 'subscribe' && f[1].id === (payload.id ?? null)))[1]
}

/** Commits reach subscribers through the journal pump (tests drive it). */
const pump = () => t.run('journal-pump')

describe('pushes', () => {
  test('a change of the subscribed collection arrives with seq and the journal-based data; others do not', async () => {
    const c = await openWs(`${wsUrl}?token=${token}`)
    const ack = await subscribe(c, { id: 's1', expires: 60, events: ['modelevents.data_changed'], classpath: EXTOBJS })
    expect(ack).toEqual({ id: 's1', expires: 60 })
    const created = (await http('POST', EXTOBJS, { type: 'push', value: { n: 1 } })).body
    await http('POST', '/rest/v1/domain/projects', { code: 'p1', name: 'not subscribed' })
    await pump()
    const [, event] = await c.next(isEvent)
    expect(event).toMatchObject({
      subscription: 's1',
      class: 'modelevents',
      event: 'data_changed',
      seq: expect.any(Number),
      data: { class: 'extobj', operation: 1, id: created.id, new: created, initiator_type: 'user' },
    })
    const updated = (await http('PATCH', `${EXTOBJS}/${created.id}`, { value: { n: 2 } })).body
    await http('DELETE', `${EXTOBJS}/${created.id}`)
    await pump()
    const [, upd] = await c.next(isEvent)
    expect(upd.data).toMatchObject({ operation: 2, old: created, new: updated })
    const [, del] = await c.next(isEvent)
    expect(del.data).toMatchObject({ operation: 0, id: created.id })
    expect(del.seq as number).toBeGreaterThan(upd.seq as number)
    expect(c.pending(isEvent)).toEqual([]) // the project went to nobody
    c.close()
  })

  test('the filter selects and the mask cuts; another domain never reaches the socket', async () => {
    const c = await openWs(`${wsUrl}?token=${token}`)
    await subscribe(c, {
      id: 'f',
      expires: 60,
      events: ['modelevents.data_changed'],
      classpath: EXTOBJS,
      exargs: { filter: { type: 'wanted' }, mask: 'id,type' },
    })
    await http('POST', EXTOBJS, { type: 'unwanted' })
    const wanted = (await http('POST', EXTOBJS, { type: 'wanted', value: { secret: 1 } })).body
    const other = await t.createDomain('other-sub.master')
    await t.call('POST', EXTOBJS, { token: await t.adminIn('other-sub.master'), body: { type: 'wanted' } })
    await pump()
    const [, e] = await c.next(isEvent)
    expect(e.data).toMatchObject({ id: wanted.id, new: { id: wanted.id, type: 'wanted' } })
    expect((e.data as { new: object }).new).toEqual({ id: wanted.id, type: 'wanted' })
    expect(c.pending(isEvent)).toEqual([])
    expect(other.id).not.toBe(domain.id)
    c.close()
  })

  test('renewal with other terms replaces them; expires 0 unsubscribes; a lapsed subscription is silent', async () => {
    const c = await openWs(`${wsUrl}?token=${token}`)
    await subscribe(c, { id: 'r', expires: 60, events: ['modelevents.data_changed'], classpath: EXTOBJS })
    await subscribe(c, {
      id: 'r',
      expires: 60,
      events: ['modelevents.data_changed'],
      classpath: '/rest/v1/domain/projects',
    })
    await http('POST', EXTOBJS, { type: 'ignored now' })
    const project = (await http('POST', '/rest/v1/domain/projects', { code: 'p2', name: 'seen' })).body
    await pump()
    expect((await c.next(isEvent))[1].data).toMatchObject({ class: 'project', id: project.id })
    expect(c.pending(isEvent)).toEqual([])

    // a bare renewal keeps the terms and moves the end
    t.clock.advance(50_000)
    expect(await subscribe(c, { id: 'r', expires: 30 })).toEqual({ id: 'r', expires: 30 })
    t.clock.advance(20_000) // 70 s after the first subscribe, 20 s into the renewal
    await http('POST', '/rest/v1/domain/projects', { code: 'p3', name: 'still seen' })
    await pump()
    expect((await c.next(isEvent))[1].data).toMatchObject({ class: 'project' })
    t.clock.advance(11_000) // the renewal lapsed
    await http('POST', '/rest/v1/domain/projects', { code: 'p4', name: 'not seen' })
    await pump()

    await subscribe(c, {
      id: 'u',
      expires: 60,
      events: ['modelevents.data_changed'],
      classpath: '/rest/v1/domain/projects',
    })
    expect(await subscribe(c, { id: 'u', expires: 0 })).toEqual({ id: 'u', expires: 0 })
    await http('POST', '/rest/v1/domain/projects', { code: 'p5', name: 'nobody' })
    await pump()
    // a frame after the pushes: had any been sent, it would have come before this answer
    expect(await subscribe(c, { id: 'probe', expires: 1, events: ['custom.ping'] })).toEqual({
      id: 'probe',
      expires: 1,
    })
    expect(c.pending(isEvent)).toEqual([])
    c.close()
  })

  test("a push looks a session up once, however many of its sockets it reaches; each socket's subscription gets it", async () => {
    const sockets = await Promise.all([1, 2, 3].map(() => openWs(`${wsUrl}?token=${token}`)))
    for (const c of sockets) await subscribe(c, { id: 'many', expires: 60, events: ['modelevents.data_changed'] })
    const created = (await http('POST', EXTOBJS, { type: 'to three sockets' })).body
    const { sessions } = t.deps
    const get = sessions.get.bind(sessions)
    let lookups = 0
    sessions.get = (id) => {
      lookups++
      return get(id)
    }
    try {
      await pump()
      for (const c of sockets) expect((await c.next(isEvent))[1].data).toMatchObject({ id: created.id })
    } finally {
      sessions.get = get
    }
    expect(lookups).toBe(1)
    for (const c of sockets) c.close()
  })

  test('bad subscribe frames get an error naming the field', async () => {
    const c = await openWs(`${wsUrl}?token=${token}`)
    for (const [payload, field] of [
      [{ expires: 60, events: ['modelevents.data_changed'] }, 'id'],
      [{ id: 'x', expires: 3601, events: ['modelevents.data_changed'] }, 'expires'],
      [{ id: 'x', expires: 60 }, 'events'],
      [{ id: 'x', expires: 60, events: ['modelevents.*'] }, 'events'],
      [{ id: 'x', expires: 60, events: ['modelevents.data_changed'], classpath: '/rest/v1/nowhere' }, 'classpath'],
      [
        {
          id: 'x',
          expires: 60,
          events: ['modelevents.data_changed'],
          classpath: EXTOBJS,
          exargs: { filter: { nope: 1 } },
        },
        'filter',
      ],
      [{ id: 'x', expires: 60, events: ['modelevents.data_changed'], since: -1 }, 'since'],
    ] as const)
      expect((await subscribe(c, payload)).error).toMatchObject({ error_code: 1400, error_details: { field } })
    c.close()
  })
})

test('pushes go only to subscribers who may read the record at delivery time', async () => {
  const role = (
    await http('POST', '/rest/v1/domain/roles', { name: 'ext_reader', routes: [{ path: EXTOBJS, methods: ['GET'] }] })
  ).body
  await t.createUser(domain.id, 'sam', 'sam-Pass1', ['ext_reader'])
  const sam = await t.login('sub.master', 'sam', 'sam-Pass1')
  const c = await openWs(`${wsUrl}?token=${sam}`)
  await subscribe(c, { id: 'all', expires: 60, events: ['modelevents.data_changed'] })
  const first = (await http('POST', EXTOBJS, { type: 'readable' })).body
  await http('POST', '/rest/v1/domain/projects', { code: 'hidden', name: 'sam may not read projects' })
  await pump()
  expect((await c.next(isEvent))[1].data).toMatchObject({ id: first.id })
  await http('PATCH', `/rest/v1/domain/roles/${role.id}`, { routes: [] })
  await http('POST', EXTOBJS, { type: 'no longer readable' })
  await pump()
  expect(await subscribe(c, { id: 'probe', expires: 1, events: ['custom.ping'] })).toMatchObject({ id: 'probe' })
  expect(c.pending(isEvent)).toEqual([])
  c.close()
})

describe('resume', () => {
  test('since replays what was missed, in order, then continues live with no gap and no duplicate', async () => {
    const a = await openWs(`${wsUrl}?token=${token}`)
    const terms = { expires: 60, events: ['modelevents.data_changed'], classpath: EXTOBJS }
    await subscribe(a, { id: 'resume', ...terms })
    await http('POST', EXTOBJS, { type: 'before' })
    await pump()
    const last = (await a.next(isEvent))[1].seq as number
    a.close()
    await a.closed

    const missed = []
    for (const n of [1, 2, 3]) missed.push((await http('POST', EXTOBJS, { type: `missed-${n}` })).body.id)
    await pump() // published while nobody listened
    const b = await openWs(`${wsUrl}?token=${token}`)
    await subscribe(b, { id: 'resume', ...terms, since: last })
    const replayed = [await b.next(isEvent), await b.next(isEvent), await b.next(isEvent)]
    expect(replayed.map(([, e]) => (e.data as { id: string }).id)).toEqual(missed)
    const seqs = replayed.map(([, e]) => e.seq as number)
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y))
    // the pump publishing the same records again (a handover) sends nothing twice
    const live = (await http('POST', EXTOBJS, { type: 'live' })).body
    await pump()
    expect((await b.next(isEvent))[1].data).toMatchObject({ id: live.id })
    // as another process would, taking the pump over from an older cursor: the records after `last` again
    await t.deps.bus.publishTexts((await journalTextAfter(t.deps.db, last, 500)).map(dataChangedText))
    expect(await subscribe(b, { id: 'probe', expires: 1, events: ['custom.ping'] })).toMatchObject({ id: 'probe' })
    expect(b.pending(isEvent)).toEqual([])
    b.close()
  })

  test('a resume while long work runs in the domain replays only once it ended (its rows were not committed)', async () => {
    const b = await openWs(`${wsUrl}?token=${token}`)
    const last = (await t.deps.db.get('SELECT max(seq) FROM journal'))![0] as number
    let release = () => {}
    const work = t.deps.longWork.run({ kind: 'test', domain: domain.id }, () => new Promise<void>((r) => (release = r)))
    await Bun.sleep(5)
    const terms = { expires: 60, events: ['modelevents.data_changed'], classpath: EXTOBJS }
    b.send(['subscribe', { id: 'during', ...terms, since: last }])
    await Bun.sleep(50)
    expect(b.pending((f) => f[0] === 'subscribe')).toEqual([])
    release()
    await work
    expect((await b.next((f) => f[0] === 'subscribe' && f[1].id === 'during'))[1]).toMatchObject({ id: 'during' })
    b.close()
  })

  test('a since the journal does not know is a relist error, and the subscription is not kept', async () => {
    const c = await openWs(`${wsUrl}?token=${token}`)
    const answer = await subscribe(c, {
      id: 'ahead',
      expires: 60,
      events: ['modelevents.data_changed'],
      since: 10 ** 12,
    })
    expect(answer.error).toMatchObject({ error_code: 1410, error_message: expect.stringContaining('relist') })
    c.close()
  })
})

test('a change committed by one instance reaches a subscriber of another (Redis pub/sub)', async () => {
  const prefix = testPrefix()
  const a = await testService({ listen: true, driver: 'remote', kvPrefix: prefix })
  const b = await testService({ listen: true, driver: 'remote', kvPrefix: prefix, dataDir: a.dir, clock: a.clock })
  try {
    const shared = await a.createDomain('fan.master')
    const adminA = await a.adminIn('fan.master')
    const c = await openWs(`${b.service.url!.replace('http', 'ws')}/ws?token=${adminA}`)
    await subscribe(c, { id: 'fan', expires: 60, events: ['modelevents.data_changed'], classpath: EXTOBJS })
    const made = (await a.call('POST', EXTOBJS, { token: adminA, body: { type: 'from-a' } })).body
    await a.run('journal-pump')
    expect((await c.next(isEvent))[1].data).toMatchObject({ id: made.id })
    expect(shared.id).toBeTruthy()
    c.close()
  } finally {
    await b.close()
    await a.close()
  }
})

test('alike subscriptions on many sockets all get the event once; one that may not read is left out', async () => {
  const terms = { id: 'alike', expires: 60, events: ['modelevents.data_changed'], classpath: EXTOBJS }
  const admins = await Promise.all([1, 2, 3].map(() => openWs(`${wsUrl}?token=${token}`)))
  await t.createUser(domain.id, 'nina', 'nina-Pass1', ['user'])
  const nina = await openWs(`${wsUrl}?token=${await t.login('sub.master', 'nina', 'nina-Pass1')}`)
  for (const c of [...admins, nina]) await subscribe(c, terms)
  const made = (await http('POST', EXTOBJS, { type: 'alike' })).body
  await pump()
  for (const c of admins) {
    expect((await c.next(isEvent))[1]).toMatchObject({ subscription: 'alike', data: { id: made.id } })
    expect(await subscribe(c, { id: 'probe', expires: 1, events: ['custom.ping'] })).toMatchObject({ id: 'probe' })
    expect(c.pending(isEvent)).toEqual([])
  }
  expect(await subscribe(nina, { id: 'probe', expires: 1, events: ['custom.ping'] })).toMatchObject({ id: 'probe' })
  expect(nina.pending(isEvent)).toEqual([])
  // with nina gone, the three alike subscriptions are the whole topic: one publish reaches them all
  nina.close()
  await nina.closed
  const second = (await http('POST', EXTOBJS, { type: 'alike' })).body
  await pump()
  for (const c of admins) expect((await c.next(isEvent))[1]).toMatchObject({ data: { id: second.id } })
  for (const c of admins) c.close()
})

test('call and custom events reach the domain administrators only', async () => {
  await t.createUser(domain.id, 'cal', 'cal-Pass1', ['user'])
  const user = await openWs(`${wsUrl}?token=${await t.login('sub.master', 'cal', 'cal-Pass1')}`)
  const admin = await openWs(`${wsUrl}?token=${token}`)
  const terms = { id: 'calls', expires: 60, events: ['callevents.*', 'customevents.*', 'statesevents.*'] }
  for (const c of [user, admin]) await subscribe(c, terms)
  const time = new Date().toISOString()
  const event = (cls: string, name: string) => ({
    id: crypto.randomUUID(),
    class: cls,
    event: name,
    domain: domain.id,
    time,
    objects: [],
    data: { n: 1 },
  })
  for (const e of [event('callevents', 'call_start'), event('customevents', 'ping'), event('statesevents', 'changed')])
    await t.deps.bus.publish(e)
  const got = async (c: WsClient, n: number) => {
    const classes: unknown[] = []
    while (classes.length < n) classes.push((await c.next(isEvent))[1].class)
    return classes
  }
  expect(await got(admin, 3)).toEqual(['callevents', 'customevents', 'statesevents'])
  expect(await got(user, 1)).toEqual(['statesevents']) // published last: the others were left out
  expect(await subscribe(user, { id: 'probe', expires: 1, events: ['custom.ping'] })).toMatchObject({ id: 'probe' })
  expect(user.pending(isEvent)).toEqual([])
  for (const c of [user, admin]) c.close()
})
