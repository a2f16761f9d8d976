// The embedded driver's group commit (storage/db-group-commit.ts): the writes asked for in one turn
// commit together, a failing body is rolled back alone, and a write that comes alone runs without a
// savepoint, rolled back whole when it fails.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { tx } from '~storage/db'
import { openEmbeddedDb } from '~storage/db-embedded'

const dir = mkdtempSync(join(tmpdir(), 'platform-group-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('a group runs its bodies together; one that fails makes those before it run again, each alone, itself never', async () => {
  const db = openEmbeddedDb(join(dir, `${crypto.randomUUID()}.db`), { shared: true })
  await db.run('CREATE TABLE t (k TEXT PRIMARY KEY)')
  /** One group of `size` bodies (asked in one turn); those in `failing` throw after their insert. Calls of each body. */
  const group = async (name: string, failing: number[] = [], size = 10) => {
    const calls = Array(size).fill(0)
    const writes = calls.map((_, i) =>
      db.write(function* () {
        calls[i]++
        yield* tx.run('INSERT INTO t VALUES (?)', [`${name}${i}`])
        if (failing.includes(i)) throw new Error(`${name}${i} fails`)
        return i
      }),
    )
    const settled = await Promise.allSettled(writes)
    expect(settled.map((r) => r.status)).toEqual(calls.map((_, i) => (failing.includes(i) ? 'rejected' : 'fulfilled')))
    return calls
  }
  // a write alone that fails runs once
  expect(await group('l', [0], 1)).toEqual([1])
  // a failure first takes nothing back; the groups after it still run their bodies together
  expect(await group('e', [0])).toEqual(Array(10).fill(1))
  // the failure at 3 takes back 0-2, which run again; 4-9 run once, in a new savepoint
  expect(await group('a', [3])).toEqual([2, 2, 2, 1, 1, 1, 1, 1, 1, 1])
  // bodies ran again: the next groups run each body in its own savepoint (none runs twice) until one has no failure
  expect(await group('b', [5])).toEqual(Array(10).fill(1))
  expect(await group('c')).toEqual(Array(10).fill(1))
  // together again: two failures take back only what each savepoint held
  expect(await group('d', [2, 6])).toEqual([2, 2, 1, 2, 2, 2, 1, 1, 1, 1])
  const keys = (await db.all('SELECT k FROM t ORDER BY k')).map((r) => r[0])
  expect(keys).toHaveLength(51 - 6)
  for (const gone of ['l0', 'e0', 'a3', 'b5', 'd2', 'd6']) expect(keys).not.toContain(gone)
  await db.close()
})

test('a body that goes on after its transaction ended (an error SQLite rolled back, caught) fails its whole group', async () => {
  const db = openEmbeddedDb(join(dir, `${crypto.randomUUID()}.db`), { shared: true })
  await db.run('CREATE TABLE t (k TEXT PRIMARY KEY)')
  let lastRan = false
  const writes = [
    db.write(() => tx.run("INSERT INTO t VALUES ('first')")),
    db.write(function* () {
      yield* tx.exec('ROLLBACK') // as SQLite does itself on a full disk
    }),
    db.write(function* () {
      lastRan = true
      yield* tx.run("INSERT INTO t VALUES ('last')")
    }),
  ]
  const settled = await Promise.allSettled(writes)
  expect(settled.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected'])
  expect(lastRan).toBe(false) // nothing more runs outside the transaction
  expect(await db.all('SELECT k FROM t')).toEqual([])
  await db.close()
})

test('a write alone whose transaction ended inside it (an error SQLite rolled back, caught) fails', async () => {
  const db = openEmbeddedDb(join(dir, `${crypto.randomUUID()}.db`), { shared: true })
  await db.run('CREATE TABLE t (k TEXT PRIMARY KEY)')
  const alone = db.write(function* () {
    yield* tx.run("INSERT INTO t VALUES ('before')")
    yield* tx.exec('ROLLBACK') // as SQLite does itself on a full disk
  })
  await expect(alone).rejects.toThrow('the write transaction ended inside a body')
  expect(await db.all('SELECT k FROM t')).toEqual([])
  // a write alone that fails is rolled back whole; the next one commits as usual
  const failing = db.write(function* () {
    yield* tx.run("INSERT INTO t VALUES ('failing')")
    throw new Error('boom')
  })
  await expect(failing).rejects.toThrow('boom')
  await db.write(() => tx.run("INSERT INTO t VALUES ('next')"))
  expect(await db.all('SELECT k FROM t')).toEqual([['next']])
  await db.close()
})
