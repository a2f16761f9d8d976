// A statement left active keeps its connection's read transaction open past every COMMIT: the
// connection reads an old snapshot, its writes fail with SQLITE_BUSY_SNAPSHOT and checkpoints cannot
// pass it (issue 35: a cluster process stuck after its sibling's kill -9). Statements that fail are
// reset (storage/db-statements.ts); a pin from elsewhere is found and ended (storage/db-pinned-read.ts).
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'libsql'
import { openEmbeddedDb } from '~storage/db-embedded'
import { PinnedReads } from '~storage/db-pinned-read'
import { BusyTimeout } from '~storage/db-write-lock'
import { type Statement, Statements } from '~storage/db-statements'
import type { Db } from '~storage/db'
import { dbPinnedRead } from '~/workers/db-checkpoint'
import type { WorkerContext } from '~/workers/runner'

/** The worker's step reads only the database of its deps. */
const fakeContext = (db: Db) => ({ deps: { db } }) as unknown as WorkerContext

const dir = mkdtempSync(join(tmpdir(), 'platform-pinned-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function file(wal: boolean) {
  const path = join(dir, `${crypto.randomUUID()}.db`)
  const setup = new Database(path)
  if (wal) setup.exec('PRAGMA journal_mode=WAL')
  setup.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
  // more rows than the package reads ahead (100): a half-read statement is still active
  setup.exec('BEGIN')
  for (let i = 1; i <= 300; i++) setup.prepare('INSERT INTO t (v) VALUES (?)').run([`v${i}`])
  setup.exec('COMMIT')
  setup.close()
  return path
}

const statementsOf = (conn: InstanceType<typeof Database>) =>
  new Statements((sql) => conn.prepare(sql) as unknown as Statement)

test('a read that failed (SQLITE_BUSY before its first row) leaves no lock held and no old binding behind', async () => {
  // a rollback journal: a reader meets another connection's exclusive lock as SQLITE_BUSY at once
  const path = file(false)
  const reader = new Database(path, { timeout: 20 })
  const writer = new Database(path, { timeout: 20 })
  let failures = 0
  const statements = new Statements(
    (sql) => reader.prepare(sql) as unknown as Statement,
    () => failures++,
  )
  const point = 'SELECT v FROM t WHERE id = ?'
  expect(statements.first(point, [1])).toEqual(['v1']) // the schema is read: what fails next is the step
  writer.exec('BEGIN EXCLUSIVE')
  expect(() => statements.first(point, [3])).toThrow(/locked|busy/i)
  expect(() => statements.rows('SELECT v FROM t WHERE id > ?', [3])).toThrow(/locked|busy/i)
  writer.exec('COMMIT')
  expect(failures).toBe(2)
  // what failed is let go of and finalized by the collector (the service's driver asks for one)
  Bun.gc(true)
  await Bun.sleep(0)
  // the reader's own transactions end for real: the writer can take the file again
  reader.exec('BEGIN')
  expect(statements.first('SELECT count(*) FROM t', [])).toEqual([300])
  reader.exec('COMMIT')
  writer.prepare('INSERT INTO t (v) VALUES (?)').run(['new'])
  // and the failed statement answers its new arguments, not the ones it failed with
  expect(statements.first(point, [5])).toEqual(['v5'])
  // the package's get after an all of the same statement would run the all's arguments: kept apart
  expect(statements.rows(point, [7])).toEqual([['v7']])
  expect(statements.first(point, [6])).toEqual(['v6'])
  reader.close()
  writer.close()
})

test('a pinned connection is found by a write lock asked without waiting, and ended', async () => {
  const path = file(true)
  const conn = new Database(path, { timeout: 5000 })
  const other = new Database(path, { timeout: 5000 })
  const statements = statementsOf(conn)
  let ends = 0
  const pins = new PinnedReads(
    conn,
    statements,
    new BusyTimeout((sql) => conn.exec(sql), 5000),
    () => {},
    () => ends++,
  )
  expect(pins.pinned()).toBe(false)
  // a statement half read and let go of (as one that failed): it pins the snapshot until finalized
  ;(() => (conn.prepare('SELECT v FROM t').iterate() as Iterator<unknown>).next())()
  other.prepare('INSERT INTO t (v) VALUES (?)').run(['after'])
  const count = () => statements.first('SELECT count(*) FROM t', [])
  expect(count()).toEqual([300]) // the old snapshot
  expect(pins.pinned()).toBe(true)
  pins.end()
  expect(ends).toBe(1)
  await Bun.sleep(0) // finalizers of what the collection found run on the next turn
  expect(pins.pinned()).toBe(false)
  expect(count()).toEqual([301])
  conn.close()
  other.close()
})

test('the embedded driver reads past a failed read, and readiness tells a write lock refused for long', async () => {
  const path = file(true)
  const db = openEmbeddedDb(path, { shared: true })
  expect(db.writeTrouble?.()).toBeUndefined()
  // a read of a table that does not exist fails inside the driver: nothing of it stays active
  await expect(db.get('SELECT v FROM nowhere WHERE id = ?', [1])).rejects.toThrow(/no such table/)
  const other = new Database(path, { timeout: 5000 })
  other.prepare('INSERT INTO t (v) VALUES (?)').run(['x'])
  await Bun.sleep(5)
  await db.run('INSERT INTO t (v) VALUES (?)', ['mine'])
  expect(await db.get('SELECT count(*) FROM t')).toEqual([302])
  // another connection holds the write lock: this one's write waits, and readiness says so after 2 s
  other.exec('BEGIN IMMEDIATE')
  const write = db.run('INSERT INTO t (v) VALUES (?)', ['waits'])
  await Bun.sleep(2300)
  expect(db.writeTrouble?.()).toMatch(/writes refused for 2 s/)
  other.exec('COMMIT')
  await write
  expect(db.writeTrouble?.()).toBeUndefined()
  other.close()
  await db.close()
})

test('a pinned service connection is ended by the db-pinned-read worker, or by the next write', async () => {
  const path = file(true)
  let raw: InstanceType<typeof Database> | undefined
  const ended: number[] = []
  const db = openEmbeddedDb(path, {
    shared: true,
    onConnection: (conn) => (raw = conn),
    onPinEnded: (info) => ended.push(info.ended),
  })
  const other = new Database(path, { timeout: 5000 })
  const count = async () => ((await db.get('SELECT count(*) FROM t')) as [number])[0]
  const pin = () => (raw!.prepare('SELECT v FROM t').iterate() as Iterator<unknown>).next()
  // pinned, and another process commits: this connection keeps reading what was
  pin()
  other.prepare('INSERT INTO t (v) VALUES (?)').run(['a'])
  expect(await count()).toBe(300)
  expect(await dbPinnedRead.step(fakeContext(db), new AbortController().signal)).toBe(0)
  await Bun.sleep(0)
  expect(await count()).toBe(301)
  expect(ended).toEqual([1])
  // pinned again: the next write is refused with SQLITE_BUSY_SNAPSHOT, ends the pin and goes through
  pin()
  other.prepare('INSERT INTO t (v) VALUES (?)').run(['b'])
  await db.run('INSERT INTO t (v) VALUES (?)', ['mine'])
  expect(await count()).toBe(303)
  expect(ended).toEqual([1, 2])
  other.close()
  await db.close()
})

test("a list's plan leaves no snapshot behind: one that ran to its end held the connection's past every COMMIT", async () => {
  const path = file(true)
  const db = openEmbeddedDb(path, { shared: true })
  const other = new Database(path, { timeout: 5000 })
  const planned = 'EXPLAIN QUERY PLAN SELECT v FROM t WHERE v GLOB ? ORDER BY id LIMIT ?'
  for (let round = 1; round <= 2; round++) {
    // a read and a plan in one turn: one read snapshot
    const [, plan] = await Promise.all([db.get('SELECT count(*) FROM t'), db.all(planned, ['v1*', 10])])
    expect(plan.length).toBeGreaterThan(0)
    other.prepare('INSERT INTO t (v) VALUES (?)').run([`after plan ${round}`])
    await Bun.sleep(0) // the next turn reads a snapshot of its own
    expect(await db.get('SELECT count(*) FROM t WHERE v = ?', [`after plan ${round}`])).toEqual([1])
    await db.run('INSERT INTO t (v) VALUES (?)', ['mine']) // no SQLITE_BUSY_SNAPSHOT
  }
  expect(db.writeTransaction?.()).toBe(2) // the plans took no write lock
  other.close()
  await db.close()
})
