/**
 * One database interface over both libSQL drivers (embedded `libsql`, remote `@libsql/client`).
 *
 * Reads are plain async calls. A write transaction is a generator that yields the statements it
 * wants run (through the `tx` helpers below) and receives their results: the embedded driver
 * drives it synchronously inside one SQLite transaction, the remote driver drives it with awaits
 * inside one serialized server transaction. A generator cannot `await`, so no network call can
 * sneak into a transaction, and on the embedded driver no other request can interleave with it.
 */

export type SqlValue = string | number | bigint | null | Uint8Array
/** A result row: column values in SELECT order. */
export type Row = unknown[]

export interface RunResult {
  changes: number
  /** The rowid of the last row inserted on the connection (an INSERT's own when it inserted one). */
  lastRowid: number
}

export type DbOp =
  | { kind: 'all'; sql: string; args: SqlValue[] }
  | { kind: 'get'; sql: string; args: SqlValue[] }
  | { kind: 'run'; sql: string; args: SqlValue[] }
  | { kind: 'exec'; sql: string; args: SqlValue[] }

/** A transaction body, or a step of one (compose steps with `yield*`). */
export type TxStep<T> = Generator<DbOp, T, unknown>

/** Statements a transaction body can yield: `const row = yield* tx.get(sql, args)`. */
export const tx = {
  *all(sql: string, args: SqlValue[] = []): TxStep<Row[]> {
    return (yield { kind: 'all', sql, args }) as Row[]
  },
  *get(sql: string, args: SqlValue[] = []): TxStep<Row | undefined> {
    return (yield { kind: 'get', sql, args }) as Row | undefined
  },
  *run(sql: string, args: SqlValue[] = []): TxStep<RunResult> {
    return (yield { kind: 'run', sql, args }) as RunResult
  },
  /** Several statements separated by semicolons, without parameters (migrations). */
  *exec(sql: string): TxStep<void> {
    yield { kind: 'exec', sql, args: [] }
  },
}

export interface Db {
  readonly driver: 'embedded' | 'remote'
  all(sql: string, args?: SqlValue[]): Promise<Row[]>
  get(sql: string, args?: SqlValue[]): Promise<Row | undefined>
  run(sql: string, args?: SqlValue[]): Promise<RunResult>
  /**
   * Runs the body as one write transaction: every statement commits, or none does. The body may be
   * run more than once (the embedded driver runs a group's bodies again when another of them failed,
   * their first run rolled back): it acts through its statements only, or starts anew each time it is called.
   */
  write<T>(body: () => TxStep<T>): Promise<T>
  /**
   * One write transaction too large for one turn of the event loop (a layer install, CLEAR of a
   * large collection): all or nothing like `write`, but the embedded driver drives it in time slices
   * and serves other work between them. Writes asked for meanwhile wait for its end; reads see its
   * uncommitted rows, so whoever starts it keeps away the readers of what it changes (src/long-work.ts).
   */
  writeLong<T>(body: () => TxStep<T>): Promise<T>
  /**
   * The service is stopping: the long write running now ends at its next pause with `reason`,
   * rolled back, and later ones fail with it at once (embedded; a server's transactions are short).
   */
  stopLong?(reason: Error): void
  /**
   * A point read that may be answered from memory: the embedded driver keeps recent answers until the
   * next write of any kind, its own or (on a shared file) another process's, so a cached row is never
   * stale; the remote driver, whose database other processes write, always reads. The row must not be changed.
   */
  getCached(sql: string, args: SqlValue[]): Promise<Row | undefined>
  /**
   * The answer `getCached` would give from memory, without a promise: the row, null when it is
   * kept as missing, undefined when nothing is kept (ask `getCached`). Absent where nothing is kept.
   */
  keptRow?(sql: string, args: SqlValue[]): Row | null | undefined
  /** The rows of a SELECT, kept like `getCached` (a list page asked again before any write). The rows must not be changed. */
  allCached(sql: string, args: SqlValue[]): Promise<Row[]>
  /**
   * A number that changes with every write of any kind, its own or (shared file) another process's:
   * what was computed from reads at one generation holds while it stays. Absent where writes are not
   * all seen (a libSQL server).
   */
  generation?(): number
  /**
   * The number of the write transaction running now (the embedded driver's group commit runs many
   * bodies in one): what a body found in it holds for the bodies after it in the same one. Absent
   * where each write is a transaction of its own (a libSQL server).
   */
  writeTransaction?(): number
  /**
   * The rows of a SELECT that may take long (a list no index serves): the embedded driver on a shared
   * file reads them in a thread of its own (./db-aside.ts), so the event loop is not held meanwhile;
   * they hold every write answered before the call. Otherwise the same as `all`.
   */
  allAside(sql: string, args: SqlValue[]): Promise<Row[]>
  /**
   * Runs a body of reads outside any transaction, so one query written as a step serves both inside
   * a write transaction and on its own. A statement that writes is refused.
   */
  read<T>(body: () => TxStep<T>): Promise<T>
  /**
   * Moves the write-ahead log into the database file (embedded), so a copy of the file is whole.
   * What it saw when a checkpointer process does it (a file shared by several processes), else null.
   */
  checkpoint(): Promise<CheckpointState | null>
  /**
   * Why this process cannot write now, or undefined: the shared file's write lock refused for
   * long, or its connection pinned to an old snapshot that would not end (./db-pinned-read.ts). For /readyz.
   */
  writeTrouble?(): string | undefined
  /** Looks whether this process's connection is pinned to an old snapshot, and ends it: whether it was (a shared embedded file). */
  endPinnedRead?(): boolean
  /** A consistent copy of the database in a new file (embedded: VACUUM INTO); a server keeps its own backups. */
  backupTo(file: string): Promise<void>
  close(): Promise<void>
}

/** What a checkpoint pass saw of the write-ahead log. */
export interface CheckpointState {
  /** Its length in pages as the pass began. */
  logPages: number
  /**
   * Passes in a row that found it long and could not start it again: another process kept writing,
   * or a reader kept a snapshot in it, through every try. 0 once one could.
   */
  refusedRestarts: number
}

/** The read mode's guard: only `all` and `get` may run outside a transaction. */
export function assertRead(op: DbOp): void {
  if (op.kind !== 'all' && op.kind !== 'get') throw new Error(`a read body yielded a ${op.kind}: writes go in db.write`)
}

/** Long work cut short because the service is stopping: rolled back, nothing of it written. */
export class Stopping extends Error {
  constructor() {
    super('the service is stopping: the work was rolled back and nothing of it was written')
  }
}

/** SQLite refused a lock: another connection holds it, or (SQLITE_BUSY_SNAPSHOT) this one reads an old snapshot. */
export function isBusy(err: unknown): boolean {
  const e = err as { code?: string; message?: string }
  return /SQLITE_BUSY|database is locked/.test(`${e?.code ?? ''} ${e?.message ?? ''}`)
}

/** SQLite's answer to a write asked for on a connection that reads an old snapshot (./db-pinned-read.ts). */
export const isStaleSnapshot = (err: unknown): boolean => (err as { code?: string })?.code === 'SQLITE_BUSY_SNAPSHOT'

/** Another process held the shared database file's write lock for longer than a write may wait (or this one's old snapshot could not be ended). */
export class DbBusy extends Error {
  constructor(waitedMs: number, staleSnapshot = false) {
    super(
      staleSnapshot
        ? `this process's connection kept reading an old snapshot of the database for over ${waitedMs / 1000} s`
        : `another process held the database's write lock for over ${waitedMs / 1000} s`,
    )
  }
}

/** Thrown for constraint violations, so callers need not know driver error shapes. */
export class ConstraintError extends Error {
  constructor(
    message: string,
    readonly kind: 'unique' | 'other',
  ) {
    super(message)
  }
}

/** Maps a driver error to ConstraintError when it is one; returns other errors unchanged. */
export function normalizeDbError(err: unknown): unknown {
  const e = err as { code?: string; message?: string }
  const text = `${e?.code ?? ''} ${e?.message ?? ''}`
  if (text.includes('SQLITE_CONSTRAINT')) {
    return new ConstraintError(e.message ?? 'constraint failed', text.includes('UNIQUE') ? 'unique' : 'other')
  }
  return err
}
