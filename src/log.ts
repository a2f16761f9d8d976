/** Line-oriented JSON logs on stdout; the level can change at run time. */
import { FLUSH_MS, LogRing } from './log-ring'
import { type ToLogThread, writeLines } from './log-thread'
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]
/** The levels a node takes at run time (PATCH of a node): `off` writes no line at all. */
export const NODE_LOG_LEVELS = [...LOG_LEVELS, 'off'] as const
export type NodeLogLevel = (typeof NODE_LOG_LEVELS)[number]
const RANK: Record<NodeLogLevel, number> = { off: -1, error: 0, warn: 1, info: 2, debug: 3 }

export interface Logger {
  level: NodeLogLevel
  error(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  debug(msg: string, fields?: Record<string, unknown>): void
  /** The line of one answered request (at info): the hot path's own, cheaper than `info`. */
  request(line: RequestLine): void
}

export interface RequestLine {
  id: string
  method: string
  route: string
  status: number
  ms: number
  bytes: number
  actor?: string
  domain?: string
  client: string
}

/**
 * Text for between the quotes of a JSON string: as it is when JSON carries it so (a route, an id, an
 * address), without a new string for it; anything else escaped by JSON.stringify.
 */
const PLAIN = /^[\w.:/*@%[\]-]*$/
const inQuotes = (s: string) => (PLAIN.test(s) ? s : JSON.stringify(s).slice(1, -1))

/**
 * Lines for stdout, written together every FLUSH_MS (or once PENDING_MAX bytes wait): a write per
 * line, or even per turn of the event loop, cost more than the rest of a point read. The service
 * has them written on a thread of its own (./log-thread.ts, see `writeLinesOffThread`), which
 * takes them from a ring in shared memory (./log-ring.ts); elsewhere (commands, tests) they are
 * written here. PENDING_MAX stays within a pipe's 64 KiB, so a flush into a pipe its reader keeps
 * up with does not block. Each line is encoded as it comes: kept as strings until the flush, they
 * cost a point read 2-4 % more (the collector's work). Lines the ring has no room for (a writer
 * that fell behind) wait in the pending buffer, in order, and never hold the request thread.
 * Errors, and whatever is pending at exit, are written before the process goes on, so a crash or
 * a stop loses no line that came before.
 */
const PENDING_MAX = 32 * 1024
/** How long an error line or the exit waits for the thread to write what came before. */
const WAIT_WRITTEN_MS = 2000
let pending = Buffer.allocUnsafe(PENDING_MAX + 64 * 1024)
let used = 0
let timer: ReturnType<typeof setTimeout> | undefined
let sharedStdout = false
let ring: LogRing | null = null

/** This process shares stdout with the other app processes of its service. */
export function shareStdout(): void {
  sharedStdout = true
  ring?.shareStdout()
}

/** From now on the lines are written by a thread of their own. */
export function writeLinesOffThread(): void {
  if (ring) return
  flushLines()
  const started = LogRing.create()
  if (sharedStdout) started.shareStdout()
  // the compiled binary carries this file as an entrypoint at its root (scripts/build.ts)
  const worker = new Worker(new URL('./log-thread.ts', import.meta.url).href)
  worker.postMessage({ ring: started.shared } satisfies ToLogThread)
  worker.onerror = (e) => {
    if (ring !== started) return
    ring = null
    process.stderr.write(`the log thread failed (${e.message}): lines are written by the service's own thread\n`)
    writeLines(started.unwritten(), sharedStdout)
    flushLines()
  }
  worker.unref()
  ring = started
}

/** Moves pending lines into the ring, as many as it has room for. */
function movePending(into: LogRing): void {
  if (used === 0) return
  let taken = into.putBytes(pending.subarray(0, used))
  // a line longer than the whole ring is written here, once everything before it is
  if (taken === 0 && into.waiting() === 0) {
    const end = pending.indexOf(10) + 1
    writeLines(pending.subarray(0, end), sharedStdout)
    taken = end
  }
  pending.copyWithin(0, taken, used)
  used -= taken
}

function flushLines(waitWritten = false): void {
  clearTimeout(timer)
  timer = undefined
  if (!ring) {
    if (used > 0) writeLines(pending.subarray(0, used), sharedStdout)
    used = 0
    return
  }
  movePending(ring)
  if (waitWritten) {
    const deadline = Date.now() + WAIT_WRITTEN_MS
    while (used > 0 && ring.waitWritten(Math.max(0, deadline - Date.now()))) movePending(ring)
    ring.waitWritten(Math.max(0, deadline - Date.now()))
  }
  // lines the ring had no room for are tried again
  if (used > 0) timer = setTimeout(() => flushLines(), FLUSH_MS).unref()
}
process.on('exit', () => flushLines(true))
const scratch = Buffer.allocUnsafe(64 * 1024)
export function stdoutLine(line: string, urgent = false): void {
  if (ring && used === 0 && ring.putLine(line, scratch)) {
    if (urgent) flushLines(true)
    return
  }
  const most = line.length * 3 + 1
  if (used + most > pending.length) {
    if (!ring) flushLines()
    // a writer that fell behind: the pending lines grow, in order, instead of holding the thread
    if (used + most > pending.length)
      pending = Buffer.concat([pending.subarray(0, used)], Math.max(2 * pending.length, used + most))
  }
  used += pending.write(line, used)
  pending[used++] = 10
  if (urgent || (!ring && used > PENDING_MAX)) {
    flushLines(urgent)
    return
  }
  // unref: pending lines never keep a process alive; the exit handler writes them
  timer ??= setTimeout(() => flushLines(), FLUSH_MS).unref()
}

/** The time of a log line; lines of the same millisecond share the string. */
let stampMs = 0
let stamp = ''
function now(): string {
  const ms = Date.now()
  if (ms !== stampMs) {
    stampMs = ms
    stamp = new Date(ms).toISOString()
  }
  return stamp
}

export function createLogger(level: LogLevel, write: (line: string, urgent?: boolean) => void = stdoutLine): Logger {
  const log = (at: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (RANK[at] > RANK[logger.level]) return
    // the fields' own JSON spliced in: a spread copy of them cost more than the line's stringify
    const rest = fields ? JSON.stringify(fields) : '{}'
    const head = `{"t":"${now()}","level":"${at}","msg":${JSON.stringify(msg)}`
    write(rest === '{}' ? `${head}}` : `${head},${rest.slice(1)}`, at === 'error')
  }
  /**
   * The end of a request line, who asked what, repeats from one request to the next of the same
   * caller: the last one's text is kept and not escaped and joined again (a point read's line cost
   * a fifth of its time in the app).
   */
  let last: { method: string; route: string; actor?: string; domain?: string; client: string; text: string } | null =
    null
  const callerText = (r: RequestLine) => {
    const l = last
    if (
      l &&
      l.client === r.client &&
      l.actor === r.actor &&
      l.domain === r.domain &&
      l.route === r.route &&
      l.method === r.method
    )
      return l.text
    const who = `${r.actor ? `,"actor":"${inQuotes(r.actor)}"` : ''}${r.domain ? `,"domain":"${inQuotes(r.domain)}"` : ''}`
    const text = `"method":"${inQuotes(r.method)}","route":"${inQuotes(r.route)}"${who},"client":"${inQuotes(r.client)}"}`
    last = { method: r.method, route: r.route, actor: r.actor, domain: r.domain, client: r.client, text }
    return text
  }
  // built as text: an object per request and a generic stringify of it cost about 3 µs a request
  const request = (r: RequestLine) => {
    if (RANK.info > RANK[logger.level]) return
    write(
      `{"t":"${now()}","level":"info","msg":"request","id":"${inQuotes(r.id)}","status":${r.status},"ms":${r.ms},"bytes":${r.bytes},${callerText(r)}`,
    )
  }
  const logger: Logger = {
    level,
    error: log('error'),
    warn: log('warn'),
    info: log('info'),
    debug: log('debug'),
    request,
  }
  return logger
}
