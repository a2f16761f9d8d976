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

/**
 * A connection's busy timeout, set only when it changes: a PRAGMA costs 5-10 µs, and the write
 * lock set it twice a write transaction (0, then back). Asking for the lock leaves it at 0, which
 * nothing in a write transaction waits on; a read outside one puts the wait back first (`forReads`).
 */
export class BusyTimeout {
  private ms: number

  constructor(
    private readonly exec: (sql: string) => void,
    private readonly readMs: number,
  ) {
    this.ms = readMs
  }

  /** No wait: the write lock is refused at once when another process holds it. */
  none(): void {
    this.set(0)
  }

  /** Reads wait for what holds them up (another process's recovery of the log) as long as they may. */
  forReads(): void {
    this.set(this.readMs)
  }

  private set(ms: number): void {
    if (ms === this.ms) return
    this.exec(`PRAGMA busy_timeout = ${ms}`)
    this.ms = ms
  }
}

export class WriteLock {
  /** When the current run of refusals began, on `now` (null: none). */
  private since: number | null = null

  constructor(
    private readonly busy: BusyTimeout,
    private readonly waitMs = WRITE_LOCK_WAIT_MS,
    private readonly onStaleSnapshot: () => void = () => {},
    /** The clock of the waits, monotonic for the sub-millisecond SPIN_MS (tests give their own). */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** How long the lock has been refused without a break (0: it is not). */
  refusedForMs(): number {
    return this.since === null ? 0 : this.now() - this.since
  }

  /** Runs `take` (a statement that takes the write lock) without waiting; false when another process holds it. */
  attempt(take: () => void): boolean {
    this.busy.none()
    try {
      take()
      this.since = null
      return true
    } catch (err) {
      if (!isBusy(err)) throw err
      const stale = isStaleSnapshot(err)
      if (stale) this.onStaleSnapshot()
      this.since ??= this.now()
      if (this.refusedForMs() <= this.waitMs) return false
      this.since = null
      throw new DbBusy(this.waitMs, stale)
    }
  }

  /** The pause before the next attempt: none (the next turn) for SPIN_MS, then short, 50 ms once the wait is long. */
  get pauseMs(): number {
    const waited = this.refusedForMs()
    return waited < SPIN_MS ? 0 : Math.min(50, 1 + Math.floor(waited / 20))
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
