/**
 * Answers of reads kept until the next write (the embedded driver clears it on any write of its
 * own and when another process has committed): a point read's row, a list page's rows. A large
 * answer is not kept, and a full cache starts again rather than track ages.
 */
import type { Row, SqlValue } from './db'

/** Rows kept at most (a list page counts its rows), and the largest answer kept, in characters. */
const MAX_ROWS = 10_000
const MAX_CHARS = 64 * 1024

const rowChars = (row: Row) => row.reduce<number>((n, v) => n + (typeof v === 'string' ? v.length : 8), 0)

export class ReadCache {
  private readonly bySql = new Map<string, Map<string, Row | Row[] | undefined>>()
  private rows = 0
  /** Counts the clears: an answer read elsewhere is kept only if none came while it was read. */
  private clears = 0

  /** Changes with every clear (every write). */
  get generation(): number {
    return this.clears
  }

  clear(): void {
    this.clears++
    if (this.rows === 0) return
    this.bySql.clear()
    this.rows = 0
  }

  /** The kept answer of `sql` with `args`, or what `read` answers (kept when small enough). */
  answer(sql: string, args: SqlValue[], list: boolean, read: () => Row | Row[] | undefined): Row | Row[] | undefined {
    const key = keyOf(args)
    const ofSql = this.bySql.get(sql)
    const kept = ofSql?.get(key)
    if (kept !== undefined || ofSql?.has(key)) return kept
    const answer = read()
    this.keep(sql, key, list, answer)
    return answer
  }

  /** `answer` for rows read by another connection (the reader thread), which take a while to come. */
  async answerLater(sql: string, args: SqlValue[], read: () => Promise<Row[]>): Promise<Row[]> {
    const key = keyOf(args)
    const kept = this.bySql.get(sql)?.get(key)
    if (kept !== undefined) return kept as Row[]
    const clears = this.clears
    const answer = await read()
    if (clears === this.clears) this.keep(sql, key, true, answer)
    return answer
  }

  private keep(sql: string, key: string, list: boolean, answer: Row | Row[] | undefined): void {
    if (this.rows >= MAX_ROWS) this.clear()
    const chars = !answer ? 0 : list ? (answer as Row[]).reduce((n, r) => n + rowChars(r), 0) : rowChars(answer as Row)
    if (chars > MAX_CHARS) return
    this.bySql.get(sql)?.set(key, answer) ?? this.bySql.set(sql, new Map([[key, answer]]))
    this.rows += list ? Math.max(1, (answer as Row[]).length) : 1
  }
}

/**
 * The arguments as one key: each value with its type and, for text, its length, so `1` and `"1"`,
 * `null` and `""`, or values that hold the separator never meet.
 */
const part = (v: SqlValue) =>
  typeof v === 'string' ? `${v.length}:${v}` : v === null ? 'n;' : `${typeof v}:${String(v)};`
const keyOf = (args: SqlValue[]) => (args.length === 2 ? part(args[0]!) + part(args[1]!) : args.map(part).join(''))
