// Fair claims (storage/queue-fair.ts) on real libSQL files, both drivers: round robin over the
// domains with due jobs, each domain's room, the cursor going on where the last claim stopped, and
// both statements reading the queue through its index of open jobs, never a scan.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Db, SqlValue } from '~storage/db'
import { openEmbeddedDb } from '~storage/db-embedded'
import { openRemoteDb } from '~storage/db-remote'
import { migrate } from '~storage/migrate'
import { enqueueJob, type NewJob } from '~storage/queue'
import { claimFairly, type Shares } from '~storage/queue-fair'

const dir = mkdtempSync(join(tmpdir(), 'platform-queue-fair-'))
const opened: Db[] = []
afterAll(async () => {
  for (const db of opened) await db.close()
  rmSync(dir, { recursive: true, force: true })
})

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const KIND = 'test-job'
const drivers: [string, (file: string) => Db][] = [
  ['embedded', (f) => openEmbeddedDb(f)],
  ['remote (file:)', (f) => openRemoteDb(`file:${f}`)],
]

for (const [name, open] of drivers) {
  describe(`fair claims: ${name}`, () => {
    async function fresh() {
      const db = open(join(dir, `${crypto.randomUUID()}.db`))
      opened.push(db)
      await migrate(db)
      return db
    }
    /** `n` jobs of a domain, due from `runAt` on, the oldest first. */
    const add = (db: Db, domain: string, n: number, job: Partial<NewJob> = {}) =>
      db.write(function* () {
        for (let i = 0; i < n; i++)
          yield* enqueueJob({ kind: KIND, domain, payload: { i }, runAt: T0 - 1000 + i, ...job }, 'x')
      })
    const shares = (s: Partial<Shares> = {}): Shares => ({ after: '', room: () => 1e9, full: [], ...s })
    const claim = (db: Db, limit: number, s?: Partial<Shares>) => claimFairly(db, KIND, T0, T0 + 1000, limit, shares(s))
    const count = (domains: string[]) =>
      Object.fromEntries([...new Set(domains)].map((d) => [d, domains.filter((x) => x === d).length]))

    test("one domain's older backlog takes a share, not the claim", async () => {
      const db = await fresh()
      await add(db, 'a', 20, { runAt: T0 - 10_000 }) // older than everything else
      await add(db, 'b', 2)
      await add(db, 'c', 1)
      await add(db, 'd', 3, { runAt: T0 + 1 }) // not due
      const { jobs, after } = await claim(db, 6)
      expect(count(jobs.map((j) => j.domain))).toEqual({ a: 3, b: 2, c: 1 })
      expect(after).toBe('c')
      expect(jobs.filter((j) => j.domain === 'a').map((j) => j.payload.i)).toEqual([0, 1, 2]) // oldest first
    })

    test('the round robin goes on after the domain served last, and a room bounds a domain', async () => {
      const db = await fresh()
      for (const d of ['a', 'b', 'c']) await add(db, d, 5)
      let after = ''
      const order: string[] = []
      for (let i = 0; i < 4; i++) {
        const r = await claim(db, 1, { after })
        order.push(...r.jobs.map((j) => j.domain))
        after = r.after
      }
      expect(order).toEqual(['a', 'b', 'c', 'a'])
      const bounded = await claim(db, 10, { after, room: (d) => (d === 'b' ? 1 : 1e9), full: ['c'] })
      expect(count(bounded.jobs.map((j) => j.domain))).toEqual({ a: 3, b: 1 })
      expect((await claim(db, 10, { full: ['a', 'b', 'c'] })).jobs).toEqual([])
    })

    test('with nothing due, a claim writes nothing (answers kept until the next write stay kept)', async () => {
      const db = await fresh()
      await add(db, 'a', 2, { runAt: T0 + 10 }) // not due yet
      const generation = db.generation?.()
      const writes = db.writeTransaction?.()
      expect((await claim(db, 10)).jobs).toEqual([])
      expect(db.generation?.()).toBe(generation)
      expect(db.writeTransaction?.()).toBe(writes)
    })

    test('serial jobs wait for the earlier job of their serial', async () => {
      const db = await fresh()
      await add(db, 'a', 3, { serial: 's' })
      expect((await claim(db, 10)).jobs.map((j) => j.payload.i)).toEqual([0])
      expect((await claim(db, 10)).jobs).toEqual([])
    })

    test('its statements read through the index of open jobs', async () => {
      const db = await fresh()
      await add(db, 'a', 3)
      await add(db, 'b', 3)
      const ran: { sql: string; args: SqlValue[] }[] = []
      const all = db.all.bind(db)
      db.all = (sql, args = []) => {
        ran.push({ sql, args })
        return all(sql, args)
      }
      await claim(db, 2) // two domains
      await claim(db, 2, { full: ['b'] }) // one: a statement of its own
      db.all = all
      expect(ran).toHaveLength(4)
      expect(ran[1]!.sql).not.toBe(ran[3]!.sql)
      for (const { sql, args } of ran) {
        // the claim's rows are chosen by its subquery: the update itself goes by rowid
        const select = sql.startsWith('UPDATE') ? sql.slice(sql.indexOf('SELECT'), sql.lastIndexOf(')')) : sql
        const plan = (await db.all(`EXPLAIN QUERY PLAN ${select}`, args)).map((r) => String(r[3]))
        expect(plan.some((p) => p.includes('USING INDEX queue_open'))).toBe(true)
        expect(plan.filter((p) => /^SCAN (queue|q|e)\b/.test(p))).toEqual([])
      }
    })
  })
}
