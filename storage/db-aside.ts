/**
 * Reads that would hold the event loop for long (a list whose filter no index serves, over a large
 * table) run on a connection of their own, in a thread of their own (./db-reader-thread.ts): the
 * event loop serves other requests meanwhile. The file is in WAL mode, so the reader sees every
 * transaction committed before its statement starts (a write answered before the read is in it),
 * and never a transaction still open. The thread starts with the first such read, and a thread
 * that failed is replaced by the next one.
 */
import type { Row, SqlValue } from './db'
import type { ReaderAnswer, ReaderMessage } from './db-reader-thread'

/** The reader thread could not answer (it failed to start, or ended). */
class ReaderGone extends Error {}

export interface AsideReader {
  all(sql: string, args: SqlValue[]): Promise<Row[]>
  close(): void
}

/**
 * The reader of a shared file. A read the thread could not answer (it failed to start, or ended)
 * runs on the event loop instead (`onLoop`), and `onGone` is told.
 */
export function asideReader(
  file: string,
  busyTimeoutMs: number,
  onLoop: (sql: string, args: SqlValue[]) => Promise<Row[]>,
  onGone?: (err: Error) => void,
): AsideReader {
  let thread: Worker | undefined
  let seq = 0
  const waiting = new Map<number, { resolve(rows: Row[]): void; reject(err: Error): void }>()
  const failAll = (err: Error) => {
    for (const w of waiting.values()) w.reject(err)
    waiting.clear()
  }
  const start = () => {
    // beside this file in the source, at the bundle's root in the binary (scripts/build.ts)
    const t = new Worker(new URL('./db-reader-thread.ts', import.meta.url).href)
    t.onmessage = (event: MessageEvent<ReaderAnswer>) => {
      const a = event.data
      const w = waiting.get(a.id)
      waiting.delete(a.id)
      if ('error' in a) w?.reject(new Error(a.error))
      else w?.resolve(a.rows as Row[])
    }
    t.onerror = (event) => {
      thread = undefined
      t.terminate()
      failAll(new ReaderGone(`the reader thread failed: ${event.message}`))
    }
    t.postMessage({ open: file, busyTimeoutMs } satisfies ReaderMessage)
    // the thread never keeps the process alive: what waits for its answers does
    t.unref()
    return t
  }
  return {
    all(sql, args) {
      thread ??= start()
      const id = ++seq
      const read = new Promise<Row[]>((resolve, reject) => {
        waiting.set(id, { resolve, reject })
        thread!.postMessage({ id, sql, args } satisfies ReaderMessage)
      })
      return read.catch((err) => {
        if (!(err instanceof ReaderGone)) throw err
        onGone?.(err)
        return onLoop(sql, args)
      })
    },
    close() {
      thread?.terminate()
      thread = undefined
      failAll(new Error('the database is closed'))
    },
  }
}
