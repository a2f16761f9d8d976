// How the processes sharing a database file see each other's commits: the counted ones at once, a
// writer that does not count (a sqlite3 shell) within CHECK_MS, through SQLite's data_version.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'libsql'
import { CHECK_MS, CommitCounter } from '~storage/commit-counter'

const dir = mkdtempSync(join(tmpdir(), 'platform-commit-counter-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function setup() {
  const file = join(dir, `${crypto.randomUUID()}.db`)
  const mine = new Database(file)
  mine.exec('PRAGMA journal_mode=WAL')
  mine.exec('CREATE TABLE t (v INTEGER)')
  const version = mine.prepare('PRAGMA data_version').raw(true)
  let clock = 0
  const counter = new CommitCounter(
    file,
    () => (version.get([]) as [number])[0],
    () => clock,
  )
  return { file, counter, advance: (ms: number) => (clock += ms) }
}

test('a commit counted by another process is seen by the next look; its own are not news', () => {
  const { file, counter } = setup()
  const other = new CommitCounter(file, () => 0)
  expect(counter.stale()).toBe(false)
  counter.committed()
  expect(counter.stale()).toBe(false)
  other.committed()
  expect(counter.stale()).toBe(true)
  expect(counter.stale()).toBe(false)
  // both at once: the other's count is not taken for this one's
  other.committed()
  counter.committed()
  expect(counter.stale()).toBe(true)
})

test('a writer that does not count is seen once CHECK_MS have passed', () => {
  const { file, counter, advance } = setup()
  const shell = new Database(file)
  shell.exec('INSERT INTO t VALUES (1)')
  expect(counter.stale()).toBe(false)
  advance(CHECK_MS)
  expect(counter.stale()).toBe(true)
  advance(CHECK_MS)
  expect(counter.stale()).toBe(false) // nothing since
  shell.close()
})

test("others' counted commits with data_version standing still make the counter suspect a pinned snapshot", () => {
  const { file, counter, advance } = setup()
  const other = new CommitCounter(file, () => 0)
  const writer = new Database(file)
  // a real commit, counted: data_version moves, nothing to suspect
  writer.exec('INSERT INTO t VALUES (1)')
  other.committed()
  advance(CHECK_MS)
  expect(counter.stale()).toBe(true)
  expect(counter.suspect).toBe(false)
  // this connection's own commits move the count alone: nothing to suspect either
  counter.committed()
  advance(CHECK_MS)
  counter.stale()
  expect(counter.suspect).toBe(false)
  // counted, but data_version did not move (as on a pinned connection, or a commit that wrote nothing)
  other.committed()
  advance(CHECK_MS)
  counter.stale()
  expect(counter.suspect).toBe(true)
  writer.close()
})
