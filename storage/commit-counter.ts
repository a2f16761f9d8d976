/**
 * How the processes sharing a database file (APP_PROCESSES > 1, the admin commands) tell each other that
 * they committed: a counter in a small file beside it (`<file>-commits`), mapped shared by each of
 * them. A writer adds one after every commit, before it answers anybody; a reader compares the
 * counter with the last it saw, a memory read. Asking SQLite instead (`PRAGMA data_version`) costs
 * a read transaction, two fcntl calls and more, about the cost of a point read, on every turn of the
 * event loop. SQLite's own wal-index cannot be mapped for this: opening and closing its file in a
 * process drops every POSIX lock the process holds on it.
 *
 * Writers that do not count (a sqlite3 shell, a process killed between its commit and the count)
 * are still seen: `stale()` also asks SQLite once every CHECK_MS. When others counted commits
 * since the last time it asked and data_version has not moved, `suspect` is set: this connection
 * may be pinned to an old snapshot (./db-pinned-read.ts; a commit that wrote nothing moves the
 * count alone, so the suspicion is only a reason to look).
 */
import { closeSync, ftruncateSync, fstatSync, openSync } from 'node:fs'
import { PRIVATE_FILE } from './private-files'

/** The longest a commit that was not counted can go unseen. */
export const CHECK_MS = 1000

export class CommitCounter {
  private readonly counter: Uint32Array
  private seen: number
  private checkedAt: number
  private lastVersion: number
  /** Others counted commits since data_version was last asked. */
  private othersCommitted = false
  /** Others committed and data_version stood still; the reader clears it once it looked. */
  suspect = false

  /** `version()` is SQLite's data_version of this process's connection; `now()` a clock in milliseconds. */
  constructor(
    databaseFile: string,
    private readonly version: () => number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.checkedAt = now()
    const path = `${databaseFile}-commits`
    const fd = openSync(path, 'a', PRIVATE_FILE)
    try {
      // grows a new file to its size in zeros; a count another process already made is kept
      if (fstatSync(fd).size < 8) ftruncateSync(fd, 8)
    } finally {
      closeSync(fd)
    }
    const map = Bun.mmap(path)
    this.counter = new Uint32Array(map.buffer, map.byteOffset, 2)
    this.seen = Atomics.load(this.counter, 0)
    this.lastVersion = version()
  }

  /** Counts a commit of this process; what it already saw stays seen. */
  committed(): void {
    const before = Atomics.add(this.counter, 0, 1)
    if (before === this.seen) this.seen = before + 1
  }

  /** True when another process committed since the last call: what was read before may be stale. */
  stale(): boolean {
    const count = Atomics.load(this.counter, 0)
    let moved = count !== this.seen
    this.seen = count
    if (moved) this.othersCommitted = true
    const now = this.now()
    if (now - this.checkedAt >= CHECK_MS) {
      this.checkedAt = now
      // the count was read first: a commit it counted is in what data_version sees now
      const version = this.version()
      if (this.othersCommitted && version === this.lastVersion) this.suspect = true
      this.othersCommitted = false
      moved ||= version !== this.lastVersion
      this.lastVersion = version
    }
    return moved
  }
}
