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
  ['remote (file:)', (f) => openRemoteDb(`file:${f}`)],
]

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
      ])
      expect(await migrate(db)).toEqual([])
      expect(await db.get("SELECT count(*) FROM sqlite_master WHERE name = 'journal'")).toEqual([1])
      await db.close()
    })
  })
}

test('the embedded driver keeps acknowledged writes across a crash of the process', async () => {
  const file = join(dir, 'crash.db')
  const script = `
    import { openEmbeddedDb } from '${join(import.meta.dir, '../../storage/db-embedded.ts')}'
    const db = openEmbeddedDb('${file}')
    await db.run('CREATE TABLE t (k TEXT)')
    await db.run("INSERT INTO t VALUES ('acknowledged')")
    process.kill(process.pid, 'SIGKILL')`
  const proc = Bun.spawn([process.execPath, '-e', script], { stdout: 'ignore', stderr: 'ignore' })
  expect(await proc.exited).not.toBe(0)
  const db = openEmbeddedDb(file)
  expect(await db.all('SELECT k FROM t')).toEqual([['acknowledged']])
  await db.close()
})
