/**
 * Driving a write transaction in time slices (the embedded driver's `writeLong`): statements run
 * synchronously for a slice, then the event loop gets a turn (timers, sockets, other requests'
 * reads) while the one SQLite transaction stays open, so the work stays all-or-nothing and the
 * process keeps answering.
 */
import type { DbOp, TxStep } from './db'
import { normalizeDbError } from './db'

/** Work per slice: short enough that a request waiting behind it is answered well within 50 ms. */
export const SLICE_MS = 8

/** A macrotask: I/O callbacks and timers run before it (a microtask would starve them). */
const turn = () => new Promise<void>((resolve) => setTimeout(resolve, 0))

/**
 * Runs the body's statements with `execute`, pausing after each slice. `open()` says whether the
 * transaction is still open: a statement whose failure ended it ends the body too (what follows
 * would otherwise run outside any transaction). `stopped()` is asked after each pause: an error
 * it gives ends the body there (the caller rolls the transaction back).
 */
export async function driveSliced<T>(
  steps: TxStep<T>,
  execute: (op: DbOp) => unknown,
  open: () => boolean,
  stopped: () => Error | undefined = () => undefined,
  sliceMs = SLICE_MS,
): Promise<T> {
  let sliceEnd = performance.now() + sliceMs
  let next = steps.next()
  while (!next.done) {
    if (performance.now() >= sliceEnd) {
      await turn()
      const stop = stopped()
      if (stop) {
        steps.return(undefined as T) // the body's finally blocks run; nothing more is executed
        throw stop
      }
      sliceEnd = performance.now() + sliceMs
    }
    let result: unknown
    try {
      result = execute(next.value)
    } catch (err) {
      if (!open()) throw normalizeDbError(err)
      next = steps.throw(normalizeDbError(err)) // the body may handle it (e.g. a duplicate key)
      continue
    }
    next = steps.next(result)
  }
  return next.value
}
