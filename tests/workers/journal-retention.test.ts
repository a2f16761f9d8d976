// Journal retention: by age and by count per domain, in batches, never past what the event pump has
// published and the webhook enqueueing has read; a journal search or a websocket resume reaching back past what is kept is told so.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { DAY_MS } from '~/clock'
import { RETENTION_BATCH } from '~/workers/journal-retention'
import { testService, type TestService } from '../helpers/service'
import { openWs } from '../helpers/ws'

const EXTOBJS = '/rest/v1/reference/extobjs'
const changes = (params: Record<string, unknown>) =>
  `/rest/v1/journal/changes?params=${encodeURIComponent(JSON.stringify(params))}`

describe('by age', () => {
  let t: TestService
  let token: string
  let domain: { id: string }
  beforeAll(async () => {
    t = await testService({ listen: true, env: { JOURNAL_KEEP_DAYS: '30' } })
    domain = await t.createDomain('keep.master')
    token = await t.adminIn('keep.master')
  })
  afterAll(() => t.close())
  const create = async (n: number) =>
    (await t.call('POST', EXTOBJS, { token, body: { type: 'r', value: { n } } })).body as { id: string }

  test('records older than the limit go once published; newer ones and unpublished ones stay', async () => {
    const old = await create(1)
    const startedAt = new Date(t.clock.now()).toISOString()
    t.clock.advance(31 * DAY_MS)
    const recent = await create(2)
    // not yet published: the pump's cursor is behind, so nothing may go
    expect(await t.run('journal-retention')).toBe(0)
    await t.run('journal-pump')
    await t.settled('journal-pump') // stores its cursor (at most every FLUSH_MS while it runs)
    // nor before their webhook deliveries were enqueued (the other consumer of the journal)
    expect(await t.run('journal-retention')).toBe(0)
    await t.run('webhook-enqueue')
    await t.settled('webhook-enqueue') // stores its cursor (at most every FLUSH_MS while it runs)
    expect(await t.run('journal-retention')).toBeGreaterThan(0)
    const left = (await t.journal(domain.id)).map((r) => r.objid)
    expect(left).toContain(recent.id)
    expect(left).not.toContain(old.id)

    // a search wholly before the horizon is a 410; one reaching back past it says since when
    const gone = await t.call('GET', changes({ dtstart: startedAt, dtstop: startedAt }), { token })
    expect(gone.status).toBe(410)
    expect(gone.body.error_details).toMatchObject({ field: 'params.dtstop' })
    const partial = await t.call('GET', changes({ dtstart: startedAt }), { token })
    expect(partial.status).toBe(200)
    expect(partial.headers.get('x-journal-horizon')).toBe(gone.body.error_details.horizon)
    expect(partial.body.map((r: { objid: string }) => r.objid)).toEqual([recent.id])
    const byObject = await t.call('GET', changes({ objtype: 'extobj', objid: old.id }), { token })
    expect([byObject.body, byObject.headers.has('x-journal-horizon')]).toEqual([[], true])

    // a websocket resume from before the horizon must relist
    const c = await openWs(`${t.service.url!.replace('http', 'ws')}/ws?token=${token}`)
    c.send(['subscribe', { id: 'old', expires: 60, events: ['modelevents.data_changed'], since: 0 }])
    const [, answer] = await c.next((f) => f[0] === 'subscribe')
    expect(answer.error).toMatchObject({ error_code: 1410, error_message: expect.stringContaining('retention') })
    c.close()
  })

  test('a large backlog goes in batches of a few hundred, all in one pass', async () => {
    const at = new Date(t.clock.now() - 40 * DAY_MS).toISOString()
    const total = RETENTION_BATCH * 2 + 17
    await t.service.deps.db.write(function* () {
      for (let i = 0; i < total; i++)
        yield {
          kind: 'run' as const,
          sql: `INSERT INTO journal (domain, dtutc, cmdtype, objtype, objid, modifierid, modifiername, obj)
                VALUES (?, ?, 'create', 'extobj', ?, 'x', 'x', '{}')`,
          args: [domain.id, at, crypto.randomUUID()],
        }
    })
    // an old record inserted after newer ones still goes: the sweep reads the journal's start only
    t.service.deps.recentJournal.clear() // written past the write path: the followers read the table
    await t.run('journal-pump')
    await t.settled('journal-pump') // stores its cursor (at most every FLUSH_MS while it runs)
    await t.run('webhook-enqueue')
    await t.settled('webhook-enqueue') // stores its cursor (at most every FLUSH_MS while it runs)
    expect(await t.run('journal-retention')).toBe(total)
    expect(await t.run('journal-retention')).toBe(0)
  })
})

test('by count per domain: each domain keeps its newest records; the others are untouched', async () => {
  const t = await testService({ env: { JOURNAL_KEEP_DAYS: '0', JOURNAL_KEEP_PER_DOMAIN: '3' } })
  try {
    const a = await t.createDomain('a.master')
    const b = await t.createDomain('b.master')
    const [ta, tb] = [await t.adminIn('a.master'), await t.adminIn('b.master')]
    const made: string[] = []
    for (let n = 0; n < 5; n++)
      made.push((await t.call('POST', EXTOBJS, { token: ta, body: { type: 'a', value: { n } } })).body.id)
    await t.call('POST', EXTOBJS, { token: tb, body: { type: 'b' } })
    await t.run('journal-pump')
    await t.settled('journal-pump') // stores its cursor (at most every FLUSH_MS while it runs)
    await t.run('webhook-enqueue')
    await t.settled('webhook-enqueue') // stores its cursor (at most every FLUSH_MS while it runs)
    const ofB = await t.journal(b.id)
    expect(ofB.length).toBeLessThanOrEqual(3)
    await t.run('journal-retention')
    const leftA = (await t.journal(a.id)).map((r) => r.objid)
    expect(leftA).toEqual(made.slice(2))
    expect(await t.journal(b.id)).toEqual(ofB)
  } finally {
    await t.close()
  }
})
