// The journal pump: a pass publishes what was committed after its cursor as one message of events in
// journal order, then moves the cursor; a pass that lost its lease, or whose publish failed, leaves
// the cursor where it was.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { PlatformEvent } from '~/events/event'
import { createJournalPump } from '~/workers/journal-pump'
import { FLUSH_MS } from '~/workers/lazy-cursor'
import type { WorkerContext } from '~/workers/runner'
import { journalCursor } from '~storage/journal'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
const messages: string[] = []
/** The next publish of events fails, as when Redis is lost between the pump's read and its publish. */
let failNext = false
beforeAll(async () => {
  t = await testService()
  await t.createDomain('pump.master')
  token = await t.adminIn('pump.master')
  const { kv } = t.service.deps
  const publish = kv.publish.bind(kv)
  kv.publish = async (channel, message) => {
    if (!channel.endsWith('events')) return publish(channel, message)
    if (failNext) {
      failNext = false
      throw new Error('publish failed')
    }
    messages.push(message)
    return publish(channel, message)
  }
})
afterAll(() => t.close())

/** The context the service gives its workers (the pump uses only its deps). */
const contextOf = (t: TestService): WorkerContext => ({
  deps: t.service.deps,
  sockets: t.service.sockets,
  scripts: { refresh: async () => {} },
})

const create = async (n: number) =>
  (await t.call('POST', '/rest/v1/reference/extobjs', { token, body: { type: 'p', value: { n } } })).body.id as string

test('a pass is one message with every record after the cursor, in order; the cursor moves past them', async () => {
  await t.run('journal-pump')
  messages.length = 0
  const received: PlatformEvent[] = []
  const off = t.service.deps.bus.on((e) => received.push(e))
  const ids = [await create(1), await create(2), await create(3)]
  expect(await t.run('journal-pump')).toBe(3)
  await t.settled('journal-pump') // the cursor is stored at most every FLUSH_MS, and at stop
  expect(messages).toHaveLength(1)
  const sent = JSON.parse(messages[0]!) as PlatformEvent[]
  expect(sent.map((e) => e.data.id)).toEqual(ids)
  const seqs = sent.map((e) => e.seq!)
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
  expect(await journalCursor(t.service.deps.db, 'events')).toBe(seqs.at(-1)!)
  // Redis hands the message back to this process's subscriber
  for (const until = Date.now() + 2000; received.length < 3 && Date.now() < until; ) await Bun.sleep(2)
  expect(received.map((e) => e.data.id)).toEqual(ids)
  expect(await t.run('journal-pump')).toBe(0)
  expect(messages).toHaveLength(1)
  off()
})

test('a pass that lost its lease before publishing publishes nothing and leaves the cursor', async () => {
  await t.run('journal-pump')
  const before = await journalCursor(t.service.deps.db, 'events')
  messages.length = 0
  await create(4)
  const lost = new AbortController()
  lost.abort()
  expect(await createJournalPump().step(contextOf(t), lost.signal)).toBe(0)
  expect(messages).toHaveLength(0)
  expect(await journalCursor(t.service.deps.db, 'events')).toBe(before)
  expect(await t.run('journal-pump')).toBe(1)
})

test('a publish that fails leaves the cursor; the next pass publishes the same records', async () => {
  await t.run('journal-pump')
  const before = await journalCursor(t.service.deps.db, 'events')
  messages.length = 0
  const ids = [await create(5), await create(6)]
  failNext = true
  expect(await t.run('journal-pump')).toBe(0)
  expect(await journalCursor(t.service.deps.db, 'events')).toBe(before)
  expect(await t.run('journal-pump')).toBe(2)
  expect(messages.map((m) => (JSON.parse(m) as PlatformEvent[]).map((e) => e.data.id))).toEqual([ids])
})

test('while it runs the cursor is stored at most every FLUSH_MS, and at stop; a stored cursor ahead of it is taken', async () => {
  const { db } = t.service.deps
  await t.run('journal-pump')
  await t.settled('journal-pump')
  await Bun.sleep(FLUSH_MS) // the next move is stored at once
  await create(7)
  expect(await t.run('journal-pump')).toBe(1)
  const stored = await journalCursor(db, 'events')
  await create(8)
  expect(await t.run('journal-pump')).toBe(1) // within FLUSH_MS of the store before: kept in memory
  expect(await journalCursor(db, 'events')).toBe(stored)
  await t.settled('journal-pump') // what the stop does
  const end = await journalCursor(db, 'events')
  expect(end).toBeGreaterThan(stored)
  // another process that held the lease meanwhile published two more and stored its cursor
  messages.length = 0
  await create(9)
  await create(10)
  const last = await create(11)
  const ahead = (await db.get('SELECT MAX(seq) FROM journal'))![0] as number
  await db.run("UPDATE journal_cursors SET seq = ? WHERE name = 'events'", [ahead - 1])
  expect(await t.run('journal-pump')).toBe(1)
  expect(messages.map((m) => (JSON.parse(m) as PlatformEvent[]).map((e) => e.data.id))).toEqual([[last]])
})
