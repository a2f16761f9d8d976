/**
 * Where a follower of the journal (the event pump, the webhook enqueueing) stands and how it learns
 * what follows: its cursor (./lazy-cursor.ts), and the records journaled lately, here or passed on by
 * another process (src/journal/recent.ts), taken from memory when they tell all and read from the
 * table otherwise.
 */
import type { JournalChangeText } from '~storage/journal'
import type { Deps } from '../deps'
import { RecentReader } from '../journal/recent'
import { LazyCursor } from './lazy-cursor'

/** What follows a follower's cursor. */
export interface Following<T> {
  /** The cursor they follow. */
  after: number
  /** From memory: the records themselves (null: read from the table). */
  kept: JournalChangeText[] | null
  rows: (T | JournalChangeText)[]
  /** The step dealt with them (published, enqueued): a table read stands for the wake-ups before it. */
  handled(): void
}

export class JournalFollower {
  readonly cursor: LazyCursor
  private readonly recent: RecentReader

  /** `startFrom`: see LazyCursor; `now`: the clock of the memory's periodic table read (tests give their own). */
  constructor(name: string, startFrom?: string, now?: () => number) {
    this.cursor = new LazyCursor(name, startFrom)
    this.recent = new RecentReader(now)
  }

  /**
   * At most `limit` records after the cursor: from memory, or `read` from the table, which waits
   * for long work to end (a purge may be under way). Nothing new stores the cursor when that is due.
   */
  async next<T>(deps: Deps, limit: number, read: (after: number) => Promise<T[]>): Promise<Following<T>> {
    const after = await this.cursor.read(deps.db)
    const mark = this.recent.mark()
    const kept = deps.longWork.idle() ? null : this.recent.after(deps.recentJournal, after, limit)
    const rows = kept ?? (await committed(deps, () => read(after)))
    const handled = () => {
      if (!kept) this.recent.read(mark)
    }
    if (rows.length === 0) {
      await this.cursor.storeIfDue(deps.db)
      handled()
    }
    return { after, kept, rows, handled }
  }

  /** This process took the lease (again): the next step reads the stored cursor and the table. */
  taken(): void {
    this.cursor.forget()
    this.recent.distrust()
  }

  /** Another process passed its commit's wake-up on: the next step reads the table. */
  elsewhere(): void {
    this.recent.distrust()
  }
}

/**
 * A read of the journal that never sees long work's uncommitted records: it runs in the same turn
 * as the check that no long work is under way (what every consumer of the journal reads through).
 */
export async function committed<T>(deps: Deps, read: () => Promise<T>): Promise<T> {
  const busy = deps.longWork.idle()
  if (busy) await busy
  return read()
}
