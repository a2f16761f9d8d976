/**
 * The embedded driver's writes, committed in groups: the write transactions asked for during one
 * turn of the event loop run in one SQLite transaction, and all are answered once that transaction
 * has committed. A body that fails is rolled back alone and its caller gets the error: the group's
 * bodies run inside one savepoint, and when one fails, the savepoint is rolled back and the bodies
 * run since it began run again, each inside its own (the failing one does not run again). A
 * savepoint per body from the start would cost a create a third of its SQLite time (every page it
 * changes is copied once more); after a group that ran bodies again, groups run that way until one
 * has no failure, so failing writes cost the others no more than that. A write that comes alone
 * runs without the savepoint (a failure rolls its transaction back whole). A commit costs about the
 * same for one body as for fifty (it writes each changed page once), so under load this multiplies
 * write throughput; nothing is answered before it is committed. A long write (`writeLong`) runs
 * alone in its transaction, in time slices.
 */
import type { TxStep, DbOp } from './db'
import { normalizeDbError } from './db'
import { driveSliced } from './db-sliced'
import type { Statement } from './db-statements'
import type { WriteLock } from './db-write-lock'

/** Bodies per group commit: bounds how long one commit holds the loop (each body runs at most twice). */
const MAX_GROUP = 128

/** What of the connection the group commit uses. */
export interface GroupConnection {
  closed(): boolean
  inTransaction(): boolean
  exec(sql: string): void
  /** BEGIN IMMEDIATE. */
  begin(): void
  /** COMMIT, and the other processes told of it before anybody is answered. */
  commit(): void
  /** Before a write: it may change any row (the read snapshot ends, the read cache is cleared). */
  writing(): void
  /** What was read may be gone (a rollback): the read cache is cleared. */
  wrote(): void
  /** Runs a body's statements. */
  drive<T>(body: () => TxStep<T>): T
  execute(op: DbOp): unknown
  /** A body alone in a BEGIN IMMEDIATE transaction of its own. */
  immediate<T>(body: () => TxStep<T>): T
  savepoint: Statement
  release: Statement
  rollbackTo: Statement
  /** Shared file: the write lock, waited for off the event loop; null when the file is this process's alone. */
  lock: WriteLock | null
}

interface PendingWrite {
  body: () => TxStep<unknown>
  /** Driven in time slices, alone in its transaction (`writeLong`). */
  long?: boolean
  resolve(value: unknown): void
  reject(error: unknown): void
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }

export class GroupCommit {
  private readonly waiting: PendingWrite[] = []
  private scheduled = false
  /** The long write in progress: its transaction is open, so nothing else may write until it ends. */
  private long: Promise<void> | null = null
  /** A group found another process writing: its retry is scheduled (./db-write-lock.ts says when). */
  private retry = false
  /** The last group ran bodies again: groups run each body in its own savepoint until one has no failure. */
  private careful = false
  /** Set by `stopLong`: long writes end at their next pause with it, rolled back. */
  private longStop: Error | undefined

  constructor(private readonly conn: GroupConnection) {}

  enqueue<T>(body: () => TxStep<T>, long = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ body, long, resolve: resolve as (v: unknown) => void, reject })
      this.schedule()
    })
  }

  /**
   * Long writes, the one running and any asked for later, end with `reason` instead: the running one
   * at its next pause, rolled back, so it leaves nothing (the service is stopping).
   */
  stopLong(reason: Error): void {
    this.longStop ??= reason
  }

  /** A long write is running: a statement outside the groups waits for `settled()`. */
  get longRunning(): boolean {
    return this.long !== null
  }

  async settled(): Promise<void> {
    while (this.long) await this.long
  }

  /**
   * Runs `work` once this process's writes in progress have ended, and begins none until it has
   * (for at most `atMostMs`): another connection needs the write lock with nothing of ours in the
   * log meanwhile (the checkpointer starting the log again). Writes asked for meanwhile wait, then
   * commit as usual; a `work` that never ends (a stuck checkpointer) holds them no longer than that.
   */
  async withoutWrites<T>(work: () => Promise<T>, atMostMs: number): Promise<T> {
    while (this.long) await this.long
    const done = work() // in the same turn as the check above: no long write began in between
    let timer: ReturnType<typeof setTimeout> | undefined
    const held: Promise<void> = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, atMostMs)
      done.then(
        () => resolve(),
        () => resolve(),
      )
    }).then(() => {
      clearTimeout(timer)
      if (this.long === held) this.long = null
      if (this.waiting.length) this.schedule()
    })
    this.long = held
    return done
  }

  /** Writes everything asked for (before the file closes). */
  async flush(): Promise<void> {
    while (this.waiting.length || this.long || this.retry) {
      if (this.long) await this.settled()
      else if (this.retry)
        await Bun.sleep(5) // the retry of a group waiting for another process's lock
      else this.commitGroup()
    }
  }

  private schedule(): void {
    if (this.scheduled) return
    this.scheduled = true
    setImmediate(() => this.commitGroup())
  }

  private runLong(w: PendingWrite): void {
    const { conn } = this
    if (this.longStop) {
      w.reject(this.longStop)
      if (this.waiting.length) this.schedule()
      return
    }
    this.long = (async () => {
      conn.writing()
      try {
        if (conn.lock) await conn.lock.acquire(() => conn.begin())
        else conn.begin()
        const value = await driveSliced(
          w.body(),
          (op) => conn.execute(op),
          () => conn.inTransaction(),
          () => this.longStop,
        )
        conn.commit()
        w.resolve(value)
      } catch (err) {
        this.rollback()
        w.reject(normalizeDbError(err))
      } finally {
        this.long = null
        conn.wrote() // what was read meanwhile may be gone with a rollback
        if (this.waiting.length) this.schedule()
      }
    })()
  }

  private commitGroup(): void {
    this.scheduled = false
    const { conn, waiting } = this
    if (conn.closed()) {
      for (const w of waiting.splice(0)) w.reject(new Error('the database is closed'))
      return
    }
    if (this.long || this.retry) return // scheduled again when it ends, or when the retry comes
    const longAt = waiting.findIndex((w) => w.long)
    if (longAt === 0) {
      this.runLong(waiting.shift()!)
      return
    }
    const group = waiting.splice(0, longAt < 0 ? MAX_GROUP : Math.min(MAX_GROUP, longAt))
    conn.writing()
    if (waiting.length) this.schedule()
    if (group.length === 1 && !conn.lock) {
      const [only] = group as [PendingWrite]
      try {
        only.resolve(conn.immediate(only.body))
      } catch (err) {
        only.reject(normalizeDbError(err))
      }
      return
    }
    if (conn.lock && !this.lockFor(group, conn.lock)) return
    if (group.length === 1) {
      this.alone(group[0]!)
      return
    }
    let outcomes: Outcome[]
    try {
      if (!conn.lock) conn.begin()
      if (this.careful) {
        outcomes = group.map((w) => this.inSavepoint(w))
        this.careful = outcomes.some((o) => !o.ok)
      } else outcomes = this.together(group)
      conn.commit()
    } catch (err) {
      this.rollback()
      for (const w of group) w.reject(normalizeDbError(err))
      return
    }
    group.forEach((w, i) => {
      const o = outcomes[i]!
      if (o.ok) w.resolve(o.value)
      else w.reject(o.error)
    })
  }

  /** Takes the shared file's write lock for a group; false when another process writes (the group waits). */
  private lockFor(group: PendingWrite[], lock: WriteLock): boolean {
    let begun: boolean
    try {
      begun = lock.attempt(() => this.conn.begin())
    } catch (err) {
      for (const w of group) w.reject(err)
      return false
    }
    if (begun) return true
    // another process writes: this group goes first when the lock is tried again
    this.waiting.unshift(...group)
    this.retry = true
    lock.later(() => {
      this.retry = false
      this.commitGroup()
    })
    return false
  }

  /**
   * The group's bodies in one savepoint. One that fails takes back what the others did since the
   * savepoint began: they run again, each in its own, and a new savepoint begins after the failing one.
   */
  private together(group: PendingWrite[]): Outcome[] {
    const { conn } = this
    const outcomes: Outcome[] = []
    let since = 0 // the first body the savepoint holds
    conn.exec('SAVEPOINT grp')
    for (let i = 0; i < group.length; i++) {
      try {
        outcomes[i] = { ok: true, value: conn.drive(group[i]!.body) }
      } catch (err) {
        if (!conn.inTransaction()) throw err // the failure ended the whole transaction: nothing of the group stays
        conn.exec('ROLLBACK TO grp')
        outcomes[i] = { ok: false, error: normalizeDbError(err) }
        for (let j = since; j < i; j++) outcomes[j] = this.inSavepoint(group[j]!)
        if (i > since) this.careful = true
        conn.exec('RELEASE grp')
        conn.exec('SAVEPOINT grp')
        since = i + 1
      }
      // a body that caught the error of a statement that ended the transaction went on outside it
      if (!conn.inTransaction()) throw new Error('the write transaction ended inside a body of its group')
    }
    conn.exec('RELEASE grp')
    return outcomes
  }

  /** One body of a group: a failure rolls back its own statements only. */
  private inSavepoint(w: PendingWrite): Outcome {
    const { conn } = this
    conn.savepoint.run([])
    try {
      const value = conn.drive(w.body)
      conn.release.run([])
      return { ok: true, value }
    } catch (err) {
      if (!conn.inTransaction()) throw err // the failure ended the whole transaction: nothing of the group stays
      conn.rollbackTo.run([])
      conn.release.run([])
      return { ok: false, error: normalizeDbError(err) }
    }
  }

  /**
   * A group of one body (the write lock taken): no savepoint, a failure rolls the whole transaction
   * back. Most writes come alone below saturation, and the savepoint's two statements cost them 5-10 µs.
   */
  private alone(w: PendingWrite): void {
    try {
      const value = this.conn.drive(w.body)
      // a body that caught the error of a statement that ended the transaction went on outside it
      if (!this.conn.inTransaction()) throw new Error('the write transaction ended inside a body of its group')
      this.conn.commit()
      this.careful = false // a group without a failure
      w.resolve(value)
    } catch (err) {
      this.rollback()
      w.reject(normalizeDbError(err))
    }
  }

  private rollback(): void {
    if (this.conn.inTransaction())
      try {
        this.conn.exec('ROLLBACK')
      } catch {}
  }
}
