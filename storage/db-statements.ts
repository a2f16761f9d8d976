/**
 * The embedded driver's prepared statements, kept by their text (rows read raw: positional).
 *
 * Three things the package does not do, measured on libsql 0.5.29 (tests/storage/pinned-read.test.ts):
 * - It never resets a statement that `all` read to its end. SQLite leaves a plan (`EXPLAIN QUERY
 *   PLAN`, a list's plan) that ran to its end counted as a reader until its reset, so one read in a
 *   transaction kept the connection's read snapshot open past every COMMIT: the process then read an
 *   old snapshot, could not write (SQLITE_BUSY_SNAPSHOT) and held back every checkpoint. A cluster
 *   process was stuck so after its sibling's restart, the first time it planned a list. So a plan
 *   is followed by a `get`, which resets after it reads.
 * - `get` binds without a reset, and only a reset lets new arguments bind: after `all` or `run`
 *   of the same statement, or after a `get` that failed, it silently runs the old arguments (another
 *   record's row). So statements read with `get` are kept apart from those read with `all`/`run`,
 *   which reset before they bind.
 * - A statement whose step failed (SQLITE_BUSY before its first row) stays active, a reader too,
 *   with the same effect. No call of the package resets it reliably; finalizing it does. So a
 *   statement that failed is let go of, and `onFailure` has the collector finalize it soon.
 */
import type { RunResult } from './db'

/** The part of a prepared statement we use; parameters are bound from one array. */
export interface Statement {
  readonly reader: boolean
  raw(on: boolean): Statement
  run(args: unknown[]): { changes: number; lastInsertRowid: number | bigint }
  get(args: unknown[]): unknown
  all(args: unknown[]): unknown[]
}

/** Enough for every fixed statement plus the recent dynamic list queries (each of the two kinds). */
const STATEMENT_CACHE_SIZE = 2000

export class Statements {
  /** Read with `get`. */
  private readonly firsts = new Map<string, Statement>()
  /** Read with `all`, or run. */
  private readonly others = new Map<string, Statement>()

  constructor(
    private readonly prepareNew: (sql: string) => Statement,
    /** A statement failed and was let go of: it is to be finalized (collected) soon. */
    private readonly onFailure: () => void = () => {},
  ) {}

  private of(kept: Map<string, Statement>, sql: string): Statement {
    let stmt = kept.get(sql)
    if (!stmt) {
      stmt = this.prepareNew(sql)
      if (stmt.reader) stmt.raw(true)
      if (kept.size >= STATEMENT_CACHE_SIZE) kept.delete(kept.keys().next().value!)
      kept.set(sql, stmt)
    }
    return stmt
  }

  private failed(kept: Map<string, Statement>, sql: string): void {
    kept.delete(sql)
    this.onFailure()
  }

  /** The first row of `sql`. */
  first(sql: string, args: unknown[]): unknown {
    const stmt = this.of(this.firsts, sql)
    try {
      return stmt.get(args)
    } catch (err) {
      this.failed(this.firsts, sql)
      throw err
    }
  }

  /** Every row of `sql`. */
  rows(sql: string, args: unknown[]): unknown[] {
    const stmt = this.of(this.others, sql)
    try {
      const rows = stmt.all(args)
      if (sql.startsWith('EXPLAIN')) stmt.get(args) // its reset (see above)
      return rows
    } catch (err) {
      this.failed(this.others, sql)
      throw err
    }
  }

  /** Runs `sql`, which returns no rows. A refused one (a constraint) ended: it is kept. */
  change(sql: string, args: unknown[]): RunResult {
    const { changes, lastInsertRowid } = this.of(this.others, sql).run(args)
    return { changes, lastRowid: Number(lastInsertRowid) }
  }

  /** Lets go of every kept statement; answers how many there were. */
  clear(): number {
    const count = this.firsts.size + this.others.size
    this.firsts.clear()
    this.others.clear()
    return count
  }
}
