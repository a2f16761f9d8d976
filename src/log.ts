/** Line-oriented JSON logs on stdout; the level can change at run time. */
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

export function createLogger(level: LogLevel, write: (line: string) => void = (l) => console.log(l)): Logger {
  const log = (at: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (RANK[at] > RANK[logger.level]) return
    write(JSON.stringify({ t: new Date().toISOString(), level: at, msg, ...fields }))
  }
  const logger: Logger = { level, error: log('error'), warn: log('warn'), info: log('info'), debug: log('debug') }
  return logger
}
