// The write lock of a database file shared by app processes (storage/db-write-lock.ts): asked for
// without waiting in SQLite, a refusal tried again at the next turns for SPIN_MS, then after pauses,
// and a DbBusy error past the wait.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type Database from 'libsql'
import { DbBusy, tx } from '~storage/db'
import { openEmbeddedDb } from '~storage/db-embedded'
import { BusyTimeout, SPIN_MS, WriteLock } from '~storage/db-write-lock'

const turn = () => new Promise((resolve) => setImmediate(resolve))

test('a write lock held past the wait is a DbBusy error', async () => {
  const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })
  const pragmas: string[] = []
  const timeout = new BusyTimeout((sql) => pragmas.push(sql), 5000)
  const lock = new WriteLock(timeout, 40)
  const taken = lock.acquire(() => {
    throw busy
  })
  await expect(taken).rejects.toBeInstanceOf(DbBusy)
  // SQLite never waits itself: the timeout is set to none once, and stays so for the attempts after
  expect(pragmas).toEqual(['PRAGMA busy_timeout = 0'])
  expect(lock.attempt(() => {})).toBe(true)
  // a read puts it back, once; the next attempt takes it away again
  timeout.forReads()
  timeout.forReads()
  expect(lock.attempt(() => {})).toBe(true)
  expect(pragmas).toEqual(['PRAGMA busy_timeout = 0', 'PRAGMA busy_timeout = 5000', 'PRAGMA busy_timeout = 0'])
})

test('a refusal is tried again at the next turn for SPIN_MS, then after timed pauses', async () => {
  const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })
  let mono = 1000
  const lock = new WriteLock(new BusyTimeout(() => {}, 5000), 30_000, undefined, () => mono)
  const refuse = () => {
    throw busy
  }
  expect(lock.attempt(refuse)).toBe(false)
  expect(lock.pauseMs).toBe(0)
  mono += SPIN_MS - 0.1
  expect(lock.attempt(refuse)).toBe(false)
  expect(lock.pauseMs).toBe(0) // the run of refusals began at the first
  let ran = false
  lock.later(() => {
    ran = true
  })
  await turn()
  expect(ran).toBe(true) // no timer: the next turn
  mono += 0.2
  expect(lock.pauseMs).toBeGreaterThanOrEqual(1)
  // a success ends the run: the next refusal spins again
  expect(lock.attempt(() => {})).toBe(true)
  mono += 100
  expect(lock.attempt(refuse)).toBe(false)
  expect(lock.pauseMs).toBe(0)
})

test('on a shared file, writes leave SQLite no wait, and a read puts the wait for reads back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-lock-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  let conn: InstanceType<typeof Database> | undefined
  const db = openEmbeddedDb(join(dir, 'shared.db'), { shared: true, onConnection: (c) => (conn = c) })
  const timeout = () => (conn!.prepare('PRAGMA busy_timeout').raw(true).get() as number[])[0]
  await db.run('CREATE TABLE t (k INTEGER PRIMARY KEY)')
  await db.write(() => tx.run('INSERT INTO t (k) VALUES (1)'))
  expect(timeout()).toBe(0)
  await db.write(() => tx.run('INSERT INTO t (k) VALUES (2)'))
  expect(timeout()).toBe(0)
  expect(await db.get('SELECT count(*) FROM t')).toEqual([2])
  expect(timeout()).toBe(5000)
  await db.close()
})
