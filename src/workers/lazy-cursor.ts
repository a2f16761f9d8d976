/**
 * The journal cursor of a worker woken by every commit (journal-pump, webhook-enqueue), kept in
 * memory by the process that moves it and written at most every FLUSH_MS, and when the worker
 * stops (its `drain`); a pass that finds nothing new stores what is only in memory, so an idle
 * worker's stored cursor (what retention and the pump-lag metric read) catches up within a
 * schedule's period. Written after every pass, it was a write transaction of its own for each
 * of the two: at 1,000 creates a second, 1.26 cursor updates a create beside the create's own.
 * The cursor in use is the greater of the one in memory and the stored one: another process that
 * held the lease meanwhile moved the stored one on. So the stored one is read at the first pass
 * after each take of the lease (`forget`) and not again while the lease stays here: read at every
 * pass, it was the first statement of the pump's read snapshot, 6.5 % of the thread's time at
 * 1,000 creates a second. A crash loses at most FLUSH_MS of moves, and
 * that work is done again (events published twice, which websocket subscribers pass over by their
 * seq; deliveries enqueued again under the same ids, which the queue ignores), never skipped.
 */
import type { Db } from '~storage/db'
import { journalCursor, moveJournalCursor } from '~storage/journal'

/** The longest a moved cursor stays in memory only. */
export const FLUSH_MS = 250

export class LazyCursor {
  /** Where this process's work reached. */
  private seq = 0
  /** What this process last stored. */
  private stored = 0
  private storedAt = Number.NEGATIVE_INFINITY
  /** The stored cursor was read since this process took the lease: `seq` is at least it. */
  private known = false

  /**
   * `startFrom`: the cursor a new one starts at (./webhook-enqueue.ts starts at the pump's). `now`:
   * the clock of the FLUSH_MS interval (tests give their own).
   */
  constructor(
    private readonly name: string,
    private readonly startFrom?: string,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async read(db: Db): Promise<number> {
    if (this.known) return this.seq
    const stored = await journalCursor(db, this.name, this.startFrom)
    this.seq = Math.max(this.seq, stored)
    this.stored = Math.max(this.stored, stored)
    this.known = true
    return this.seq
  }

  /** This process has (again) taken the lease: another one may have moved the stored cursor meanwhile. */
  forget(): void {
    this.known = false
  }

  /** The work up to `seq` is done; stored now if the last store is FLUSH_MS old. */
  async moved(db: Db, seq: number): Promise<void> {
    this.seq = Math.max(this.seq, seq)
    await this.storeIfDue(db)
  }

  /** Stores what is only in memory if the last store is FLUSH_MS old (a pass that found nothing new). */
  async storeIfDue(db: Db): Promise<void> {
    if (this.now() - this.storedAt >= FLUSH_MS) await this.flush(db)
  }

  /** The work up to `seq` is done, and a write that committed with it stored the cursor. */
  committedWith(seq: number): void {
    this.seq = Math.max(this.seq, seq)
    this.stored = this.seq
    this.storedAt = this.now()
  }

  /** Stores what is only in memory (at stop). */
  async flush(db: Db): Promise<void> {
    if (this.seq <= this.stored) return
    const seq = this.seq
    await moveJournalCursor(db, this.name, seq)
    this.stored = Math.max(this.stored, seq)
    this.storedAt = this.now()
  }
}
