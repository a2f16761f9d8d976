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

/** A row that was not there: kept as an answer like any other. */
const NONE = Symbol('no row')
/** The key of a statement without arguments. */
const NO_ARGS = Symbol('no arguments')
type Kept = Row | Row[] | typeof NONE
/**
 * The kept answers of one statement: a map per argument, keyed by the argument itself (a Map tells
 * `1` from `"1"` and `null` from `""`), the last one holding the answer. No key is built: joining
 * the arguments into one string, and hashing it, was 5 % of a point read's profile.
 */
type Level = Map<unknown, Level | Kept>

export class ReadCache {
  private readonly bySql = new Map<string, Level>()
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
    const kept = this.find(sql, args)
    if (kept !== undefined) return kept === NONE ? undefined : kept
    const answer = read()
    this.keep(sql, args, list, answer)
    return answer
  }

  /** The kept answer of a point read: the row, null when kept as missing, undefined when none is kept. */
  kept(sql: string, args: SqlValue[]): Row | null | undefined {
    const kept = this.find(sql, args)
    return kept === NONE ? null : (kept as Row | undefined)
  }

  /** `answer` for rows read by another connection (the reader thread), which take a while to come. */
  async answerLater(sql: string, args: SqlValue[], read: () => Promise<Row[]>): Promise<Row[]> {
    const kept = this.find(sql, args)
    if (kept !== undefined && kept !== NONE) return kept as Row[]
    const clears = this.clears
    const answer = await read()
    if (clears === this.clears) this.keep(sql, args, true, answer)
    return answer
  }

  private find(sql: string, args: SqlValue[]): Kept | undefined {
    let level = this.bySql.get(sql)
    const last = args.length - 1
    for (let i = 0; level !== undefined && i < last; i++) level = level.get(args[i]) as Level | undefined
    // an answer where a level was expected, or the reverse: the statement was asked with another
    // number of arguments before
    if (!(level instanceof Map)) return undefined
    const kept = level.get(last < 0 ? NO_ARGS : args[last])
    return kept instanceof Map ? undefined : kept
  }

  private keep(sql: string, args: SqlValue[], list: boolean, answer: Row | Row[] | undefined): void {
    if (this.rows >= MAX_ROWS) this.clear()
    const chars = !answer ? 0 : list ? (answer as Row[]).reduce((n, r) => n + rowChars(r), 0) : rowChars(answer as Row)
    if (chars > MAX_CHARS) return
    let level = this.bySql.get(sql)
    if (!level) {
      level = new Map()
      this.bySql.set(sql, level)
    }
    const last = args.length - 1
    for (let i = 0; i < last; i++) {
      let next = level.get(args[i]) as Level | undefined
      if (!next) {
        next = new Map()
        level.set(args[i], next)
      }
      if (!(next instanceof Map)) return // kept for fewer arguments: this one is not kept
      level = next
    }
    const key = last < 0 ? NO_ARGS : args[last]
    if (level.get(key) instanceof Map) return // a level for more arguments
    level.set(key, answer ?? NONE)
    this.rows += list ? Math.max(1, (answer as Row[]).length) : 1
  }
}
