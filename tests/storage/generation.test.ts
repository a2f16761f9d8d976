// The database's generation changes with every write, this connection's or another's on the same
// file, and with nothing else: what was computed from reads at one generation holds while it stays.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'libsql'
import { tx } from '~storage/db'
import { openEmbeddedDb } from '~storage/db-embedded'

const dir = mkdtempSync(join(tmpdir(), 'platform-generation-'))
const file = join(dir, 'g.db')
const mine = openEmbeddedDb(file, { shared: true })
const other = openEmbeddedDb(file, { shared: true })
afterAll(async () => {
  await mine.close()
  await other.close()
  rmSync(dir, { recursive: true, force: true })
})

test('reads keep the generation; a write of this connection or of another on the file changes it', async () => {
  await mine.run('CREATE TABLE t (n INTEGER)')
  const g0 = mine.generation!()
  await mine.all('SELECT count(*) FROM t')
  await mine.allCached('SELECT count(*) FROM t', [])
  expect(mine.generation!()).toBe(g0)
  await mine.write(function* () {
    yield* tx.run('INSERT INTO t VALUES (1)')
  })
  const g1 = mine.generation!()
  expect(g1).not.toBe(g0)
  await other.write(function* () {
    yield* tx.run('INSERT INTO t VALUES (2)')
  })
  expect(mine.generation!()).not.toBe(g1)
  expect((await mine.allCached('SELECT count(*) FROM t', []))[0]![0]).toBe(2)
})

test("db.run waiting for another process's lock: a read meanwhile is not kept past its commit, and does not make it fail", async () => {
  await mine.run('CREATE TABLE r (n INTEGER)')
  await mine.run('INSERT INTO r VALUES (1)')
  for (let round = 0; round < 5; round++) {
    const holder = new Database(file, { timeout: 5000 })
    holder.exec('BEGIN IMMEDIATE') // another process's transaction holds the write lock
    const running = mine.run('UPDATE r SET n = n + 1')
    await Bun.sleep(5)
    // read while the UPDATE waits: it begins a read snapshot and is kept
    expect((await mine.allCached('SELECT n FROM r', []))[0]![0]).toBe(round + 1)
    holder.exec('ROLLBACK')
    holder.close()
    expect(
      await running.then(
        () => 'ok',
        (e: Error) => e.message,
      ),
    ).toBe('ok')
    expect((await mine.allCached('SELECT n FROM r', []))[0]![0]).toBe(round + 2)
  }
})
