// The durable queue (storage/queue.ts) on real libSQL files, through both drivers: claims with
// leases, due times, the serial rule, lease expiry and extension, retries and failures, releasing
// every claim at start, and pruning finished jobs.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Db } from '~storage/db'
import type { Doc } from '~storage/doc'
import { openEmbeddedDb } from '~storage/db-embedded'
import { openRemoteDb } from '~storage/db-remote'
import { migrate } from '~storage/migrate'
import {
  claimJobs,
  completeJob,
  enqueueClaimedJob,
  enqueueJob,
  extendLeases,
  failJob,
  LostClaim,
  type Job,
  jobsOf,
  type NewJob,
  pruneJobs,
  releaseAllClaims,
} from '~storage/queue'

const dir = mkdtempSync(join(tmpdir(), 'platform-queue-'))
const opened: Db[] = []
afterAll(async () => {
  for (const db of opened) await db.close()
  rmSync(dir, { recursive: true, force: true })
})

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const iso = (ms: number) => new Date(ms).toISOString()
const KIND = 'test-job'
const LEASE = 1000

/**
 * Each driver opens a database file; `other` is a second connection to the same file where the
 * driver allows one (the embedded driver locks its file exclusively: one connection per process).
 */
const drivers: [string, (file: string) => Db, boolean][] = [
  ['embedded', (f) => openEmbeddedDb(f), false],
  ['remote (file:)', (f) => openRemoteDb(`file:${f}`), true],
]

for (const [name, open, twoConnections] of drivers) {
  describe(`queue: ${name}`, () => {
    async function fresh() {
      const file = join(dir, `${crypto.randomUUID()}.db`)
      const db = open(file)
      opened.push(db)
      await migrate(db)
      const other = () => {
        if (!twoConnections) return db
        const second = open(file)
        opened.push(second)
        return second
      }
      return { db, other }
    }

    const add = (db: Db, job: Partial<NewJob> = {}) =>
      db.write(() => enqueueJob({ kind: KIND, domain: 'd1', payload: { n: 1 }, runAt: T0, ...job }, iso(T0)))
    /** Claims due jobs at `at` with a lease of LEASE ms; answers their ids. */
    const claim = async (db: Db, at: number, limit = 10) =>
      (await claimJobs(db, KIND, at, at + LEASE, limit)).map((j) => j.id)
    const job = async (db: Db, id: string): Promise<Job> => (await jobsOf(db, KIND)).find((j) => j.id === id)!
    /** Finishes a job through its current claim (its id and the attempt that claimed it). */
    const complete = async (db: Db, id: string, finished: string, result?: Doc) => {
      const claim = await job(db, id)
      await db.write(() => completeJob(claim, finished, result))
    }
    const fail = async (db: Db, id: string, finished: string, error: string, retryAt: number | null) => {
      const claim = await job(db, id)
      await db.write(() => failJob(claim, finished, error, retryAt))
    }

    describe('claims', () => {
      test('a claim takes the due jobs, marks them running, and a second claim gets none of them', async () => {
        const { db } = await fresh()
        const ids = [await add(db), await add(db), await add(db)]
        const claimed = await claimJobs(db, KIND, T0, T0 + LEASE, 10)
        expect(claimed.map((j) => j.id)).toEqual(ids)
        expect(claimed[0]).toMatchObject({
          kind: KIND,
          domain: 'd1',
          payload: { n: 1 },
          status: 'running',
          attempts: 1,
        })
        expect(await claim(db, T0)).toEqual([])
      })

      test('a claim with nothing due writes nothing: answers kept until the next write stay kept', async () => {
        const { db } = await fresh()
        await add(db, { runAt: T0 + 10_000 }) // not due yet
        await add(db, { kind: 'other-kind' })
        const generation = db.generation?.()
        const writes = db.writeTransaction?.()
        expect(await claim(db, T0)).toEqual([])
        expect(db.generation?.()).toBe(generation)
        expect(db.writeTransaction?.()).toBe(writes)
        expect(await claim(db, T0 + 10_000)).toHaveLength(1)
        expect(db.generation?.()).not.toBe(generation ?? 'unknown')
      })

      test('claims made at the same time never get the same job', async () => {
        const { db, other } = await fresh()
        const ids: string[] = []
        for (let i = 0; i < 20; i++) ids.push(await add(db))
        const second = other()
        const claims = await Promise.all([
          claim(db, T0, 5),
          claim(second, T0, 5),
          claim(db, T0, 5),
          claim(second, T0, 5),
        ])
        const all = claims.flat()
        expect(new Set(all).size).toBe(all.length)
        expect(all.sort()).toEqual([...ids].sort())
      })

      test('a claim takes only jobs of its kind, the earliest due first, up to its limit', async () => {
        const { db } = await fresh()
        const late = await add(db, { runAt: T0 - 10 })
        const early = await add(db, { runAt: T0 - 20 })
        await add(db, { kind: 'other-kind', runAt: T0 - 30 })
        const last = await add(db, { runAt: T0 })
        // which jobs, not their order in the answer (RETURNING gives them in table order)
        expect((await claim(db, T0, 2)).sort()).toEqual([early, late].sort())
        expect(await claim(db, T0, 2)).toEqual([last])
      })

      test('a job not yet due is not claimed until its time', async () => {
        const { db } = await fresh()
        const id = await add(db, { runAt: T0 + 5000 })
        expect(await claim(db, T0 + 4999)).toEqual([])
        expect(await claim(db, T0 + 5000)).toEqual([id])
      })
    })

    describe('serial: jobs of one kind with the same serial run one at a time, in order', () => {
      test('a later job waits while an earlier one of its serial is pending, even when that one is not yet due', async () => {
        const { db } = await fresh()
        const first = await add(db, { serial: 's', runAt: T0 + 5000 })
        const second = await add(db, { serial: 's' })
        expect(await claim(db, T0)).toEqual([])
        expect(await claim(db, T0 + 5000)).toEqual([first])
        expect((await job(db, second)).status).toBe('pending')
      })

      test('a later job waits while the earlier one runs, and is claimed once that one is done', async () => {
        const { db } = await fresh()
        const first = await add(db, { serial: 's' })
        const second = await add(db, { serial: 's' })
        const otherSerial = await add(db, { serial: 't' })
        const noSerial = await add(db)
        expect(await claim(db, T0)).toEqual([first, otherSerial, noSerial])
        expect(await claim(db, T0)).toEqual([])
        await complete(db, first, iso(T0))
        expect(await claim(db, T0)).toEqual([second])
      })

      test('a job failed for good no longer holds back the later ones', async () => {
        const { db } = await fresh()
        const first = await add(db, { serial: 's' })
        const second = await add(db, { serial: 's' })
        expect(await claim(db, T0)).toEqual([first])
        await fail(db, first, iso(T0), 'broken', null)
        expect(await claim(db, T0)).toEqual([second])
      })

      test('an earlier job waiting for its retry still holds back the later ones', async () => {
        const { db } = await fresh()
        const first = await add(db, { serial: 's' })
        await add(db, { serial: 's' })
        await claim(db, T0)
        await fail(db, first, iso(T0), 'try later', T0 + 3000)
        expect(await claim(db, T0 + 1000)).toEqual([])
        expect(await claim(db, T0 + 3000)).toEqual([first])
      })
    })

    describe('leases', () => {
      test('a running job whose lease ended is claimable again, and its attempts count up', async () => {
        const { db } = await fresh()
        const id = await add(db)
        expect(await claim(db, T0)).toEqual([id])
        expect(await claim(db, T0 + LEASE - 1)).toEqual([])
        const [again] = await claimJobs(db, KIND, T0 + LEASE, T0 + 2 * LEASE, 10)
        expect(again).toMatchObject({ id, status: 'running', attempts: 2 })
      })

      test('a claim that was taken over (its lease ended, the job claimed again) can neither renew nor finish it', async () => {
        const { db } = await fresh()
        const id = await add(db)
        const [stale] = await claimJobs(db, KIND, T0, T0 + LEASE, 10)
        const [current] = await claimJobs(db, KIND, T0 + LEASE, T0 + 2 * LEASE, 10)
        expect(await extendLeases(db, [stale!], T0 + 10 * LEASE)).toBe(0)
        expect(db.write(() => completeJob(stale!, iso(T0)))).rejects.toBeInstanceOf(LostClaim)
        expect(db.write(() => failJob(stale!, iso(T0), 'late', null))).rejects.toBeInstanceOf(LostClaim)
        expect((await job(db, id)).status).toBe('running')
        expect(await extendLeases(db, [current!], T0 + 10 * LEASE)).toBe(1)
        await db.write(() => completeJob(current!, iso(T0 + LEASE)))
        expect((await job(db, id)).status).toBe('done')
      })

      test('extendLeases keeps a running job from being reclaimed until the new end', async () => {
        const { db } = await fresh()
        const id = await add(db)
        await claim(db, T0)
        await extendLeases(db, [await job(db, id)], T0 + 5000)
        expect(await claim(db, T0 + LEASE)).toEqual([])
        expect(await claim(db, T0 + 5000)).toEqual([id])
      })

      test('extendLeases leaves jobs that are not running alone', async () => {
        const { db } = await fresh()
        const done = await add(db)
        const later = await add(db, { runAt: T0 + 5000 })
        await claim(db, T0)
        await complete(db, done, iso(T0))
        await extendLeases(db, [await job(db, done), await job(db, later)], T0 + 1)
        expect((await job(db, done)).status).toBe('done')
        expect(await claim(db, T0 + 1)).toEqual([]) // the pending job's due time did not move
        expect(await claim(db, T0 + 5000)).toEqual([later])
      })
    })

    describe('outcomes', () => {
      test('completeJob records the job as done with its result, clearing an earlier error', async () => {
        const { db } = await fresh()
        const id = await add(db)
        await claim(db, T0)
        await fail(db, id, iso(T0), 'timeout', T0 + 10)
        await claim(db, T0 + 10)
        await complete(db, id, iso(T0 + 20), { sent: true })
        expect(await job(db, id)).toMatchObject({
          status: 'done',
          finished: iso(T0 + 20),
          error: null,
          result: { sent: true },
          attempts: 2,
        })
      })

      test('failJob with retryAt makes the job pending again, due at that time', async () => {
        const { db } = await fresh()
        const id = await add(db)
        await claim(db, T0)
        await fail(db, id, iso(T0), 'provider said 503', T0 + 30_000)
        expect(await job(db, id)).toMatchObject({ status: 'pending', error: 'provider said 503', finished: null })
        expect(await claim(db, T0 + 29_999)).toEqual([])
        const [retried] = await claimJobs(db, KIND, T0 + 30_000, T0 + 31_000, 10)
        expect(retried).toMatchObject({ id, attempts: 2 })
      })

      test('failJob with null marks the job failed for good: it is never claimed again', async () => {
        const { db } = await fresh()
        const id = await add(db)
        await claim(db, T0)
        await fail(db, id, iso(T0 + 5), 'bad address', null)
        expect(await job(db, id)).toMatchObject({ status: 'failed', error: 'bad address', finished: iso(T0 + 5) })
        expect(await claim(db, T0 + 1e12)).toEqual([])
      })

      test('a job enqueued as done needs no work: it is recorded with its result and never claimed', async () => {
        const { db } = await fresh()
        const id = await db.write(() =>
          enqueueJob({ kind: KIND, domain: 'd1', payload: {}, runAt: T0 }, iso(T0), { logged: true }),
        )
        expect(await job(db, id)).toMatchObject({ status: 'done', finished: iso(T0), result: { logged: true } })
        expect(await claim(db, T0)).toEqual([])
      })
    })

    test('releaseAllClaims makes every running job pending and due at once; finished and pending jobs stay', async () => {
      const { db } = await fresh()
      const running = [await add(db), await add(db)]
      const done = await add(db)
      const failed = await add(db)
      const waiting = await add(db, { runAt: T0 + 60_000 })
      await claimJobs(db, KIND, T0, T0 + 3_600_000, 10) // long leases: only the release frees them
      await complete(db, done, iso(T0))
      await fail(db, failed, iso(T0), 'no', null)
      expect(await releaseAllClaims(db)).toBe(2)
      for (const id of running) expect((await job(db, id)).status).toBe('pending')
      expect((await job(db, done)).status).toBe('done')
      expect((await job(db, failed)).status).toBe('failed')
      expect((await claimJobs(db, KIND, T0, T0 + 3_600_000, 10)).map((j) => j.id)).toEqual(running)
      expect(await claim(db, T0 + 60_000)).toEqual([waiting])
    })

    test('pruneJobs removes only the finished jobs that finished before the cut', async () => {
      const { db } = await fresh()
      const [oldDone, oldFailed, newDone, running, pending] = [
        await add(db),
        await add(db),
        await add(db),
        await add(db),
        await add(db, { runAt: T0 + 1e9 }),
      ]
      await claim(db, T0)
      await complete(db, oldDone, iso(T0 + 1))
      await fail(db, oldFailed, iso(T0 + 2), 'no', null)
      await complete(db, newDone, iso(T0 + 10))
      expect(await pruneJobs(db, iso(T0 + 10))).toBe(2)
      expect((await jobsOf(db, KIND)).map((j) => j.id).sort()).toEqual([newDone, running, pending].sort())
    })

    test('a job enqueued claimed runs its first attempt until its lease ends; its id is added once', async () => {
      const { db } = await fresh()
      const claimed = { id: 'handed', kind: KIND, domain: 'd1', payload: { n: 1 }, runAt: T0 }
      expect(await db.write(() => enqueueClaimedJob(claimed, iso(T0), T0 + LEASE))).toBe(true)
      expect(await db.write(() => enqueueClaimedJob(claimed, iso(T0), T0 + LEASE))).toBe(false)
      expect(await job(db, 'handed')).toMatchObject({ status: 'running', attempts: 1 })
      expect(await claim(db, T0 + LEASE - 1)).toEqual([])
      // its lease ended: another holder takes it over, and the first claim can no longer finish it
      expect(await claim(db, T0 + LEASE)).toEqual(['handed'])
      const first = { id: 'handed', attempts: 1 }
      await expect(db.write(() => completeJob(first, iso(T0 + LEASE)))).rejects.toBeInstanceOf(LostClaim)
    })

    test('the due check, the claim and the serial check read open jobs through their indexes, never a scan', async () => {
      const { db } = await fresh()
      await add(db)
      await add(db, { serial: 's' })
      const ran: string[] = []
      const [all, get] = [db.all.bind(db), db.get.bind(db)]
      db.all = (sql, args = []) => (ran.push(sql), all(sql, args))
      db.get = (sql, args = []) => (ran.push(sql), get(sql, args))
      await claim(db, T0)
      ;[db.all, db.get] = [all, get]
      expect(ran).toHaveLength(2)
      const plans = await Promise.all(
        ran.map(async (sql) => {
          const select = sql.startsWith('UPDATE') ? sql.slice(sql.indexOf('SELECT'), sql.lastIndexOf(')')) : sql
          const args = [KIND, T0, T0, T0, T0].slice(0, (select.match(/\?/g) ?? []).length)
          return (await db.all(`EXPLAIN QUERY PLAN ${select}`, args)).map((r) => String(r[3]))
        }),
      )
      const used = plans.flat()
      expect(used.filter((p) => /^SCAN /.test(p))).toEqual([])
      expect(used.some((p) => p.includes('INDEX queue_due (kind=? AND run_at<?)'))).toBe(true)
      expect(used.some((p) => p.includes('INDEX queue_serial (kind=? AND serial=? AND seq<?)'))).toBe(true)
    })
  })
}

test('a claim on a shared file waits for another connection holding the write lock, then claims', async () => {
  const file = join(dir, `${crypto.randomUUID()}.db`)
  const a = openEmbeddedDb(file, { shared: true })
  const b = openEmbeddedDb(file, { shared: true })
  opened.push(a, b)
  await migrate(a)
  await a.write(() => enqueueJob({ kind: KIND, domain: 'd1', payload: { n: 1 }, runAt: T0 }, iso(T0)))
  // a long write on a holds the file's write lock for a while, in slices
  const until = performance.now() + 300
  const holding = a.writeLong(function* () {
    while (performance.now() < until) yield { kind: 'get', sql: 'SELECT 1', args: [] }
    yield { kind: 'run', sql: 'UPDATE queue SET payload = \'{"n":2}\'', args: [] }
  })
  await Bun.sleep(20)
  // the claim writes: it waits for the lock off the event loop (in SQLite it waited on the loop, and
  // a statement refused there could stay half-run and fail a later commit)
  const claimed = await claimJobs(b, KIND, T0, T0 + LEASE, 10)
  await holding
  expect(claimed.map((j) => j.payload)).toEqual([{ n: 2 }])
})
