// The journal pump: a pass publishes what was committed after its cursor as one message of events in
// journal order, then moves the cursor; a pass that lost its lease, or whose publish failed, leaves
// the cursor where it was.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { PlatformEvent } from '~/events/event'
import { createJournalPump } from '~/workers/journal-pump'
import { FLUSH_MS, LazyCursor } from '~/workers/lazy-cursor'
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

const create = async (n: number) =>
  (await t.call('POST', '/rest/v1/reference/extobjs', { token, body: { type: 'p', value: { n } } })).body.id as string

test('a pass is one message with every record after the cursor, in order; the cursor moves past them', async () => {
  await t.pumped() // what was there before is heard before the listener comes
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
  expect(await createJournalPump().step(t.workerContext(), lost.signal)).toBe(0)
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

test('a stored cursor ahead of the pump (another process held the lease meanwhile) is where it goes on from once it takes the lease again', async () => {
  const { db } = t.service.deps
  await t.run('journal-pump')
  const pump = createJournalPump()
  const context = t.workerContext()
  const signal = new AbortController().signal
  pump.leaseTaken!(context)
  while ((await pump.step(context, signal)) > 0) {} // what the service's pump has in memory only
  messages.length = 0
  await create(9)
  const second = await create(10)
  const last = await create(11)
  const ahead = (await db.get('SELECT MAX(seq) FROM journal'))![0] as number
  await db.run("UPDATE journal_cursors SET seq = ? WHERE name = 'events'", [ahead - 2])
  pump.leaseTaken!(context)
  expect(await pump.step(context, signal)).toBe(2)
  // while the lease stays here the stored cursor is not read again: the cursor in memory leads
  await db.run("UPDATE journal_cursors SET seq = ? WHERE name = 'events'", [ahead + 100])
  await create(12)
  expect(await pump.step(context, signal)).toBe(1)
  expect(messages.map((m) => (JSON.parse(m) as PlatformEvent[]).map((e) => e.data.id))[0]).toEqual([second, last])
})

test('a lazy cursor is stored at its first move, then at most every FLUSH_MS, when due on a pass with nothing new, and at stop', async () => {
  const { db } = t.service.deps
  let now = 0
  const cursor = new LazyCursor('probe', undefined, () => now)
  const stored = async () => (await db.get("SELECT seq FROM journal_cursors WHERE name = 'probe'"))?.[0] as number
  expect(await cursor.read(db)).toBe(await stored()) // made where the journal ends
  const start = await stored()
  await cursor.moved(db, start + 1)
  expect(await stored()).toBe(start + 1)
  now += FLUSH_MS - 1
  await cursor.moved(db, start + 2)
  expect(await stored()).toBe(start + 1) // in memory only
  expect(await cursor.read(db)).toBe(start + 2)
  await cursor.storeIfDue(db)
  expect(await stored()).toBe(start + 1)
  now += 1
  await cursor.storeIfDue(db)
  expect(await stored()).toBe(start + 2)
  await cursor.moved(db, start + 3)
  await cursor.flush(db) // the worker's drain, at stop
  expect(await stored()).toBe(start + 3)
  await db.run("UPDATE journal_cursors SET seq = ? WHERE name = 'probe'", [start + 10])
  expect(await cursor.read(db)).toBe(start + 3) // the lease stayed here: the stored cursor is not read again
  cursor.forget() // this process took the lease again
  expect(await cursor.read(db)).toBe(start + 10)
})
