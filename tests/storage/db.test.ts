// The Db contract, run against both drivers: the embedded `libsql` package and @libsql/client in file: mode.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConstraintError, tx, type Db } from '~storage/db'
import { openEmbeddedDb } from '~storage/db-embedded'
import { openRemoteDb } from '~storage/db-remote'
import { migrate } from '~storage/migrate'

const dir = mkdtempSync(join(tmpdir(), 'platform-db-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const drivers: [string, (file: string) => Db][] = [
  ['embedded', (f) => openEmbeddedDb(f)],
  ['embedded, shared (APP_PROCESSES > 1)', (f) => openEmbeddedDb(f, { shared: true })],
  ['remote (file:)', (f) => openRemoteDb(`file:${f}`)],
]

describe('a shared file: two processes on one database (APP_PROCESSES > 1)', () => {
  const pair = async () => {
    const file = join(dir, `${crypto.randomUUID()}.db`)
    const a = openEmbeddedDb(file, { shared: true })
    await a.run('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)')
    await a.run('INSERT INTO t VALUES (?, ?)', ['a', 1])
    return [a, openEmbeddedDb(file, { shared: true })] as const
  }
  const turn = () => new Promise((resolve) => setImmediate(resolve))

  test('a read sees every commit of the other made before it, cached or not, within one turn as well', async () => {
    const [a, b] = await pair()
    const read = () => b.getCached('SELECT v FROM t WHERE k = ?', ['a'])
    expect(await read()).toEqual([1])
    await a.write(function* () {
      yield* tx.run('UPDATE t SET v = 2')
    })
    expect(await read()).toEqual([2])
    await a.run('UPDATE t SET v = 3')
    expect(await read()).toEqual([3])
    // b's open read snapshot of this turn is dropped once the other has committed
    expect(await b.get('SELECT v FROM t WHERE k = ?', ['a'])).toEqual([3])
    await a.run('UPDATE t SET v = 4')
    expect(await b.get('SELECT v FROM t WHERE k = ?', ['a'])).toEqual([4])
    expect(await read()).toEqual([4])
    // a write read back with `all` (UPDATE ... RETURNING) commits on its own, and counts as well
    expect(await a.all('UPDATE t SET v = 5 WHERE k = ? RETURNING v', ['a'])).toEqual([[5]])
    expect(await read()).toEqual([5])
    await a.close()
    await b.close()
  })

  test('while the other holds the write lock in a long write, writes wait off the event loop, then commit', async () => {
    const [a, b] = await pair()
    let ticks = 0
    const timer = setInterval(() => ticks++, 1)
    const long = a.writeLong(function* () {
      for (let i = 0; i < 100_000; i++) yield* tx.run('INSERT INTO t VALUES (?, ?)', [`long ${i}`, i])
    })
    await Bun.sleep(5) // its transaction holds the lock by now
    const started = performance.now()
    const writes = [
      b.write(function* () {
        yield* tx.run('INSERT INTO t VALUES (?, ?)', ['b write', 1])
      }),
      b.run('INSERT INTO t VALUES (?, ?)', ['b run', 2]),
    ]
    await long
    await Promise.all(writes)
    clearInterval(timer)
    // waiting inside SQLite would have held the loop (and a's slices) until its busy timeout
    expect(ticks).toBeGreaterThan((performance.now() - started) / 30)
    expect(await b.get('SELECT count(*) FROM t')).toEqual([100_003])
    await a.close()
    await b.close()
  })

  test('a write right after reads of the same turn commits (the snapshot ends first), and both writers commit', async () => {
    const [a, b] = await pair()
    expect(await b.get('SELECT v FROM t WHERE k = ?', ['a'])).toEqual([1])
    await a.run('UPDATE t SET v = 10')
    const writes = [a, b].flatMap((db, i) =>
      Array.from({ length: 20 }, (_, n) =>
        db.write(function* () {
          yield* tx.run('INSERT INTO t VALUES (?, ?)', [`${i}-${n}`, n])
        }),
      ),
    )
    await Promise.all(writes)
    await turn()
    expect(await a.get('SELECT count(*) FROM t')).toEqual([41])
    expect(await b.get('SELECT v FROM t WHERE k = ?', ['a'])).toEqual([10])
    await a.close()
    await b.close()
  })
})

for (const [name, open] of drivers) {
  describe(`Db: ${name}`, () => {
    const fresh = async () => {
      const db = open(join(dir, `${crypto.randomUUID()}.db`))
      await db.run('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)')
      return db
    }

    test('reads return positional rows', async () => {
      const db = await fresh()
      await db.run('INSERT INTO t VALUES (?, ?), (?, ?)', ['a', 1, 'b', 2])
      expect(await db.all('SELECT k, v FROM t ORDER BY k')).toEqual([
        ['a', 1],
        ['b', 2],
      ])
      expect(await db.get('SELECT v FROM t WHERE k = ?', ['b'])).toEqual([2])
      expect(await db.get('SELECT v FROM t WHERE k = ?', ['zz'])).toBeUndefined()
      expect((await db.run('UPDATE t SET v = v + 1')).changes).toBe(2)
      await db.close()
    })

    test('a cached point read is never stale: any kind of write is seen by the next read', async () => {
      const db = await fresh()
      await db.run('INSERT INTO t VALUES (?, ?)', ['a', 1])
      const read = () => db.getCached('SELECT v FROM t WHERE k = ?', ['a'])
      expect(await read()).toEqual([1])
      expect(await read()).toEqual([1])
      await db.run('UPDATE t SET v = 2')
      expect(await read()).toEqual([2])
      await db.write(function* () {
        yield* tx.run('UPDATE t SET v = 3')
      })
      expect(await read()).toEqual([3])
      expect(await db.all('UPDATE t SET v = 4 RETURNING v')).toEqual([[4]])
      expect(await read()).toEqual([4])
      await db.run("DELETE FROM t WHERE k = 'a'")
      expect(await read()).toBeUndefined()
      await db.run('INSERT INTO t VALUES (?, ?)', ['a', 5])
      expect(await read()).toEqual([5]) // a cached absence is forgotten too
      await db.close()
    })

    test('a cached list is never stale either: any write is seen by the next one; only SELECTs are kept', async () => {
      const db = await fresh()
      await db.run('INSERT INTO t VALUES (?, ?), (?, ?)', ['a', 1, 'b', 2])
      const page = () => db.allCached('SELECT k, v FROM t WHERE v > ? ORDER BY k', [0])
      expect(await page()).toEqual([
        ['a', 1],
        ['b', 2],
      ])
      await db.write(function* () {
        yield* tx.run('UPDATE t SET v = 0 WHERE k = ?', ['a'])
      })
      expect(await page()).toEqual([['b', 2]])
      await db.run('INSERT INTO t VALUES (?, ?)', ['c', 3])
      expect(await page()).toEqual([
        ['b', 2],
        ['c', 3],
      ])
      if (db.driver === 'embedded') expect(() => db.allCached('DELETE FROM t RETURNING k', [])).toThrow('SELECT')
      await db.close()
    })

    test('a write body commits every statement and returns its value', async () => {
      const db = await fresh()
      const result = await db.write(function* () {
        yield* tx.run('INSERT INTO t VALUES (?, ?)', ['a', 1])
        const row = yield* tx.get('SELECT v FROM t WHERE k = ?', ['a'])
        yield* tx.run('INSERT INTO t VALUES (?, ?)', ['b', (row![0] as number) + 1])
        return 'done'
      })
      expect(result).toBe('done')
      expect(await db.all('SELECT k, v FROM t ORDER BY k')).toEqual([
        ['a', 1],
        ['b', 2],
      ])
      await db.close()
    })

    test('a body that throws rolls every statement back', async () => {
      const db = await fresh()
      const failing = db.write(function* () {
        yield* tx.run('INSERT INTO t VALUES (?, ?)', ['a', 1])
        throw new Error('boom')
      })
      await expect(failing).rejects.toThrow('boom')
      expect(await db.all('SELECT * FROM t')).toEqual([])
      await db.close()
    })

    test('constraint violations surface as ConstraintError and roll back', async () => {
      const db = await fresh()
      await db.run('INSERT INTO t VALUES (?, ?)', ['a', 1])
      const err = await db
        .write(function* () {
          yield* tx.run('INSERT INTO t VALUES (?, ?)', ['b', 2])
          yield* tx.run('INSERT INTO t VALUES (?, ?)', ['a', 3])
        })
        .catch((e) => e)
      expect(err).toBeInstanceOf(ConstraintError)
      expect((err as ConstraintError).kind).toBe('unique')
      expect(await db.all('SELECT k FROM t ORDER BY k')).toEqual([['a']])
      await db.close()
    })

    test('a body can catch a failed statement and go on', async () => {
      const db = await fresh()
      await db.run('INSERT INTO t VALUES (?, ?)', ['a', 1])
      const outcome = await db.write(function* () {
        try {
          yield* tx.run('INSERT INTO t VALUES (?, ?)', ['a', 2])
          return 'inserted'
        } catch (e) {
          yield* tx.run('UPDATE t SET v = 9 WHERE k = ?', ['a'])
          return e instanceof ConstraintError ? 'updated' : 'other'
        }
      })
      expect(outcome).toBe('updated')
      expect(await db.get('SELECT v FROM t WHERE k = ?', ['a'])).toEqual([9])
      await db.close()
    })

    test('concurrent writers are serialized, none lost', async () => {
      const db = await fresh()
      await db.run('INSERT INTO t VALUES (?, ?)', ['n', 0])
      await Promise.all(
        Array.from({ length: 50 }, () =>
          db.write(function* () {
            const row = yield* tx.get('SELECT v FROM t WHERE k = ?', ['n'])
            yield* tx.run('UPDATE t SET v = ? WHERE k = ?', [(row![0] as number) + 1, 'n'])
          }),
        ),
      )
      expect(await db.get('SELECT v FROM t WHERE k = ?', ['n'])).toEqual([50])
      await db.close()
    })

    test('a long write is all or nothing, and writes asked for meanwhile commit after it', async () => {
      const db = await fresh()
      const many = (n: number, fail: boolean) =>
        function* () {
          for (let i = 0; i < n; i++) yield* tx.run('INSERT INTO t VALUES (?, ?)', [`k${i}`, i])
          if (fail) throw new Error('midway')
          return n
        }
      const failing = db.writeLong(many(20_000, true))
      const after = db.write(() => tx.run('INSERT INTO t VALUES (?, ?)', ['after', 1]))
      const direct = db.run('INSERT INTO t VALUES (?, ?)', ['direct', 1])
      await expect(failing).rejects.toThrow('midway')
      await Promise.all([after, direct])
      expect(await db.all('SELECT k FROM t ORDER BY k')).toEqual([['after'], ['direct']])
      expect(await db.writeLong(many(100, false))).toBe(100)
      expect(await db.get('SELECT count(*) FROM t')).toEqual([102])
      await db.close()
    })

    test('migrations apply once and are recorded', async () => {
      const db = open(join(dir, `${crypto.randomUUID()}.db`))
      expect(await migrate(db)).toEqual([
        '0001_core',
        '0002_directory',
        '0003_credentials',
        '0004_model',
        '0005_queue',
        '0006_sipuser_numbers',
        '0007_borderrules',
        '0008_installation',
        '0009_journal_domain_seq',
        '0010_svctasks',
        '0011_svctask_runs',
        '0012_integration_points',
        '0015_journal_horizons',
        '0016_directory_edges',
        '0017_journal_channel_tokens',
        '0018_request_keys',
        '0019_model_generations',
        '0020_model_generation_sequence',
        '0021_channel_file_usage',
        '0022_queue_open',
        '0023_border_patterns_task_sites',
        '0024_installation_secrets',
        '0025_queue_open_indexes',
      ])
      expect(await migrate(db)).toEqual([])
      expect(await db.get("SELECT count(*) FROM sqlite_master WHERE name = 'journal'")).toEqual([1])
      await db.close()
    })
  })
}

test('concurrent writes: each body commits or fails alone, in the order asked, and reads see them all', async () => {
  // the embedded driver commits the writes of one turn of the event loop together (see the test below)
  for (const [, open] of drivers) {
    const db = open(join(dir, `${crypto.randomUUID()}.db`))
    await db.run('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)')
    await db.run("INSERT INTO t VALUES ('taken', 0)")
    const writes = Array.from({ length: 60 }, (_, i) =>
      db.write(function* () {
        yield* tx.run('INSERT INTO t VALUES (?, ?)', [`k${i}`, i])
        if (i === 13) throw new Error('thirteen fails')
        if (i === 21) yield* tx.run("INSERT INTO t VALUES ('taken', 1)") // a constraint error after a write
        // a later body sees what an earlier one of its group wrote
        const seen = yield* tx.get('SELECT count(*) FROM t WHERE k = ?', [`k${Math.max(0, i - 1)}`])
        return seen![0]
      }),
    )
    const settled = await Promise.allSettled(writes)
    expect(settled.filter((r) => r.status === 'rejected').length).toBe(2)
    expect(String((settled[13] as PromiseRejectedResult).reason)).toContain('thirteen fails')
    expect((settled[21] as PromiseRejectedResult).reason).toBeInstanceOf(ConstraintError)
    expect((settled[14] as PromiseFulfilledResult<number>).value).toBe(0) // k13 was rolled back
    expect((settled[30] as PromiseFulfilledResult<number>).value).toBe(1)
    const keys = (await db.all("SELECT k FROM t WHERE k <> 'taken'")).map((r) => r[0])
    expect(keys).toHaveLength(58)
    expect(keys).not.toContain('k13')
    expect(keys).not.toContain('k21')
    expect(await db.get("SELECT v FROM t WHERE k = 'taken'")).toEqual([0])
    await db.close()
  }
})

test('the embedded driver serves timers between the slices of a long write', async () => {
  const db = openEmbeddedDb(join(dir, `${crypto.randomUUID()}.db`))
  await db.run('CREATE TABLE t (k INTEGER PRIMARY KEY)')
  let ticks = 0
  const timer = setInterval(() => ticks++, 1)
  const started = performance.now()
  await db.writeLong(function* () {
    for (let i = 0; i < 200_000; i++) yield* tx.run('INSERT INTO t VALUES (?)', [i])
  })
  clearInterval(timer)
  // one tick per slice at least: the loop was never held much longer than a slice
  expect(ticks).toBeGreaterThan((performance.now() - started) / 30)
  expect(await db.get('SELECT count(*) FROM t')).toEqual([200_000])
  await db.close()
})
