/**
 * Reads that would hold the event loop for long (a list whose filter no index serves, over a large
 * table) run on a connection of their own, in a thread of their own (./db-reader-thread.ts): the
 * event loop serves other requests meanwhile. The file is in WAL mode, so the reader sees every
 * transaction committed before its statement starts (a write answered before the read is in it),
 * and never a transaction still open. The thread starts with the first such read. One that failed
 * (or ended) leaves its reads, and for RESTART_MS those that follow, to the event loop.
 */
import type { Row, SqlValue } from './db'
import type { ReaderAnswer, ReaderMessage } from './db-reader-thread'

const RESTART_MS = 10_000

/** The reader thread could not answer (it failed to start, or ended). */
class ReaderGone extends Error {}

export interface AsideReader {
  all(sql: string, args: SqlValue[]): Promise<Row[]>
  /** Refuses further reads, ends those waiting and the thread. */
  close(): void
}

/**
 * The reader of a shared file. A read the thread could not answer runs on the event loop instead
 * (`onLoop`); `onGone` is told once for each thread that failed.
 */
export function asideReader(
  file: string,
  busyTimeoutMs: number,
  onLoop: (sql: string, args: SqlValue[]) => Promise<Row[]>,
  onGone?: (err: Error) => void,
): AsideReader {
  let thread: Worker | undefined
  let closed = false
  let failedAt = Number.NEGATIVE_INFINITY
  let seq = 0
  const waiting = new Map<number, { resolve(rows: Row[]): void; reject(err: Error): void }>()
  const failAll = (err: Error) => {
    for (const w of waiting.values()) w.reject(err)
    waiting.clear()
  }
  const start = () => {
    // beside this file in the source, at the bundle's root in the binary (scripts/build.ts)
    const t = new Worker(new URL('./db-reader-thread.ts', import.meta.url).href)
    const gone = (why: string) => {
      if (thread !== t) return // closed on purpose, or already replaced
      thread = undefined
      failedAt = performance.now()
      t.terminate()
      const err = new ReaderGone(`the reader thread failed: ${why}`)
      onGone?.(err)
      failAll(err)
    }
    t.onmessage = (event: MessageEvent<ReaderAnswer>) => {
      const a = event.data
      const w = waiting.get(a.id)
      waiting.delete(a.id)
      if ('error' in a) w?.reject(new Error(a.error))
      else w?.resolve(a.rows as Row[])
    }
    t.onerror = (event) => gone(event.message)
    t.addEventListener('close', () => gone('it ended'))
    t.postMessage({ open: file, busyTimeoutMs } satisfies ReaderMessage)
    // the thread never keeps the process alive: what waits for its answers does
    t.unref()
    return t
  }
  return {
    all(sql, args) {
      if (closed) return Promise.reject(new Error('the database is closed'))
      if (!thread && performance.now() - failedAt < RESTART_MS) return onLoop(sql, args)
      thread ??= start()
      const id = ++seq
      const read = new Promise<Row[]>((resolve, reject) => {
        waiting.set(id, { resolve, reject })
        thread!.postMessage({ id, sql, args } satisfies ReaderMessage)
      })
      return read.catch((err) => {
        if (err instanceof ReaderGone) return onLoop(sql, args)
        throw err
      })
    },
    close() {
      closed = true
      const t = thread
      thread = undefined
      // ended at once, even in a statement: a thread that outlives its database (its own end, or an
      // end after a last message) made the package's addon abort the process in the test runner
      t?.terminate()
      failAll(new Error('the database is closed'))
    },
  }
}
