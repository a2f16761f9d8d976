/**
 * The write lock of a database file shared by the app processes of one service (APP_PROCESSES > 1). A
 * process that cannot take it at once finds another's transaction holding it, perhaps for seconds
 * (long work commits in slices); waiting in SQLite's busy handler would stop this process's event
 * loop all that time. So the lock is asked for without waiting, and a refusal is tried again after
 * a pause (growing to 50 ms) for up to WRITE_LOCK_WAIT_MS, then fails with DbBusy (a 503).
 *
 * SQLITE_BUSY_SNAPSHOT is no other process's lock: this connection reads an old snapshot, which
 * `onStaleSnapshot` ends (./db-pinned-read.ts) before the next attempt.
 */
import { DbBusy, isBusy, isStaleSnapshot } from './db'

export const WRITE_LOCK_WAIT_MS = 30_000

interface Connection {
  exec(sql: string): unknown
}

export class WriteLock {
  /** When the current run of refusals began (0: none). */
  private since = 0

  constructor(
    private readonly conn: Connection,
    private readonly busyTimeoutMs: number,
    private readonly waitMs = WRITE_LOCK_WAIT_MS,
    private readonly onStaleSnapshot: () => void = () => {},
  ) {}

  /** How long the lock has been refused without a break (0: it is not). */
  refusedForMs(now = Date.now()): number {
    return this.since ? now - this.since : 0
  }

  /** Runs `take` (a statement that takes the write lock) without waiting; false when another process holds it. */
  attempt(take: () => void): boolean {
    this.conn.exec('PRAGMA busy_timeout = 0')
    try {
      take()
      this.since = 0
      return true
    } catch (err) {
      if (!isBusy(err)) throw err
      const stale = isStaleSnapshot(err)
      if (stale) this.onStaleSnapshot()
      this.since ||= Date.now()
      if (Date.now() - this.since <= this.waitMs) return false
      this.since = 0
      throw new DbBusy(this.waitMs, stale)
    } finally {
      this.conn.exec(`PRAGMA busy_timeout = ${this.busyTimeoutMs}`)
    }
  }

  /** The pause before the next attempt: short at first, 50 ms once the wait is long. */
  get pauseMs(): number {
    return Math.min(50, 1 + Math.floor((Date.now() - this.since) / 20))
  }

  /** Takes the lock by `take`, pausing between refusals; DbBusy past the wait. */
  async acquire(take: () => void): Promise<void> {
    while (!this.attempt(take)) await Bun.sleep(this.pauseMs)
  }
}
