/** The embedded driver's prepared statements, kept by their text (rows read raw: positional). */

/** The part of a prepared statement we use; parameters are bound from one array. */
export interface Statement {
  readonly reader: boolean
  raw(on: boolean): Statement
  run(args: unknown[]): { changes: number }
  get(args: unknown[]): unknown
  all(args: unknown[]): unknown[]
}

/** Enough for every fixed statement plus the recent dynamic list queries. */
const STATEMENT_CACHE_SIZE = 2000

export class Statements {
  private readonly bySql = new Map<string, Statement>()

  constructor(private readonly prepareNew: (sql: string) => Statement) {}

  get(sql: string): Statement {
    let stmt = this.bySql.get(sql)
    if (!stmt) {
      stmt = this.prepareNew(sql)
      if (stmt.reader) stmt.raw(true)
      if (this.bySql.size >= STATEMENT_CACHE_SIZE) this.bySql.delete(this.bySql.keys().next().value!)
      this.bySql.set(sql, stmt)
    }
    return stmt
  }

  clear(): void {
    this.bySql.clear()
  }
}
