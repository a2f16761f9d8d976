/**
 * The journal records this process committed lately, handed over by the write path once they
 * committed (src/entities/unit.ts), so that the journal's followers (the event pump, the webhook
 * enqueueing) take what follows their cursor from memory instead of reading it back: at 1,000 lone
 * creates a second those two reads, with the read snapshot they began, were about a tenth of the
 * process's time, and they came between each commit and its event.
 *
 * What is kept is one unbroken run of seqs. A follower takes from it what follows its cursor when
 * the run holds the record right after it, and nothing when its cursor is the last record kept
 * (it is caught up with this process's commits). A commit whose first seq does not follow the last
 * one kept had another process's commit before it (or rows it journaled were deleted): the run
 * starts again with it. What another process committed after the last record kept leaves no hole
 * to see, so a follower reads the table after every wake-up another process passed on to it and
 * after it takes its lease (`RecentReader.distrust`), once TABLE_EVERY_MS passed since it last did
 * (for a commit whose wake-up was lost: within that under steady commits, and at the next pass of
 * the followers' 500 ms schedule when idle), and while long work runs; a transaction that deleted
 * journal records (a domain's purge) empties what is kept.
 */
import type { JournalChangeText } from '~storage/journal'

/** The most records kept, and the most characters of their objects: older ones go first. */
const MAX_RECORDS = 1000
const MAX_CHARS = 4 * 1024 * 1024

const charsOf = (r: JournalChangeText) => r.obj.length + (r.prev?.length ?? 0)

/**
 * How long a follower takes from memory after it last read the table: half the followers' schedule
 * (500 ms), so the pass the schedule runs after a quiet spell always reads it.
 */
export const TABLE_EVERY_MS = 250

export class RecentJournal {
  /** Seqs one after another, each one more than the last. */
  private records: JournalChangeText[] = []
  private chars = 0

  /** Records of one commit, in seq order, after it committed. */
  committed(records: readonly JournalChangeText[]): void {
    for (const record of records) {
      const last = this.records.at(-1)
      if (last && record.seq !== last.seq + 1) this.clear()
      this.records.push(record)
      this.chars += charsOf(record)
    }
    let drop = 0
    while (this.records.length - drop > MAX_RECORDS || (this.chars > MAX_CHARS && drop < this.records.length))
      this.chars -= charsOf(this.records[drop++]!)
    if (drop) this.records = this.records.slice(drop)
  }

  /**
   * At most `limit` records after `seq` when the record right after it is here (and so is every
   * later one this process committed), none when `seq` is the last one here; null when the
   * database must be read.
   */
  after(seq: number, limit: number): JournalChangeText[] | null {
    const first = this.records[0]
    if (!first) return null
    const from = seq + 1 - first.seq
    if (from < 0 || from > this.records.length) return null
    return this.records.slice(from, from + limit)
  }

  clear(): void {
    this.records = []
    this.chars = 0
  }
}

/**
 * One follower's use of the recent records. A read of the table stands for the distrusts before it
 * once what it read was handled (`read`): one that fails, or a wake-up that comes while it reads,
 * leaves the next step to read again.
 */
export class RecentReader {
  private distrusts = 1
  private readThrough = 0
  /** When the last table read handled began, and when the one in progress did. */
  private tableReadAt = Number.NEGATIVE_INFINITY
  private markedAt = Number.NEGATIVE_INFINITY

  /** `now`: the clock of TABLE_EVERY_MS (tests give their own). */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Another process may have journaled (its wake-up came, or this process took the lease): the next step reads. */
  distrust(): void {
    this.distrusts++
  }

  /** Taken before a read of the table, and given to `read` once what it read was handled. */
  mark(): number {
    this.markedAt = this.now()
    return this.distrusts
  }

  read(mark: number): void {
    this.readThrough = Math.max(this.readThrough, mark)
    this.tableReadAt = Math.max(this.tableReadAt, this.markedAt)
  }

  /**
   * The records after `seq` from memory (none: nothing new) when they tell all, else null: the
   * caller reads the table.
   */
  after(recent: Pick<RecentJournal, 'after'>, seq: number, limit: number): JournalChangeText[] | null {
    if (this.readThrough !== this.distrusts || this.now() - this.tableReadAt >= TABLE_EVERY_MS) return null
    return recent.after(seq, limit)
  }
}
