// What this process journaled lately, taken by the journal's followers from memory instead of read
// back: an unbroken run of seqs that holds the record after the follower's cursor (or ends at it:
// nothing new); anything else (a hole, a wake-up from another process, a lease taken, a purge, the
// periodic read) reads the table.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { systemCtx } from '~/context'
import { commit } from '~/entities/unit'
import type { PlatformEvent } from '~/events/event'
import { RecentJournal, RecentReader, TABLE_EVERY_MS } from '~/journal/recent'
import { passOnCommits } from '~/journal/relay'
import { createJournalPump } from '~/workers/journal-pump'
import type { Doc } from '~storage/doc'
import { appendJournal, type JournalChangeText, journalTextAfter } from '~storage/journal'
import { jobsOf } from '~storage/queue'
import { testService, type TestService } from '../helpers/service'

const record = (seq: number, domain = 'd'): JournalChangeText => ({
  seq,
  domain,
  dtutc: '2026-11-29T00:00:00Z',
  cmdtype: 'create',
  objtype: 'extobj',
  objid: `id${seq}`,
  obj: `{"id":"id${seq}"}`,
  prev: null,
  modifierid: 'u',
  initiator: 'user',
})
const seqs = (records: JournalChangeText[] | null) => records?.map((r) => r.seq) ?? null

test('the records kept hold the record after the cursor, up to a hole, or the database is read', () => {
  const recent = new RecentJournal()
  expect(recent.after(0, 10)).toBeNull() // nothing kept
  recent.committed([record(5), record(6)])
  recent.committed([record(7)])
  expect(seqs(recent.after(4, 10))).toEqual([5, 6, 7])
  expect(seqs(recent.after(5, 1))).toEqual([6])
  expect(recent.after(3, 10)).toBeNull() // 4 is not here
  expect(recent.after(7, 10)).toEqual([]) // the last one kept: nothing committed since follows
  // another process's commit came between: a hole at 8
  recent.committed([record(9)])
  expect(seqs(recent.after(6, 10))).toEqual([7]) // up to the hole
  expect(recent.after(7, 10)).toBeNull() // the hole right after the cursor: the table
  expect(seqs(recent.after(8, 10))).toEqual([9])
  expect(recent.after(10, 10)).toBeNull() // past the last one kept
  // the other process passes its record on: the hole is filled, and each record is kept once
  expect(recent.received([record(8, 'other')])).toBe(1)
  expect(seqs(recent.after(6, 10))).toEqual([7, 8, 9])
  expect(recent.received([record(8, 'other'), record(9)])).toBe(0)
  // handed over out of order: kept in seq order
  recent.committed([record(4)])
  expect(seqs(recent.after(3, 10))).toEqual([4, 5, 6, 7, 8, 9])
  // another process let some of its records go: nothing kept is trusted
  expect(recent.received(null)).toBe(1)
  expect(recent.after(9, 10)).toBeNull()
})

test("this process's own records are passed on once; a purge or the most kept make them lost", () => {
  const recent = new RecentJournal()
  expect(recent.takeUnrelayed()).toEqual([])
  recent.committed([record(1), record(2)])
  recent.received([record(3, 'other')]) // another process's: not passed on again
  recent.committed([record(4)])
  expect(seqs(recent.takeUnrelayed())).toEqual([1, 2, 4])
  expect(recent.takeUnrelayed()).toEqual([])
  recent.committed([record(5)])
  recent.clear() // a purge: what it journaled before may be gone
  expect(recent.takeUnrelayed()).toBeNull()
  expect(recent.takeUnrelayed()).toEqual([])
  // the holder never passes its own on: past the most kept, by count or by characters, they are lost
  recent.committed(Array.from({ length: 200_000 }, (_, i) => record(i + 10))) // one large commit, at once
  expect(recent.takeUnrelayed()).toBeNull()
  recent.committed([{ ...record(200_010), obj: 'x'.repeat(5 * 1024 * 1024) }])
  expect(recent.takeUnrelayed()).toBeNull()
})

test('after a purge here, records passed on are kept only from its next commit on (one of before may be deleted)', () => {
  const recent = new RecentJournal()
  recent.committed([record(1)])
  recent.clear()
  expect(recent.received([record(2, 'other')])).toBe(0)
  recent.committed([record(5)])
  expect(recent.received([record(3, 'other'), record(6, 'other')])).toBe(1)
  expect(seqs(recent.after(4, 10))).toEqual([5, 6])
})

test('older records go first past the most kept, by count and by characters, until a quarter is free', () => {
  const recent = new RecentJournal()
  recent.committed(Array.from({ length: 1000 }, (_, i) => record(i + 1)))
  expect(seqs(recent.after(0, 2))).toEqual([1, 2]) // the most kept, all here
  // another process's record on a full memory: new, though the oldest went for it (it wakes the followers)
  expect(recent.received([record(1001, 'other')])).toBe(1)
  expect(recent.after(250, 2)).toBeNull()
  expect(seqs(recent.after(251, 2))).toEqual([252, 253]) // 750 kept
  recent.committed(Array.from({ length: 250 }, (_, i) => record(i + 1002)))
  expect(seqs(recent.after(251, 1))).toEqual([252]) // 1,000 kept: none dropped yet
  const large = (seq: number) => ({ ...record(seq), obj: 'x'.repeat(1.5 * 1024 * 1024) })
  recent.committed([large(1502), large(1503), large(1504)])
  expect(recent.after(1501, 10)).toBeNull() // 1502 went with the records before it: 4.5 MiB were too many, 3 MiB kept
  expect(seqs(recent.after(1502, 10))).toEqual([1503, 1504])
  // five of 1 MiB: dropped down to 3 MiB, not just below the most (that would keep four)
  const mib = (seq: number) => ({ ...record(seq), obj: 'x'.repeat(1024 * 1024) })
  recent.committed([1600, 1601, 1602, 1603, 1604].map(mib))
  expect(recent.after(1600, 10)).toBeNull()
  expect(seqs(recent.after(1601, 10))).toEqual([1602, 1603, 1604])
  // one of 3.5 MiB: within the most alone, it stays when the others go
  recent.committed([{ ...record(1605), obj: 'x'.repeat(3.5 * 1024 * 1024) }])
  expect(seqs(recent.after(1604, 10))).toEqual([1605])
  // one record larger than the most alone is not kept, nor is anything before it
  recent.committed([{ ...record(1606), obj: 'x'.repeat(5 * 1024 * 1024) }])
  expect(recent.after(1605, 10)).toBeNull()
  expect(recent.after(1604, 10)).toBeNull()
  recent.committed([record(1607)])
  expect(seqs(recent.after(1606, 10))).toEqual([1607])
})

test('a follower takes from memory once a read of the table since its last distrust was handled', () => {
  const recent = new RecentJournal()
  recent.committed([record(1), record(2)])
  const reader = new RecentReader()
  expect(reader.after(recent, 0, 10)).toBeNull() // its first step reads
  reader.read(reader.mark())
  expect(seqs(reader.after(recent, 0, 10))).toEqual([1, 2])
  // a wake-up from another process while the table is read: that read may not have seen its commit
  const mark = reader.mark()
  reader.distrust()
  reader.read(mark)
  expect(reader.after(recent, 0, 10)).toBeNull()
  // a read that failed is never handed over: the next step reads again
  reader.mark()
  expect(reader.after(recent, 0, 10)).toBeNull()
  reader.read(reader.mark())
  expect(seqs(reader.after(recent, 1, 10))).toEqual([2])
})

test('a follower reads the table again TABLE_EVERY_MS after its last read began: what came unannounced is found', () => {
  let now = 0
  const recent = new RecentJournal()
  recent.committed([record(1)])
  const reader = new RecentReader(() => now)
  const mark = reader.mark()
  now += 100 // the read, and the publishing of what it read
  reader.read(mark)
  expect(reader.after(recent, 1, 10)).toEqual([]) // caught up with this process's commits
  now += TABLE_EVERY_MS - 101
  expect(reader.after(recent, 1, 10)).toEqual([])
  now += 1 // counted from when the read began
  expect(reader.after(recent, 1, 10)).toBeNull()
  reader.read(reader.mark())
  expect(reader.after(recent, 1, 10)).toEqual([])
})

let t: TestService
let token: string
let domain: string
const published: PlatformEvent[][] = []
/** The records this process passed on (src/journal/relay.ts). */
const relayed: JournalChangeText[][] = []
beforeAll(async () => {
  t = await testService({ licence: { webservice_subscr: 5 } })
  domain = (await t.createDomain('recent.master')).id
  token = await t.adminIn('recent.master')
  const { kv } = t.service.deps
  const publish = kv.publish.bind(kv)
  kv.publish = async (channel, message) => {
    if (channel.endsWith('events')) published.push(JSON.parse(message) as PlatformEvent[])
    const body = message.slice(message.indexOf(' ') + 1)
    if (channel.endsWith('journal-records') && body !== 'lost') relayed.push(JSON.parse(body))
    return publish(channel, message)
  }
})
afterAll(() => t.close())

const create = async (n: number) =>
  (await t.call('POST', '/rest/v1/reference/extobjs', { token, body: { type: 'r', value: { n } } })).body.id as string
const lastSeq = async () => (await t.deps.db.get('SELECT MAX(seq) FROM journal'))![0] as number

test('the pump publishes what this process journaled from memory, and reads what another process did', async () => {
  const { db } = t.service.deps
  const pump = createJournalPump()
  const context = t.workerContext()
  const signal = new AbortController().signal
  pump.leaseTaken!(context)
  while ((await pump.step(context, signal)) > 0) {} // reads the journal up to its end
  published.length = 0
  const first = await create(1)
  // gone from the table behind the pump's back: published all the same, so it came from memory
  await db.run('DELETE FROM journal WHERE seq = ?', [await lastSeq()])
  expect(await pump.step(context, signal)).toBe(1)
  expect(published.flat().map((e) => e.data.id)).toEqual([first])

  // a record another process journaled (written here without the write path), then one of this process
  const journalElsewhere = (objid: string) =>
    db.run(
      `INSERT INTO journal (domain, dtutc, cmdtype, objtype, objid, modifierid, modifiername, obj, initiator)
       VALUES (?, ?, 'create', 'extobj', ?, 'x', 'x', ?, 'user')`,
      [domain, new Date().toISOString(), objid, JSON.stringify({ id: objid, type: 'r' })],
    )
  await journalElsewhere('elsewhere')
  const second = await create(2)
  // the hole before this process's record sends the pump to the table, which has both
  published.length = 0
  expect(await pump.step(context, signal)).toBe(2)
  expect(published.flat().map((e) => e.data.id)).toEqual(['elsewhere', second])

  // another process journaled after this process's last record: no hole to see, its wake-up tells
  const third = await create(3)
  await journalElsewhere('later')
  pump.wokenElsewhere!(context)
  published.length = 0
  expect(await pump.step(context, signal)).toBe(2)
  expect(published.flat().map((e) => e.data.id)).toEqual([third, 'later'])
})

test("another process's records passed on are published from memory; its word that it lost some sends the pump to the table", async () => {
  const { db, signals } = t.service.deps
  const now = 0 // the pump's clock stands still: no periodic read of the table comes meanwhile
  const pump = createJournalPump(() => now)
  const context = t.workerContext()
  const signal = new AbortController().signal
  pump.leaseTaken!(context)
  while ((await pump.step(context, signal)) > 0) {} // reads the journal up to its end
  const off = pump.feed!(context)
  let raised = 0
  const quiet = signals.on('journal', () => raised++)
  const until = Date.now() + 5000
  /** A record another process journals: in the table, and in that process's memory of what it committed. */
  const elsewhere = new RecentJournal()
  const journalElsewhere = async (objid: string) => {
    await db.run(
      `INSERT INTO journal (domain, dtutc, cmdtype, objtype, objid, modifierid, modifiername, obj, initiator)
       VALUES (?, ?, 'create', 'extobj', ?, 'x', 'x', ?, 'user')`,
      [domain, new Date().toISOString(), objid, JSON.stringify({ id: objid, type: 'r' })],
    )
    const [row] = await journalTextAfter(db, (await lastSeq()) - 1, 1)
    elsewhere.committed([row!])
    return row!
  }
  try {
    const row = await journalElsewhere('passed-on')
    // gone from the table behind the pump's back: published all the same, so it came from memory
    await db.run('DELETE FROM journal WHERE seq = ?', [row.seq])
    passOnCommits({ kv: t.deps.kv, recentJournal: elsewhere })
    while (raised === 0 && Date.now() < until) await Bun.sleep(5)
    expect(raised).toBe(1) // the followers were woken as for a commit here
    published.length = 0
    expect(await pump.step(context, signal)).toBe(1)
    expect(published.flat().map((e) => e.data.id)).toEqual(['passed-on'])

    // this process's create, then another process's record it lets go (a purge there): caught up
    // with what it was told, the pump finds nothing new until that process says it lost some
    await create(30)
    expect(await pump.step(context, signal)).toBe(1)
    await journalElsewhere('let-go')
    elsewhere.clear()
    expect(await pump.step(context, signal)).toBe(0)
    passOnCommits({ kv: t.deps.kv, recentJournal: elsewhere })
    while (t.deps.recentJournal.after(row.seq + 1, 10) !== null && Date.now() < until) await Bun.sleep(5)
    published.length = 0
    expect(await pump.step(context, signal)).toBe(1)
    expect(published.flat().map((e) => e.data.id)).toEqual(['let-go'])
  } finally {
    quiet()
    off()
  }
})

test('a follower woken where another process holds the lease passes on what this process committed', async () => {
  const pump = createJournalPump()
  const context = t.workerContext()
  relayed.length = 0
  t.deps.recentJournal.takeUnrelayed() // what earlier tests committed
  const id = await create(40)
  pump.passOn!(context)
  pump.passOn!(context) // the other follower, woken by the same commit: nothing new to send
  const until = Date.now() + 5000
  while (relayed.length === 0 && Date.now() < until) await Bun.sleep(5)
  expect(relayed.map((records) => records.map((r) => JSON.parse(r.obj).id))).toEqual([[id]])
})

const drained = async (pump: ReturnType<typeof createJournalPump>) => {
  const context = t.workerContext()
  const signal = new AbortController().signal
  pump.leaseTaken!(context)
  while ((await pump.step(context, signal)) > 0) {} // reads the journal up to its end
  published.length = 0
  return () => pump.step(context, signal)
}

test('a commit nobody announced is found by the read that comes TABLE_EVERY_MS after the last', async () => {
  let now = 0
  const step = await drained(createJournalPump(() => now))
  await create(20) // caught up with it
  expect(await step()).toBe(1)
  await t.deps.db.run(
    `INSERT INTO journal (domain, dtutc, cmdtype, objtype, objid, modifierid, modifiername, obj, initiator)
     VALUES (?, ?, 'create', 'extobj', 'unannounced', 'x', 'x', '{"id":"unannounced"}', 'user')`,
    [domain, new Date().toISOString()],
  )
  expect(await step()).toBe(0) // nothing this process committed is new
  now += TABLE_EVERY_MS
  published.length = 0
  expect(await step()).toBe(1)
  expect(published.flat().map((e) => e.data.id)).toEqual(['unannounced'])
})

test('writes of one group, one of them failing, hand over the seqs that committed', async () => {
  const step = await drained(createJournalPump())
  // one turn: the three commit together; the failing one makes the others run again, journaling anew
  const ctx = systemCtx(t.deps, domain, 'test')
  let runs = 0
  const units = [0, 1, 2].map((i) =>
    commit(ctx, function* (u) {
      runs++
      yield* appendJournal(u.w, { cmdtype: 'create', objtype: 'extobj', objid: `g${i}`, obj: { id: `g${i}` } })
      if (i === 1) throw new Error('the second fails')
    }),
  )
  expect((await Promise.allSettled(units)).map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
  expect(runs).toBe(4) // g0, g1 fails and takes g0 back, g0 again, g2
  const rows = await t.deps.db.all("SELECT seq, objid FROM journal WHERE objid IN ('g0', 'g1', 'g2') ORDER BY seq")
  expect(rows.map(([, id]) => id)).toEqual(['g0', 'g2'])
  await t.deps.db.run("DELETE FROM journal WHERE objid IN ('g0', 'g2')") // from memory, then
  expect(await step()).toBe(2)
  expect(published.flat().map((e) => [e.seq, e.data.id])).toEqual(rows)
})

test("a domain's deletion empties what is kept: its records are not published from memory", async () => {
  const step = await drained(createJournalPump())
  const doomed = await t.createDomain('doomed.master')
  await t.call('POST', '/rest/v1/reference/extobjs', { token: await t.adminIn('doomed.master'), body: { type: 'r' } })
  const master = await t.login('master', 'admin', 'admin-Secret_1')
  expect((await t.call('DELETE', `/rest/v1/domain/domains/${doomed.id}`, { token: master })).status).toBe(204)
  while ((await step()) > 0) {}
  expect(published.flat().filter((e) => e.domain === doomed.id)).toEqual([])
  expect(published.flat().some((e) => e.data.id === doomed.id)).toBe(true) // the deletion itself is
})

test('webhook deliveries of what this process journaled are enqueued from memory', async () => {
  const channel = await t.call('POST', '/rest/v1/service/integration_points', {
    token,
    body: { code: 'recent', type: 'subscr', url: 'http://127.0.0.1:9/hook', opts: { roles: ['admin'] } },
  })
  expect(channel.status).toBe(200)
  const subscribed = await t.call('POST', '/rest/v1/service/webhooks', {
    token: channel.body.token_local as string,
    body: { expires: 600, events: ['modelevents.data_changed'], objects: ['extobj'] },
  })
  expect(subscribed.status).toBe(200)
  const jobs = () => jobsOf(t.deps.db, 'webhook', { payload: { channel: channel.body.id as string } }) // newest first
  await t.run('webhook-enqueue') // reads the table up to its end
  const before = (await jobs()).length
  const id = await create(8)
  await t.deps.db.run('DELETE FROM journal WHERE seq = ?', [await lastSeq()])
  expect(await t.run('webhook-enqueue')).toBe(1)
  const after = await jobs()
  expect(after).toHaveLength(before + 1)
  expect(((after[0]!.payload.envelope as Doc).data as Doc).id).toBe(id)
})
