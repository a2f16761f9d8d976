// The write lock of a database file shared by app processes (storage/db-write-lock.ts): asked for
// without waiting in SQLite, a refusal tried again at the next turns for SPIN_MS, then after pauses,
// and a DbBusy error past the wait.
import { expect, test } from 'bun:test'
import { DbBusy } from '~storage/db'
import { SPIN_MS, WriteLock } from '~storage/db-write-lock'

const turn = () => new Promise((resolve) => setImmediate(resolve))

test('a write lock held past the wait is a DbBusy error', async () => {
  const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })
  const pragmas: string[] = []
  const lock = new WriteLock({ exec: (sql: string) => pragmas.push(sql) }, 5000, 40)
  const taken = lock.acquire(() => {
    throw busy
  })
  await expect(taken).rejects.toBeInstanceOf(DbBusy)
  // SQLite never waits itself, and its timeout for reads is put back after every attempt
  expect(pragmas[0]).toBe('PRAGMA busy_timeout = 0')
  expect(pragmas.at(-1)).toBe('PRAGMA busy_timeout = 5000')
  expect(lock.attempt(() => {})).toBe(true)
})

test('a refusal is tried again at the next turn for SPIN_MS, then after timed pauses', async () => {
  const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })
  let mono = 1000
  const lock = new WriteLock({ exec: () => {} }, 5000, 30_000, undefined, () => mono)
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
