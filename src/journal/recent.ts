/**
 * The journal records committed lately, handed over by the write path once they committed
 * (src/entities/unit.ts) and, from the other processes of a cluster, passed on to the followers'
 * holder (./relay.ts), so that the journal's followers (the event pump, the webhook enqueueing)
 * take what follows their cursor from memory instead of reading it back: at 1,000 lone creates a
 * second those two reads, with the read snapshot they began, were about a tenth of the process's
 * time, and they came between each commit and its event.
 *
 * What is kept is in seq order, with holes where a record was not handed over (yet). Seqs follow
 * the commits' order, so a follower takes from it what follows its cursor when the record right
 * after it is here, up to the first hole, and nothing when its cursor is the last record kept (it
 * is caught up with the commits it was told of); a hole right after its cursor sends it to the
 * table. What another process committed after the last record kept leaves no hole to see, so a
 * follower reads the table after every wake-up another process passed on without its records and
 * after it takes its lease (`RecentReader.distrust`), once TABLE_EVERY_MS passed since it last did
 * (for a commit nobody passed on: within that under steady commits, and at the next pass of the
 * followers' 500 ms schedule when idle), and while long work runs; a transaction that deleted
 * journal records (a domain's purge) empties what is kept.
 */
import type { JournalChangeText } from '~storage/journal'

/**
 * The most records kept, and the most characters of their objects: past either, the oldest go
 * until a quarter of each is free (the newest stays if it fits alone), so the copy that drops them
 * comes once every few hundred records (dropping one a commit, it was 2.5 % of the process's time
 * at 10,000 creates a second).
 */
const MAX_RECORDS = 1000
const MAX_CHARS = 4 * 1024 * 1024
const KEPT_AFTER_DROP = 0.75

const charsOf = (r: JournalChangeText) => r.obj.length + (r.prev?.length ?? 0)

/**
 * How long a follower takes from memory after it last read the table: half the followers' schedule
 * (500 ms), so the pass the schedule runs after a quiet spell always reads it.
 */
export const TABLE_EVERY_MS = 250

export class RecentJournal {
  /** Names this process's records where they are passed on (./relay.ts): it passes over its own. */
  readonly origin = crypto.randomUUID()
  /** In seq order; a hole is a record nobody handed over (yet): another process's, or one deleted. */
  private records: JournalChangeText[] = []
  private chars = 0
  /** This process's records not yet passed on to the followers' holder (./relay.ts); null: some were lost. */
  private unrelayed: JournalChangeText[] | null = []
  private unrelayedChars = 0
  /**
   * Records passed on are kept from this seq on: after a purge here, from this process's next
   * commit on, since one of before it may be deleted (its message late) and would be published.
   */
  private receivedFrom = 0

  /** Records of one commit of this process, in seq order, after it committed. */
  committed(records: readonly JournalChangeText[]): void {
    if (this.receivedFrom === Number.POSITIVE_INFINITY) this.receivedFrom = records[0]?.seq ?? this.receivedFrom
    this.keep(records)
    if (!this.unrelayed) return
    let chars = this.unrelayedChars
    for (const record of records) chars += charsOf(record)
    // the holder never passes its records on: past the most kept, they are let go as lost
    if (this.unrelayed.length + records.length > MAX_RECORDS || chars > MAX_CHARS) this.unrelayed = null
    else {
      for (const record of records) this.unrelayed.push(record)
      this.unrelayedChars = chars
    }
  }

  /**
   * Records another process committed and passed on; how many of them were not kept yet. Null: it
   * let some go, and what it committed is not here: nothing kept is trusted (the followers read).
   */
  received(records: readonly JournalChangeText[] | null): number {
    if (!records) {
      this.forgetKept()
      return 1
    }
    return this.keep(this.receivedFrom ? records.filter((r) => r.seq >= this.receivedFrom) : records)
  }

  /**
   * This process's records since the last call, to pass on to the followers' holder: none when it
   * committed nothing since, null when some of them were let go (a purge cleared them, or the
   * holder's own ran past the most kept): the holder then keeps nothing and reads the table.
   */
  takeUnrelayed(): JournalChangeText[] | null {
    const taken = this.unrelayed
    this.unrelayed = []
    this.unrelayedChars = 0
    return taken
  }

  /**
   * At most `limit` records after `seq` when the record right after it is here, up to the first
   * hole; none when `seq` is at or past the last one here; null when the database must be read.
   */
  after(seq: number, limit: number): JournalChangeText[] | null {
    const { records } = this
    const last = records.at(-1)
    if (!last) return null
    if (seq >= last.seq) return seq === last.seq ? [] : null // past it: another process committed what follows
    let i = records.length - 1
    while (i > 0 && records[i - 1]!.seq > seq) i--
    if (records[i]!.seq !== seq + 1) return null
    let end = i + 1
    while (end < records.length && end - i < limit && records[end]!.seq === records[end - 1]!.seq + 1) end++
    return records.slice(i, end)
  }

  /** A transaction here deleted journal records: what is kept, and what is not passed on yet, may be gone. */
  clear(): void {
    this.forgetKept()
    this.unrelayed = null
    this.receivedFrom = Number.POSITIVE_INFINITY
  }

  private forgetKept(): void {
    this.records = []
    this.chars = 0
  }

  /** In seq order, each seq once; past MAX_RECORDS or MAX_CHARS, the oldest go. Says how many were new. */
  private keep(records: readonly JournalChangeText[]): number {
    let added = 0
    for (const record of records) {
      let i = this.records.length
      while (i > 0 && this.records[i - 1]!.seq > record.seq) i--
      if (i > 0 && this.records[i - 1]!.seq === record.seq) continue
      if (i === this.records.length) this.records.push(record)
      else this.records.splice(i, 0, record)
      this.chars += charsOf(record)
      added++
    }
    if (this.records.length > MAX_RECORDS || this.chars > MAX_CHARS) {
      let drop = 0
      const [keptRecords, keptChars] = [MAX_RECORDS * KEPT_AFTER_DROP, MAX_CHARS * KEPT_AFTER_DROP]
      while (drop < this.records.length - 1 && (this.records.length - drop > keptRecords || this.chars > keptChars))
        this.chars -= charsOf(this.records[drop++]!)
      if (this.chars > MAX_CHARS) [drop, this.chars] = [this.records.length, 0] // the newest alone is too large
      this.records = this.records.slice(drop)
    }
    return added
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
