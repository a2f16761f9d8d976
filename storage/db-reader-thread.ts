/**
 * The reader thread (./db-aside.ts): for each database open in the process, one connection to its
 * file, for reads only, answering one SELECT at a time with its rows (positional, as the embedded
 * driver reads them). The thread lives as long as the process: the package's addon aborts the
 * process when the objects of a thread that ended are let go of later.
 */
import Database from 'libsql'

declare const self: Worker

export type ReaderMessage =
  | { open: number; file: string; busyTimeoutMs: number }
  | { close: number }
  | { id: number; db: number; sql: string; args: unknown[] }
export type ReaderAnswer =
  | { id: number; rows: unknown[][] }
  /** `unopened`: the thread could not open the database (the read may run elsewhere). */
  | { id: number; error: string; unopened?: true }

interface Connection {
  conn: InstanceType<typeof Database>
  statements: Map<string, ReturnType<InstanceType<typeof Database>['prepare']>>
}
const connections = new Map<number, Connection>()
/** Why a database could not be opened, by its number. */
const unopened = new Map<number, string>()

/** An error thrown here would end the thread, which must not end (see above). */
function closeQuietly(conn: InstanceType<typeof Database> | undefined): void {
  try {
    conn?.close()
  } catch {
    // its file is let go of when the process ends
  }
}

self.onmessage = (event: MessageEvent<ReaderMessage>) => {
  const m = event.data
  if ('open' in m) {
    let conn: InstanceType<typeof Database> | undefined
    try {
      conn = new Database(m.file, { timeout: m.busyTimeoutMs })
      // the package takes no read-only option: SQLite refuses writes on this connection itself
      conn.exec('PRAGMA query_only=ON')
      connections.set(m.open, { conn, statements: new Map() })
    } catch (err) {
      closeQuietly(conn)
      unopened.set(m.open, err instanceof Error ? err.message : String(err))
    }
    return
  }
  if ('close' in m) {
    const c = connections.get(m.close)
    connections.delete(m.close)
    unopened.delete(m.close)
    c?.statements.clear()
    closeQuietly(c?.conn)
    return
  }
  const why = unopened.get(m.db)
  if (why !== undefined) return postMessage({ id: m.id, error: why, unopened: true } satisfies ReaderAnswer)
  const c = connections.get(m.db)!
  try {
    let statement = c.statements.get(m.sql)
    if (!statement) {
      if (c.statements.size > 200) c.statements.clear()
      statement = c.conn.prepare(m.sql).raw(true)
      c.statements.set(m.sql, statement)
    }
    postMessage({ id: m.id, rows: statement.all(m.args) as unknown[][] } satisfies ReaderAnswer)
  } catch (err) {
    // one that failed may stay active and pin this connection's snapshot: let go of, and finalized (./db-statements.ts)
    c?.statements.delete(m.sql)
    Bun.gc(true)
    postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) } satisfies ReaderAnswer)
  }
}
