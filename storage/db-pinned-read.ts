/**
 * A shared file's connection pinned to an old read snapshot, found and ended. A statement left
 * active (./db-statements.ts says how one could be) keeps the connection's read transaction open
 * past every COMMIT: the process reads what was true then (acknowledged records answer 404), its
 * writes fail (SQLITE_BUSY_SNAPSHOT, which is not another process's lock) and no checkpoint gets
 * past its snapshot, so the log grows. Seen after a sibling's kill -9 (issue 35).
 *
 * Looked for when a write is refused with SQLITE_BUSY_SNAPSHOT, when other processes commit while
 * the connection's data_version stands still (./commit-counter.ts), and every second by a worker
 * (an idle process serves no read that would look); confirmed by asking for the write lock without
 * waiting. Ended by letting go of every kept statement and collecting them (their
 * finalizers run on the next turn of the event loop), so a pin lasts at most about a second.
 */
import { isBusy, isStaleSnapshot } from './db'
import type { Statements } from './db-statements'
import type { BusyTimeout } from './db-write-lock'

/** Collections are at least this far apart: one takes milliseconds, and its finalizers a turn. */
const COLLECT_EVERY_MS = 100

interface Connection {
  exec(sql: string): unknown
  readonly inTransaction: boolean
}

export class PinnedReads {
  /** How many pins were ended so far. */
  ended = 0
  /** Since when the connection has been found pinned, without a write or a look that found it free since (0: it is not). */
  pinnedSince = 0
  private collectedAt = Number.NEGATIVE_INFINITY
  private collectLater: ReturnType<typeof setTimeout> | undefined

  constructor(
    private readonly conn: Connection,
    private readonly statements: Statements,
    /** Left with no wait, as after the write lock was asked for: reads put it back. */
    private readonly busy: BusyTimeout,
    /** Ends this connection's own read snapshot and forgets what it read. */
    private readonly forget: () => void,
    /** Told of each end, with how many statements were reset. */
    private readonly onEnd: (statements: number) => void,
  ) {}

  /**
   * Whether the connection reads an old snapshot: the write lock asked for without waiting tells,
   * twice. Once is not enough: a commit of another process landing between the two steps of taking
   * the lock (a snapshot, then the lock) gives the same answer as a pin.
   */
  pinned(): boolean {
    return this.probe() && this.probe()
  }

  private probe(): boolean {
    if (this.conn.inTransaction) return false
    this.busy.none()
    try {
      this.conn.exec('BEGIN IMMEDIATE')
      this.conn.exec('ROLLBACK')
      this.writable()
      return false
    } catch (err) {
      if (isStaleSnapshot(err)) return true
      if (isBusy(err)) return false // another process writes: the next look tells
      throw err
    }
  }

  /** Ends a pin that was found; the caller tries its read or write again. */
  end(): void {
    const now = performance.now()
    this.pinnedSince ||= now
    if (now - this.collectedAt < COLLECT_EVERY_MS) return
    this.forget()
    const statements = this.statements.clear()
    this.collect()
    this.ended++
    this.onEnd(statements)
  }

  /** The connection took the write lock: it reads the latest snapshot. */
  writable(): void {
    this.pinnedSince = 0
  }

  /** A statement that failed was let go of: it is finalized by a collection soon (at most one per COLLECT_EVERY_MS). */
  failed(): void {
    if (this.collectLater) return
    const wait = Math.max(0, this.collectedAt + COLLECT_EVERY_MS - performance.now())
    this.collectLater = setTimeout(() => {
      this.collectLater = undefined
      this.collect()
    }, wait)
    this.collectLater.unref?.()
  }

  private collect(): void {
    this.collectedAt = performance.now()
    Bun.gc(true)
  }
}
