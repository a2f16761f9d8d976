/**
 * Embedded libSQL driver (`libsql` package): one synchronous connection per process, statements
 * prepared once, rows read raw (positional). Measured 1.65x the throughput of @libsql/client at
 * about half its CPU (reference/datapath-findings.md). Opened `shared` (as the service does), the
 * file has other connections: the other app processes of the service (APP_PROCESSES > 1) and the
 * checkpointer process; each takes the write lock per transaction, waiting for it off the event
 * loop. Otherwise (tools, tests) the connection locks the file exclusively.
 *
 * Writes commit in groups (./db-group-commit.ts): nothing is answered before it is committed.
 */
import Database from 'libsql'
import type { Db, DbOp, Row, RunResult, SqlValue, TxStep } from './db'
import { assertRead, normalizeDbError, tx } from './db'
import { asideReader } from './db-aside'
import { SharedCheckpoints } from './db-checkpointer'
import { BusyTimeout, WRITE_LOCK_WAIT_MS, WriteLock } from './db-write-lock'
import { PinnedReads } from './db-pinned-read'
import { ReadCache } from './read-cache'
import { CommitCounter } from './commit-counter'
import { Statements } from './db-statements'
import { GroupCommit } from './db-group-commit'
import { writePrivateFile } from './private-files'

/** How long a shared file's writer waits for another process's transaction (a group commit takes milliseconds). */
const BUSY_TIMEOUT_MS = 5000
/** How long a closing connection waits for the others to let it empty the log into the file. */
const CLOSE_WAIT_MS = 1000
/** A process whose writes were refused this long, or whose snapshot stayed pinned this long, is not ready. */
const WRITE_TROUBLE_MS = 2000

/** A read; the plan of a read is one too (it took the write lock before). */
const SELECT = /^\s*(explain\s+query\s+plan\s+)?select\b/i

export function openEmbeddedDb(
  file: string,
  options: {
    shared?: boolean
    /** Shared: the command of a process that checkpoints (the service's own); none, SQLite does it in commits. */
    checkpointCommand?: string[]
    /** Told when the reader thread failed and a long read ran on this connection instead. */
    onReaderGone?: (err: Error) => void
    /** Told when this connection was found pinned to an old snapshot and the pin was ended. */
    onPinEnded?: (info: { statements: number; ended: number }) => void
    /** Tests: the package's connection, to do to it what no caller of the driver can. */
    onConnection?: (conn: InstanceType<typeof Database>) => void
  } = {},
): Db {
  const shared = options.shared === true
  const conn = new Database(file, { timeout: BUSY_TIMEOUT_MS })
  options.onConnection?.(conn)
  conn.exec('PRAGMA journal_mode=WAL')
  conn.exec('PRAGMA synchronous=NORMAL')
  // after a whole checkpoint the log is reused from its start; its file is cut back to this then
  conn.exec(`PRAGMA journal_size_limit=${64 * 1024 * 1024}`)
  // A process that owns its file keeps the lock: without it every statement pays two fcntl calls,
  // 2.5x the cost of a point read. Shared, the other processes need it between transactions.
  if (!shared) conn.exec('PRAGMA locking_mode=EXCLUSIVE')
  // shared: another process may hold the write lock for long; it is waited for off the event loop
  const busy = new BusyTimeout((sql) => {
    assertOpen()
    conn.exec(sql)
  }, BUSY_TIMEOUT_MS)
  // confirmed first: one refusal may be another process's commit landing meanwhile
  const lock = shared ? new WriteLock(busy, WRITE_LOCK_WAIT_MS, () => endPin()) : null
  // a read between two attempts at the lock may have begun a read snapshot: it ends first
  let writeTransactions = 0
  const beginWrite = () => {
    assertOpen()
    endSnapshot()
    writeTransactions++
    conn.exec('BEGIN IMMEDIATE')
    pins.writable()
  }
  const checkpoints =
    shared && options.checkpointCommand
      ? new SharedCheckpoints(file, options.checkpointCommand, () => conn.exec('PRAGMA wal_autocheckpoint=0'))
      : null
  /**
   * Shared, every statement outside a transaction would take and drop the file's shared lock (two
   * fcntl calls, twice the cost of a point read): instead the statements of one turn of the event
   * loop read in one read transaction, begun by the first and ended after the turn, before any write,
   * or when another connection commits. Reads answered from the cache begin none.
   */
  let snapshot = false
  // the addon aborts the process (a Rust panic, not an error) when a closed connection is used
  let closed = false
  const assertOpen = () => {
    if (closed) throw new Error('the database is closed')
  }
  /** Before every read: what another connection committed since is seen by this one. */
  const freshen = () => {
    if (closed || !commits) return
    const moved = commits.stale()
    if (commits.suspect) {
      commits.suspect = false
      endPin()
    }
    if (!moved) return
    endSnapshot()
    wrote()
  }
  const beginSnapshot = () => {
    if (closed || !shared || snapshot || conn.inTransaction) return
    busy.forReads() // asking for the write lock left it at none
    conn.exec('BEGIN')
    snapshot = true
    setImmediate(endSnapshot)
  }
  const endSnapshot = () => {
    if (!snapshot || closed) return
    snapshot = false
    conn.exec('COMMIT')
  }
  const statements = new Statements(
    // bound from one array (see Statement in ./db-statements.ts)
    (sql) => conn.prepare<[unknown[]]>(sql),
    () => pins.failed(),
  )
  const pins = new PinnedReads(
    conn,
    statements,
    busy,
    () => {
      endSnapshot()
      wrote()
    },
    (count) => options.onPinEnded?.({ statements: count, ended: pins.ended }),
  )
  /** Ends this connection's read snapshot if it is pinned (./db-pinned-read.ts); whether it was. */
  const endPin = (): boolean => {
    if (closed || conn.inTransaction) return false
    if (!pins.pinned()) return false
    pins.end()
    return true
  }
  // the other processes' commits, seen without a statement: the read cache and the snapshot are then stale
  const commits = shared
    ? new CommitCounter(file, () => {
        endSnapshot()
        busy.forReads()
        return (statements.first('PRAGMA data_version', []) as [number])[0]
      })
    : undefined
  /** Ends this connection's write transaction; the other processes learn of it before anybody is answered. */
  const commitWrite = () => {
    conn.exec('COMMIT')
    commits?.committed()
  }
  // any write may change any row: the cache holds what was read since the last one
  const cache = new ReadCache()
  // exclusive, the file has no other connection: long reads run here like any other
  const aside = shared ? asideReader(file, BUSY_TIMEOUT_MS, all, options.onReaderGone) : undefined
  const wrote = () => cache.clear()
  /**
   * A statement that is not a plain SELECT may write (an INSERT ... RETURNING read with `all`): it
   * goes through the group commit as a write (a shared file's lock, answered once committed). An anchored test of its first word: a list's SQL is new text each time, and a set of the
   * statements seen hashed all of it.
   */
  const isSelect = (sql: string) => SELECT.test(sql)
  const reading = (sql: string) => (isSelect(sql) ? beginSnapshot() : writing())
  /** Before a write outside the group commit: it may change any row, and cannot run in a read snapshot. */
  const writing = () => {
    endSnapshot()
    wrote()
  }

  function execute(op: DbOp): unknown {
    assertOpen()
    if (op.kind !== 'all' && op.kind !== 'get') wrote()
    else reading(op.sql)
    if (op.kind === 'exec') return void conn.exec(op.sql)
    if (op.kind === 'run') return statements.change(op.sql, op.args) satisfies RunResult
    if (op.kind === 'get') return statements.first(op.sql, op.args) as Row | undefined
    return statements.rows(op.sql, op.args) as Row[]
  }

  function drive<T>(body: () => TxStep<T>, readOnly = false): T {
    const steps = body()
    let next = steps.next()
    while (!next.done) {
      let result: unknown
      try {
        if (readOnly) assertRead(next.value)
        result = execute(next.value)
      } catch (err) {
        next = steps.throw(normalizeDbError(err)) // the body may handle it (e.g. a duplicate key)
        continue
      }
      next = steps.next(result)
    }
    return next.value
  }
  const transaction = conn.transaction(drive)
  const groups = new GroupCommit({
    closed: () => closed,
    inTransaction: () => conn.inTransaction,
    exec: (sql) => conn.exec(sql),
    begin: beginWrite,
    commit: commitWrite,
    writing,
    wrote,
    drive,
    execute,
    immediate: <T>(body: () => TxStep<T>) => {
      writeTransactions++
      return transaction.immediate(body) as T
    },
    savepoint: conn.prepare<[unknown[]]>('SAVEPOINT body'),
    release: conn.prepare<[unknown[]]>('RELEASE body'),
    rollbackTo: conn.prepare<[unknown[]]>('ROLLBACK TO body'),
    lock,
  })
  const settled = () => groups.settled()

  /** A read kept until the next write of any connection. */
  function cached(sql: string, args: SqlValue[], list: boolean, read: () => Row | Row[] | undefined) {
    freshen()
    return call(() =>
      cache.answer(sql, args, list, () => {
        beginSnapshot()
        return read()
      }),
    )
  }

  function call<T>(fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn())
    } catch (err) {
      return Promise.reject(normalizeDbError(err))
    }
  }

  function all(sql: string, args: SqlValue[] = []): Promise<Row[]> {
    if (!isSelect(sql)) return groups.enqueue(() => tx.all(sql, args))
    freshen()
    beginSnapshot()
    return call(() => {
      assertOpen()
      return statements.rows(sql, args) as Row[]
    })
  }

  return {
    driver: 'embedded',
    all,
    get: (sql: string, args: SqlValue[] = []) => {
      if (!isSelect(sql)) return groups.enqueue(() => tx.get(sql, args))
      freshen()
      beginSnapshot()
      return call(() => {
        assertOpen()
        return statements.first(sql, args) as Row | undefined
      })
    },
    run: (sql: string, args: SqlValue[] = []) => {
      const now = async () => {
        writing()
        if (!lock)
          return call(() => {
            assertOpen()
            return statements.change(sql, args)
          })
        // the lock is taken by a BEGIN (a refused statement could stay half-run), then the statement
        // runs in the same turn, alone in its transaction
        while (groups.longRunning || !lock.attempt(beginWrite)) {
          if (groups.longRunning)
            await settled() // a long write of this process began meanwhile
          else await lock.pause()
        }
        return call(() => {
          try {
            assertOpen()
            const result = statements.change(sql, args)
            commitWrite()
            return result
          } catch (err) {
            if (conn.inTransaction) conn.exec('ROLLBACK')
            throw err
          } finally {
            wrote() // what was read while the lock was waited for is not kept past the write
          }
        })
      }
      return groups.longRunning ? settled().then(now) : now() // not inside the long write's transaction
    },
    getCached: (sql: string, args: SqlValue[]) =>
      cached(sql, args, false, () => {
        assertOpen()
        return statements.first(sql, args) as Row | undefined
      }) as Promise<Row | undefined>,
    keptRow: (sql: string, args: SqlValue[]) => {
      freshen()
      return cache.kept(sql, args)
    },
    allCached: (sql: string, args: SqlValue[]) => {
      if (!isSelect(sql)) throw new Error(`allCached takes a SELECT: ${sql}`)
      return cached(sql, args, true, () => {
        assertOpen()
        return statements.rows(sql, args) as Row[]
      }) as Promise<Row[]>
    },
    writeTransaction: () => writeTransactions,
    generation: () => {
      freshen()
      return cache.generation
    },
    allAside: (sql: string, args: SqlValue[]) => {
      if (!isSelect(sql)) throw new Error(`allAside takes a SELECT: ${sql}`)
      assertOpen()
      if (!aside) return all(sql, args)
      freshen()
      return cache.answerLater(sql, args, () => aside.all(sql, args))
    },
    // IMMEDIATE: bodies read before they write; a deferred start could fail with BUSY_SNAPSHOT.
    write: (body) => groups.enqueue(body),
    writeLong: (body) => groups.enqueue(body, true),
    stopLong: (reason) => groups.stopLong(reason),
    read: <T>(body: () => TxStep<T>) => {
      freshen()
      beginSnapshot()
      return call(() => drive(body, true))
    },
    checkpoint: () =>
      settled().then(async () => {
        assertOpen()
        if (checkpoints) return checkpoints.pass((work, atMostMs) => groups.withoutWrites(work, atMostMs))
        endSnapshot()
        // shared: PASSIVE copies what no reader needs and never waits on the other processes
        await call(() => void conn.exec(`PRAGMA wal_checkpoint(${shared ? 'PASSIVE' : 'TRUNCATE'})`))
        return null
      }),
    endPinnedRead: () => {
      if (!shared || groups.longRunning) return false
      endSnapshot()
      return endPin()
    },
    writeTrouble: () => {
      if (!lock) return undefined
      if (lock.refusedForMs() > WRITE_TROUBLE_MS)
        return `writes refused for ${Math.round(lock.refusedForMs() / 1000)} s`
      const pinnedMs = pins.pinnedSince ? performance.now() - pins.pinnedSince : 0
      if (pinnedMs > WRITE_TROUBLE_MS)
        return `the connection has read an old snapshot for ${Math.round(pinnedMs / 1000)} s`
      return undefined
    },
    // a read transaction: writes asked for meanwhile wait for the next turn, then commit as usual;
    // the copy holds what the database does, so it is private from its first byte
    backupTo: (file: string) =>
      settled().then(() =>
        writePrivateFile(file, async () => {
          endSnapshot()
          await call(() => {
            assertOpen()
            busy.forReads()
            statements.change('VACUUM INTO ?', [file])
          })
        }),
      ),
    close: async () => {
      endSnapshot()
      await groups.flush() // what was asked for is written before the file closes
      aside?.close()
      await checkpoints?.stop()
      try {
        // the file alone is the whole database. Shared, SQLite would leave that to the last connection
        // to close, but a prepared statement still alive keeps the log. Another process still using
        // it (a transaction takes milliseconds) is waited for a moment; the last to close does it
        endSnapshot() // a read since the stop began may have opened one: TRUNCATE fails inside it
        if (shared) conn.exec(`PRAGMA busy_timeout = ${CLOSE_WAIT_MS}`)
        conn.exec('PRAGMA wal_checkpoint(TRUNCATE)')
      } catch {
        // the connection cannot checkpoint now (a statement still running): closing it leaves the log
      }
      statements.clear()
      closed = true
      conn.close()
    },
  }
}
