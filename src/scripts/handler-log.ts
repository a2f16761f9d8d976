/**
 * A handler's own log: the lines its script wrote with `log()` (nested calls' too), kept in the KV
 * store beside its outcome and for as long, so its page shows them wherever it ran. The service
 * log has every line; a handler keeps its first MAX_LOG_LINES and then one saying the rest are there.
 */
import type { Deps } from '../deps'
import type { LogLevel } from '../log'
import type { HandlerLogLine } from '../ports'
import type { Kv } from '~storage/kv/kv'
import { logKey, OUTCOME_TTL_MS } from './handler-domain'

export const MAX_LOG_LINES = 200
const MAX_LOG_CHARS = 2000

/** What of a running handler its log needs: the lines kept so far and the writes of them, in order. */
export interface Logged {
  domainId: string
  info: { id: string }
  logged: number
  writing: Promise<void>
}

/** Keeps one line after the ones before it; a failure to keep it is a warning, never the script's. */
export function keepLine(deps: Pick<Deps, 'kv' | 'clock' | 'log'>, h: Logged, level: LogLevel, message: string): void {
  if (h.logged > MAX_LOG_LINES) return
  const n = h.logged++
  const full = n === MAX_LOG_LINES
  const line = JSON.stringify({
    n,
    time: new Date(deps.clock.now()).toISOString(),
    level: full ? 'warn' : level,
    message: full
      ? `more than ${MAX_LOG_LINES} lines: the rest are in the service log only`
      : message.slice(0, MAX_LOG_CHARS),
  })
  const key = logKey(h.domainId, h.info.id)
  h.writing = h.writing
    .then(() => deps.kv.zadd(key, n, line, OUTCOME_TTL_MS))
    .then(
      () => {},
      (err) => deps.log.warn('a handler log line was not kept', { handler: h.info.id, error: String(err) }),
    )
}

/** The lines kept of a handler, in the order they were written. */
export async function readLog(kv: Kv, domain: string, id: string): Promise<HandlerLogLine[]> {
  return (await kv.zrange(logKey(domain, id)))
    .map((text) => JSON.parse(text) as HandlerLogLine & { n: number })
    .sort((a, b) => a.n - b.n)
    .map(({ time, level, message }) => ({ time, level, message }))
}
