/**
 * The journal records this process committed lately, handed over by the write path once they
 * committed (src/entities/unit.ts), so that the journal's followers (the event pump, the webhook
 * enqueueing) take what follows their cursor from memory instead of reading it back: at 1,000 lone
 * creates a second those two reads, with the read snapshot they began, were about a tenth of the
 * process's time, and they came between each commit and its event.
 *
 * Records are taken from here only when nothing else can have been journaled among them: what is
 * kept is one unbroken run of seqs (committed seqs have no holes, so a commit whose first seq does
 * not follow the last one kept had another process's commit before it: the run starts again with
 * it), and it holds the record right after the follower's cursor. What another process committed
 * after the last record here
 * leaves no hole to see, so a follower reads the database again after every wake-up another process
 * passed on to it and after it takes its lease (`RecentReader.distrust`), and whenever nothing here
 * follows its cursor (a pass on its schedule finds what came unannounced).
 */
import type { JournalChangeText } from '~storage/journal'

/** The most records kept, and the most characters of their objects: older ones go first. */
const MAX_RECORDS = 1000
const MAX_CHARS = 4 * 1024 * 1024

const charsOf = (r: JournalChangeText) => r.obj.length + (r.prev?.length ?? 0)

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
   * later one this process committed); null when the database must be read.
   */
  after(seq: number, limit: number): JournalChangeText[] | null {
    const first = this.records[0]
    if (!first) return null
    const from = seq + 1 - first.seq
    if (from < 0 || from >= this.records.length) return null
    return this.records.slice(from, from + limit)
  }

  clear(): void {
    this.records = []
    this.chars = 0
  }
}

/** One follower's use of the recent records: a pass reads the database when they may not tell all. */
export class RecentReader {
  private mustRead = true

  /** Another process may have journaled (its wake-up came, or this process took the lease): the next step reads. */
  distrust(): void {
    this.mustRead = true
  }

  /** The records after `seq` from memory when they tell all, else null: the caller reads them. */
  after(recent: Pick<RecentJournal, 'after'>, seq: number, limit: number): JournalChangeText[] | null {
    const records = this.mustRead ? null : recent.after(seq, limit)
    // a wake-up that comes while the caller reads sets it again: the read may not have seen that commit
    this.mustRead = false
    return records
  }
}
