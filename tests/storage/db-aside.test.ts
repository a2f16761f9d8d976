// Long reads in the reader thread: the event loop serves meanwhile, every write answered before the
// read is in it, a failing statement fails alone, and closing the database ends what waits.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { asideReader } from '~storage/db-aside'
import { openEmbeddedDb } from '~storage/db-embedded'

const dir = mkdtempSync(join(tmpdir(), 'platform-aside-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const open = async () => {
  const db = openEmbeddedDb(join(dir, `${crypto.randomUUID()}.db`), { shared: true })
  await db.run('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)')
  return db
}
const failureOf = (p: Promise<unknown>) =>
  p.then(
    () => 'no failure',
    (err: Error) => err.message,
  )
/** A statement that reads for a while whatever the data (about 0.3 s). */
const SLOW =
  'SELECT (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) FROM c)'

test('a long read runs in its own thread: the event loop and the connection serve meanwhile', async () => {
  const db = await open()
  let ticks = 0
  const timer = setInterval(() => ticks++, 1)
  const started = performance.now()
  const long = db.allAside(SLOW, [])
  await Bun.sleep(20)
  // answered on the event loop while the long read still runs
  expect(await db.get('SELECT count(*) FROM t')).toEqual([0])
  const [row] = await long
  const took = performance.now() - started
  clearInterval(timer)
  expect(row).toEqual([3_000_000])
  // the 1 ms timer fired through the read, not once after it
  expect(ticks).toBeGreaterThan(took / 10)
  // on the event loop the same statement holds it: the timer cannot fire until it ends
  ticks = 0
  const again = setInterval(() => ticks++, 1)
  await db.all(SLOW)
  const held = ticks
  clearInterval(again)
  expect(held).toBeLessThanOrEqual(1)
  await db.close()
})

test('what was written before the read is in it; a failing statement fails alone', async () => {
  const db = await open()
  for (let i = 0; i < 5; i++) {
    await db.run('INSERT INTO t (v) VALUES (?)', [`v${i}`])
    expect(await db.allAside('SELECT v FROM t ORDER BY k', [])).toEqual(
      Array.from({ length: i + 1 }, (_, j) => [`v${j}`]),
    )
  }
  // (`expect(…).rejects` never settles on a promise a worker's message settles, in Bun 1.4.5)
  expect(await failureOf(db.allAside('SELECT nope FROM t', []))).toMatch(/nope/)
  expect(await db.allAside('SELECT count(*) FROM t WHERE v > ?', ['v2'])).toEqual([[2]])
  expect(() => db.allAside('DELETE FROM t', [])).toThrow(/SELECT/)
  await db.close()
})

test('an answer is kept until the next write, unless a write came while it was read', async () => {
  const db = await open()
  const timed = async () => {
    const started = performance.now()
    await db.allAside(SLOW, [])
    return performance.now() - started
  }
  const first = await timed()
  expect(first).toBeGreaterThan(50)
  expect(await timed()).toBeLessThan(first / 5) // kept
  await db.run('INSERT INTO t (v) VALUES (?)', ['x'])
  expect(await timed()).toBeGreaterThan(first / 5) // read again after a write
  // a write while the statement runs: its answer may miss the write, and is not kept
  const countSlowly = `SELECT count(*), (${SLOW}) FROM t`
  const reading = db.allAside(countSlowly, [])
  await Bun.sleep(20)
  await db.run('INSERT INTO t (v) VALUES (?)', ['y'])
  expect(await reading).toEqual([[1, 3_000_000]])
  expect(await db.allAside(countSlowly, [])).toEqual([[2, 3_000_000]])
  await db.close()
}, 60_000) // four slow reads: 5-10 s alone, past 20 s on a loaded machine

test('closing the database ends the reads that wait and refuses new ones', async () => {
  const file = join(dir, `${crypto.randomUUID()}.db`)
  const db = openEmbeddedDb(file, { shared: true })
  await db.run('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)')
  const long = db.allAside(SLOW, [])
  await Bun.sleep(5)
  const closing = db.close()
  // asked while the database closes: refused, no new thread
  expect(await failureOf(db.allAside('SELECT 1', []))).toMatch(/closed/)
  await closing
  expect(await failureOf(long)).toMatch(/closed/)
})

test('a reader that cannot open its file leaves its reads to the event loop, saying so once', async () => {
  const onLoop: string[] = []
  const gone: string[] = []
  // a file that cannot be opened
  const reader = asideReader(
    join(dir, 'no-such-dir', 'x.db'),
    1000,
    async (sql) => {
      onLoop.push(sql)
      return [[42]]
    },
    (err) => gone.push(err.message),
  )
  const answers = await Promise.all([1, 2, 3].map((n) => reader.all(`SELECT ${n}`, [])))
  expect(answers).toEqual([[[42]], [[42]], [[42]]])
  expect(onLoop.sort()).toEqual(['SELECT 1', 'SELECT 2', 'SELECT 3'])
  expect(gone).toHaveLength(1)
  expect(await reader.all('SELECT 4', [])).toEqual([[42]])
  expect(gone).toHaveLength(1)
  reader.close()
})
