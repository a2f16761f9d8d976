// Checkpoints in a process of their own: what the service's db-checkpoint worker asks for is done by
// another connection, the database file alone then holds every committed row, and once it runs the
// service's connection no longer checkpoints by itself (inside a commit).
import { afterAll, expect, test } from 'bun:test'
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'libsql'
import { serviceCommand } from '~/cluster/app-processes'
import { tx } from '~storage/db'
import { RESTART_FRAMES, RESTART_HOLD_MS } from '~storage/db-checkpointer'
import { openEmbeddedDb } from '~storage/db-embedded'
import { createLogger } from '~/log'
import { REFUSALS_WARNED_EVERY, warnOfRefusals } from '~/workers/db-checkpoint'
import { testService } from '../helpers/service'

const dir = mkdtempSync(join(tmpdir(), 'platform-checkpoint-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The rows of `t` in a copy of the database file alone (no write-ahead log beside it). */
function rowsInFileAlone(file: string): number {
  const copy = join(dir, `${crypto.randomUUID()}.db`)
  copyFileSync(file, copy)
  const conn = new Database(copy)
  try {
    return (conn.prepare('SELECT count(*) AS n FROM t').get([]) as { n: number }).n
  } catch {
    return 0 // the table itself is still only in the log
  } finally {
    conn.close()
  }
}

const insert = (db: ReturnType<typeof openEmbeddedDb>, from: number, n: number, size = 10) =>
  db.write(function* () {
    for (let i = from; i < from + n; i++) yield* tx.run('INSERT INTO t VALUES (?, ?)', [i, 'x'.repeat(size)])
  })

test('a checkpoint runs in the checkpointer; from then on commits leave the log to it', async () => {
  const file = join(dir, 'shared.db')
  const db = openEmbeddedDb(file, { shared: true, checkpointCommand: serviceCommand() })
  await db.run('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)')
  await insert(db, 0, 100)
  expect(rowsInFileAlone(file)).toBe(0)
  await db.checkpoint()
  expect(rowsInFileAlone(file)).toBe(100)
  // over 1,000 pages of log: SQLite would have checkpointed inside one of these commits
  for (let i = 0; i < 20; i++) await insert(db, 100 + i * 100, 100, 4000)
  expect(rowsInFileAlone(file)).toBe(100)
  await db.checkpoint()
  expect(rowsInFileAlone(file)).toBe(2100)
  await insert(db, 2100, 50) // after the last checkpoint
  await db.close() // the last connection to close leaves the file whole
  expect(rowsInFileAlone(file)).toBe(2150)
  expect(existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0).toBe(0)
}, 30_000)

test('a checkpointer that ended is replaced by the next checkpoint', async () => {
  const file = join(dir, 'replaced.db')
  const db = openEmbeddedDb(file, { shared: true, checkpointCommand: serviceCommand() })
  await db.run('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)')
  await db.checkpoint()
  const checkpointers = () =>
    Bun.spawnSync(['pgrep', '-P', String(process.pid)])
      .stdout.toString()
      .split('\n')
      .filter(Boolean)
      .map(Number)
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/environ`, 'latin1').includes(`PLATFORM_CHECKPOINT_FILE=${file}`)
        } catch {
          return false
        }
      })
  const [first] = checkpointers()
  expect(first).toBeDefined()
  process.kill(first!, 'SIGKILL')
  while (checkpointers().includes(first!)) await Bun.sleep(10)
  await insert(db, 0, 100)
  // the pass that finds it gone fails ("the checkpointer ended"); the next starts another, not every one from now on
  await db.checkpoint().catch(() => {})
  await db.checkpoint()
  expect(rowsInFileAlone(file)).toBe(100)
  expect(checkpointers()).toHaveLength(1)
  await db.close()
}, 30_000)

test('under writes that never pause, the log is started again instead of growing', async () => {
  const file = join(dir, 'busy.db')
  const db = openEmbeddedDb(file, { shared: true, checkpointCommand: serviceCommand() })
  await db.run('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)')
  await db.checkpoint() // the checkpointer runs from here on
  // a writer that never stops: every checkpoint finds commits made while it ran, so no writer finds
  // the log wholly copied, which is when SQLite starts it again by itself
  const page = 4096
  let next = 0
  let writing = true
  const writer = (async () => {
    while (next * 3000 < 12 * RESTART_FRAMES * page) {
      next += 10
      await insert(db, next - 10, 10, 3000)
    }
    writing = false
  })()
  while (writing) await db.checkpoint()
  await writer
  // the log file is as long as the most written between two restarts, a pass's worth or a few when a
  // pass ran slow (a quarter of what the rows hold on a quiet machine, 0.6 of it once in a full run
  // on two busy cores); without restarts it grew with every byte written: 1.7 times what the rows hold
  expect(statSync(`${file}-wal`).size).toBeLessThan(next * 3000)
  expect((await db.get('SELECT count(*) FROM t'))![0]).toBe(next)
  await db.close()
  expect(rowsInFileAlone(file)).toBe(next)
}, 60_000)

test('a restart that never ends holds the writes no longer than RESTART_HOLD_MS', async () => {
  const stuck = [process.execPath, join(import.meta.dir, '../helpers/stuck-checkpointer.ts')]
  const db = openEmbeddedDb(join(dir, 'stuck.db'), { shared: true, checkpointCommand: stuck })
  await db.run('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)')
  await db.checkpoint() // starts the checkpointer; a short log, nothing more
  const held = db.checkpoint().catch(() => {}) // a long log: writes held for a restart never answered
  let slowest = 0
  const until = performance.now() + 2 * RESTART_HOLD_MS
  for (let k = 0; performance.now() < until; k++) {
    const t0 = performance.now()
    await insert(db, k, 1)
    slowest = Math.max(slowest, performance.now() - t0)
  }
  expect(slowest).toBeGreaterThan(RESTART_HOLD_MS * 0.8) // they were held
  expect(slowest).toBeLessThan(RESTART_HOLD_MS * 2.5) // and let go
  await db.close() // ends the checkpointer, and the checkpoint with it
  await held
}, 30_000)

test('a log restarted and not written since is not restarted again', async () => {
  // the checkpointer answers one restart, then hangs on the next: a second one would hold writes
  const stuck = [process.execPath, join(import.meta.dir, '../helpers/stuck-checkpointer.ts'), '1']
  const db = openEmbeddedDb(join(dir, 'idle.db'), { shared: true, checkpointCommand: stuck })
  await db.run('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)')
  await db.checkpoint() // starts the checkpointer
  await db.checkpoint() // a long log: restarted
  // the log still has the length it had at the restart: nothing was written since
  const again = db.checkpoint()
  const t0 = performance.now()
  await insert(db, 0, 1)
  expect(performance.now() - t0).toBeLessThan(RESTART_HOLD_MS / 2)
  await again // ended without a restart, which would never have been answered
  await db.close()
}, 10_000)

test('a reader that keeps its snapshot in a long log: each refused restart is counted, until one is not', async () => {
  const file = join(dir, 'pinned.db')
  const db = openEmbeddedDb(file, { shared: true, checkpointCommand: serviceCommand() })
  await db.run('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)')
  expect(await db.checkpoint()).toEqual({ logPages: expect.any(Number), refusedRestarts: 0 })
  const reader = new Database(file, { timeout: 5000 })
  reader.exec('BEGIN')
  reader.prepare('SELECT count(*) FROM t').get([]) // its snapshot is in the log from here on
  for (let pass = 1; pass <= 3; pass++) {
    await insert(db, pass * 10_000, RESTART_FRAMES + 100, 4000) // a page each: past RESTART_FRAMES pages of log
    const state = await db.checkpoint()
    expect(state!.logPages).toBeGreaterThan(RESTART_FRAMES)
    expect(state!.refusedRestarts).toBe(pass)
  }
  reader.exec('COMMIT')
  reader.close()
  expect((await db.checkpoint())!.refusedRestarts).toBe(0)
  await db.close()
}, 30_000)

test('refused restarts are warned of once every REFUSALS_WARNED_EVERY passes while they go on', () => {
  const lines: { msg: string; log_pages: number; passes: number }[] = []
  const log = createLogger('info', (line) => lines.push(JSON.parse(line)))
  for (let passes = 0; passes <= 2 * REFUSALS_WARNED_EVERY; passes++)
    warnOfRefusals(log, { logPages: 5000 + passes, refusedRestarts: passes })
  warnOfRefusals(log, null)
  expect(lines.map((l) => [l.passes, l.log_pages])).toEqual([
    [REFUSALS_WARNED_EVERY, 5000 + REFUSALS_WARNED_EVERY],
    [2 * REFUSALS_WARNED_EVERY, 5000 + 2 * REFUSALS_WARNED_EVERY],
  ])
  expect(lines[0]!.msg).toContain('could not start again')
})

test("the service's db-checkpoint worker: one pass puts what was committed into the file", async () => {
  const t = await testService()
  const file = join(t.dir, 'platform.db')
  await t.deps.db.run('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)')
  await t.deps.db.run("INSERT INTO t VALUES (1, 'one')")
  await t.run('db-checkpoint')
  expect(rowsInFileAlone(file)).toBe(1)
  await t.close()
}, 30_000)
