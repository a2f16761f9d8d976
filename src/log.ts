/** Line-oriented JSON logs on stdout; the level can change at run time. */
import { writeSync } from 'node:fs'
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]
const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 }

export interface Logger {
  level: LogLevel
  error(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  debug(msg: string, fields?: Record<string, unknown>): void
}

/**
 * Lines for stdout, written together once per turn of the event loop: a write per line (one system
 * call each) cost more than the rest of a point read. Errors, and whatever is pending at exit, are
 * written at once, so a crash or a stop loses no line that came before. App processes of one service
 * share stdout: a write of up to PIPE_BUF bytes is never interleaved with another's, so the text goes
 * out in pieces of whole lines within that size.
 */
const PIPE_BUF = 4096
const pending: string[] = []
let flushing = false
function flushLines(): void {
  flushing = false
  if (pending.length === 0) return
  const text = Buffer.from(`${pending.join('\n')}\n`)
  pending.length = 0
  for (let at = 0; at < text.length; ) {
    const lineEnd = text.length - at <= PIPE_BUF ? text.length - 1 : text.lastIndexOf(10, at + PIPE_BUF - 1)
    // a single line longer than PIPE_BUF goes out whole
    const end = (lineEnd >= at ? lineEnd : text.indexOf(10, at)) + 1
    at += writeSync(1, text, at, end - at)
  }
}
process.on('exit', flushLines)
export function stdoutLine(line: string, urgent = false): void {
  pending.push(line)
  if (urgent) return flushLines()
  if (!flushing) {
    flushing = true
    setImmediate(flushLines)
  }
}

export function createLogger(level: LogLevel, write: (line: string, urgent?: boolean) => void = stdoutLine): Logger {
  const log = (at: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (RANK[at] > RANK[logger.level]) return
    write(JSON.stringify({ t: new Date().toISOString(), level: at, msg, ...fields }), at === 'error')
  }
  const logger: Logger = { level, error: log('error'), warn: log('warn'), info: log('info'), debug: log('debug') }
  return logger
}
