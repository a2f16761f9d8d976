/**
 * Writes the service's log lines to stdout on a thread of its own (started by src/log.ts), as
 * pino's transports do: a write to a file or a pipe took a point read about 2 µs of the request
 * thread (7.8 % of its profile), and a pipe whose reader fell behind held every request until it
 * drained. The lines come through shared memory (./log-ring.ts), which also tells the request
 * thread what is written, so it can wait for an error line, and for everything at exit.
 */
import { writeSync } from 'node:fs'
import { LogRing } from './log-ring'

declare const self: Worker

const PIPE_BUF = 4096

/**
 * Writes whole lines to stdout. Processes sharing stdout (APP_PROCESSES > 1) write pieces of whole lines
 * within PIPE_BUF, which the kernel never interleaves with another's.
 */
export function writeLines(bytes: Uint8Array, sharedStdout: boolean): void {
  if (!sharedStdout) {
    for (let at = 0; at < bytes.length; ) at += writeSync(1, bytes, at, bytes.length - at)
    return
  }
  for (let at = 0; at < bytes.length; ) {
    const lineEnd = bytes.length - at <= PIPE_BUF ? bytes.length - 1 : bytes.lastIndexOf(10, at + PIPE_BUF - 1)
    // a single line longer than PIPE_BUF goes out whole
    const end = (lineEnd >= at ? lineEnd : bytes.indexOf(10, at)) + 1
    at += writeSync(1, bytes, at, end - at)
  }
}

/** What src/log.ts sends, once: the ring's memory. */
export type ToLogThread = { ring: SharedArrayBuffer }

if (!Bun.isMainThread) {
  // from here on the thread only waits for lines and writes them
  self.onmessage = (e: MessageEvent<ToLogThread>) => new LogRing(e.data.ring).drainForever(writeLines)
}
