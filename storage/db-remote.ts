/**
 * Remote libSQL driver (`@libsql/client`): a sqld or Turso server for clusters; `file:` URLs also
 * work and are how the tests exercise this driver. Write transactions are serialized inside the
 * process: concurrent @libsql/client transactions stall each other (reference/datapath-findings.md).
 */
import { createClient, type Client, type InStatement, type Transaction } from '@libsql/client'
import type { Db, DbOp, Row, RunResult, SqlValue, TxStep } from './db'
import { assertRead, normalizeDbError } from './db'

export function openRemoteDb(url: string, authToken?: string): Db {
  const client: Client = createClient({ url, authToken, timeout: 5000 } as Parameters<typeof createClient>[0])
  let writeQueue: Promise<unknown> = Promise.resolve()

  const statement = (sql: string, args: SqlValue[]): InStatement => ({ sql, args: args as never })
  const rows = (result: { rows: ArrayLike<unknown>[] }): Row[] => result.rows.map((r) => Array.from(r))
  const runResult = (rs: { rowsAffected: number; lastInsertRowid?: bigint }): RunResult => ({
    changes: rs.rowsAffected,
    lastRowid: Number(rs.lastInsertRowid ?? 0),
  })

  async function guarded<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn()
    } catch (err) {
      throw normalizeDbError(err)
    }
  }

  async function execute(t: Transaction, op: DbOp): Promise<unknown> {
    if (op.kind === 'exec') return t.executeMultiple(op.sql)
    const rs = await t.execute(statement(op.sql, op.args))
    if (op.kind === 'run') return runResult(rs)
    return op.kind === 'get' ? rows(rs)[0] : rows(rs)
  }

  /** Set by `stopLong`: long writes end before their next statement with it, rolled back. */
  let longStop: Error | undefined

  /** Write transactions one at a time, in the order asked. */
  function queued<T>(run: () => Promise<T>): Promise<T> {
    const result = writeQueue.then(() => guarded(run))
    writeQueue = result.catch(() => {})
    return result
  }

  async function runWrite<T>(body: () => TxStep<T>, long = false): Promise<T> {
    if (long && longStop) throw longStop
    const t = await client.transaction('write')
    try {
      const steps = body()
      let next = steps.next()
      while (!next.done) {
        if (long && longStop) {
          steps.return(undefined as T) // the body's finally blocks run; nothing more is executed
          throw longStop
        }
        let result: unknown
        try {
          result = await execute(t, next.value)
        } catch (err) {
          next = steps.throw(normalizeDbError(err)) // the body may handle it (e.g. a duplicate key)
          continue
        }
        next = steps.next(result)
      }
      await t.commit()
      return next.value
    } catch (err) {
      await t.rollback().catch(() => {})
      throw err
    } finally {
      t.close()
    }
  }

  return {
    driver: 'remote',
    all: (sql, args = []) => guarded(async () => rows(await client.execute(statement(sql, args)))),
    get: (sql, args = []) => guarded(async () => rows(await client.execute(statement(sql, args)))[0]),
    checkpoint: async () => null, // the server checkpoints its own log
    backupTo: async () => {
      throw new Error("a libSQL server's database is backed up by the server (see docs/operations.md, Backups)")
    },
    // other processes write the database: nothing read can be kept
    getCached: (sql, args) => guarded(async () => rows(await client.execute(statement(sql, args)))[0]),
    allCached: (sql, args) => guarded(async () => rows(await client.execute(statement(sql, args)))),
    // the server runs it: nothing holds this process's event loop
    allAside: (sql, args) => guarded(async () => rows(await client.execute(statement(sql, args)))),
    run: (sql, args = []) => guarded(async () => runResult(await client.execute(statement(sql, args)))),
    write<T>(body: () => TxStep<T>): Promise<T> {
      return queued(() => runWrite(body))
    },
    // every statement is awaited already, and reads go through other connections than the transaction's
    writeLong<T>(body: () => TxStep<T>): Promise<T> {
      return queued(() => runWrite(body, true))
    },
    stopLong: (reason) => {
      longStop ??= reason
    },
    read<T>(body: () => TxStep<T>): Promise<T> {
      return guarded(async () => {
        const steps = body()
        let next = steps.next()
        while (!next.done) {
          assertRead(next.value)
          const op = next.value
          const found = rows(await client.execute(statement(op.sql, op.args)))
          next = steps.next(op.kind === 'get' ? found[0] : found)
        }
        return next.value
      })
    },
    close: async () => client.close(),
  }
}
