/**
 * The write lock of a database file shared by the app processes of one service (APP_PROCESSES > 1). A
 * process that cannot take it at once finds another's transaction holding it, perhaps for seconds
 * (long work commits in slices); waiting in SQLite's busy handler would stop this process's event
 * loop all that time. So the lock is asked for without waiting, and a refusal is tried again after
 * a pause (growing to 50 ms) for up to WRITE_LOCK_WAIT_MS, then fails with DbBusy (a 503). For its
 * first SPIN_MS a refusal is tried again on the next turn of the event loop instead: the other
 * process's write usually commits within a fraction of a millisecond, and the shortest timer waits
 * 1.1 ms (a refused group waited 2.2 ms at the median with two processes at 1,000 creates/s).
 *
 * SQLITE_BUSY_SNAPSHOT is no other process's lock: this connection reads an old snapshot, which
 * `onStaleSnapshot` ends (./db-pinned-read.ts) before the next attempt.
 */
import { DbBusy, isBusy, isStaleSnapshot } from './db'

export const WRITE_LOCK_WAIT_MS = 30_000
/** How long refusals are tried again at every turn of the event loop before the pauses begin. */
export const SPIN_MS = 2

interface Connection {
  exec(sql: string): unknown
}

export class WriteLock {
  /** When the current run of refusals began (0: none). */
  private since = 0
  /** The same moment on the monotonic clock, for the sub-millisecond SPIN_MS. */
  private sinceMono = 0

  constructor(
    private readonly conn: Connection,
    private readonly busyTimeoutMs: number,
    private readonly waitMs = WRITE_LOCK_WAIT_MS,
    private readonly onStaleSnapshot: () => void = () => {},
    /** The monotonic clock of SPIN_MS (tests give their own). */
    private readonly monoNow: () => number = () => performance.now(),
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
      if (!this.since) {
        this.since = Date.now()
        this.sinceMono = this.monoNow()
      }
      if (Date.now() - this.since <= this.waitMs) return false
      this.since = 0
      throw new DbBusy(this.waitMs, stale)
    } finally {
      this.conn.exec(`PRAGMA busy_timeout = ${this.busyTimeoutMs}`)
    }
  }

  /** The pause before the next attempt: none (the next turn) for SPIN_MS, then short, 50 ms once the wait is long. */
  get pauseMs(): number {
    if (this.monoNow() - this.sinceMono < SPIN_MS) return 0
    return Math.min(50, 1 + Math.floor((Date.now() - this.since) / 20))
  }

  /** Runs `again` after the pause `pauseMs` asks for. */
  later(again: () => void): void {
    const pause = this.pauseMs
    if (pause === 0) setImmediate(again)
    else setTimeout(again, pause)
  }

  /** Waits the pause `pauseMs` asks for. */
  pause(): Promise<void> {
    return new Promise((resolve) => this.later(resolve))
  }

  /** Takes the lock by `take`, pausing between refusals; DbBusy past the wait. */
  async acquire(take: () => void): Promise<void> {
    while (!this.attempt(take)) await this.pause()
  }
}
