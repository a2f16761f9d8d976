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
 * written at once, so a crash or a stop loses no line that came before.
 */
const pending: string[] = []
let flushing = false
function flushLines(): void {
  flushing = false
  if (pending.length === 0) return
  const text = `${pending.join('\n')}\n`
  pending.length = 0
  writeSync(1, text)
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
