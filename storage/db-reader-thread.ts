/**
 * The thread of the aside reader (./db-aside.ts): one connection to the service's file, for reads only,
 * answering one SELECT at a time with its rows (positional, as the embedded driver reads them).
 */
import Database from 'libsql'

declare const self: Worker

export type ReaderMessage = { open: string; busyTimeoutMs: number } | { id: number; sql: string; args: unknown[] }
export type ReaderAnswer = { id: number; rows: unknown[][] } | { id: number; error: string }

let conn: InstanceType<typeof Database> | undefined
const statements = new Map<string, ReturnType<InstanceType<typeof Database>['prepare']>>()

self.onmessage = (event: MessageEvent<ReaderMessage>) => {
  const m = event.data
  if ('open' in m) {
    conn = new Database(m.open, { timeout: m.busyTimeoutMs })
    // the package takes no read-only option: SQLite refuses writes on this connection itself
    conn.exec('PRAGMA query_only=ON')
    return
  }
  try {
    let statement = statements.get(m.sql)
    if (!statement) {
      if (statements.size > 200) statements.clear()
      statement = conn!.prepare(m.sql).raw(true)
      statements.set(m.sql, statement)
    }
    postMessage({ id: m.id, rows: statement.all(m.args) as unknown[][] } satisfies ReaderAnswer)
  } catch (err) {
    postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) } satisfies ReaderAnswer)
  }
}
