/**
 * Reads that would hold the event loop for long (a list whose filter no index serves, over a large
 * table) run on a connection of their own, in a thread of their own (./db-reader-thread.ts): the
 * event loop serves other requests meanwhile. The file is in WAL mode, so the reader sees every
 * transaction committed before its statement starts (a write answered before the read is in it),
 * and never a transaction still open. One thread serves every database of the process, started
 * with the first such read; it is never ended (see the thread's file), and does not keep the
 * process alive. A thread that fails leaves its reads, and for RESTART_MS those that follow, to
 * the event loop.
 */
import type { Row, SqlValue } from './db'
import type { ReaderAnswer, ReaderMessage } from './db-reader-thread'

const RESTART_MS = 10_000

/** The reader thread could not answer (it failed to start, or ended). */
class ReaderGone extends Error {}

interface Waiting {
  db: number
  resolve(rows: Row[]): void
  reject(err: Error): void
}

/** The process's reader thread, its reads in flight, and who is told when it fails. */
let thread: Worker | undefined
let failedAt = Number.NEGATIVE_INFINITY
let seq = 0
const waiting = new Map<number, Waiting>()
const onFailure = new Map<number, (err: Error) => void>()

function startThread(): Worker {
  // beside this file in the source, at the bundle's root in the binary (scripts/build.ts)
  const t = new Worker(new URL('./db-reader-thread.ts', import.meta.url).href)
  const gone = (why: string) => {
    if (thread !== t) return
    thread = undefined
    failedAt = performance.now()
    const err = new ReaderGone(`the reader thread failed: ${why}`)
    for (const w of waiting.values()) w.reject(err)
    waiting.clear()
    for (const tell of onFailure.values()) {
      try {
        tell(err)
      } catch {
        // a listener that fails takes nothing from the others
      }
    }
  }
  t.onmessage = (event: MessageEvent<ReaderAnswer>) => {
    const a = event.data
    const w = waiting.get(a.id)
    waiting.delete(a.id)
    if ('error' in a)
      w?.reject(a.unopened ? new ReaderGone(`the reader could not open the database: ${a.error}`) : new Error(a.error))
    else w?.resolve(a.rows as Row[])
  }
  t.onerror = (event) => gone(event.message)
  t.addEventListener('close', () => gone('it ended'))
  t.unref()
  return t
}

export interface AsideReader {
  all(sql: string, args: SqlValue[]): Promise<Row[]>
  /** Refuses further reads and ends those waiting; the thread closes the connection. */
  close(): void
}

/**
 * A database's reader. A read the thread could not answer (it failed, or could not open the file)
 * runs on the event loop instead (`onLoop`); `onGone` is told once for each thread that fails, and
 * once if the file could not be opened.
 */
export function asideReader(
  file: string,
  busyTimeoutMs: number,
  onLoop: (sql: string, args: SqlValue[]) => Promise<Row[]>,
  onGone?: (err: Error) => void,
): AsideReader {
  const db = ++seq
  let openIn: Worker | undefined
  let closed = false
  let toldUnopened = false
  if (onGone) onFailure.set(db, onGone)
  return {
    all(sql, args) {
      if (closed) return Promise.reject(new Error('the database is closed'))
      if (!thread && performance.now() - failedAt < RESTART_MS) return onLoop(sql, args)
      thread ??= startThread()
      if (openIn !== thread) {
        openIn = thread
        thread.postMessage({ open: db, file, busyTimeoutMs } satisfies ReaderMessage)
      }
      const id = ++seq
      const read = new Promise<Row[]>((resolve, reject) => {
        waiting.set(id, { db, resolve, reject })
        thread!.postMessage({ id, db, sql, args } satisfies ReaderMessage)
      })
      return read.catch((err) => {
        if (!(err instanceof ReaderGone)) throw err
        if (err.message.startsWith('the reader could not open') && !toldUnopened) {
          toldUnopened = true
          onGone?.(err)
        }
        return onLoop(sql, args)
      })
    },
    close() {
      closed = true
      onFailure.delete(db)
      if (openIn && openIn === thread) thread.postMessage({ close: db } satisfies ReaderMessage)
      const err = new Error('the database is closed')
      for (const [id, w] of waiting)
        if (w.db === db) {
          waiting.delete(id)
          w.reject(err)
        }
    },
  }
}
