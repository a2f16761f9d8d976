/**
 * One request head as the gateway reads it: checked as strictly as Bun's parser (so both agree on
 * where a request ends, and a request answered in-process is one Bun.serve would take), what framing and rewriting need (length, chunked, where Upgrade and client
 * copies of X-Real-IP sit), and its request line and fields, which the front answers in-process
 * from (./inline.ts) without reading the head again. The head is read as one latin1 string: one
 * character per byte, so a position in it is an offset in the bytes.
 */

const CR = 13
const LF = 10
const SP = 32
const HT = 9
const CRLFCRLF = Buffer.from('\r\n\r\n')

export const CUSTOM_METHODS = ['LOOKUP', 'SYNC', 'CLEAR'] as const
export type CustomMethod = (typeof CUSTOM_METHODS)[number]
const CUSTOM = new Set<string>(CUSTOM_METHODS)

/**
 * A host name, an IPv4 address or a bracketed IPv6 one, with an optional port, or nothing. Anything
 * else is a 400 (RFC 9112 3.2): the app builds its URLs from Host, and a `/` or `?` in it would move
 * the path the app routes by.
 */
export const VALID_HOST = /^(?:(?:[\w.-]+|\[[\d:a-f.]+\])(?::\d{1,5})?)?$/i

const TCHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const DIGITS = /^\d{1,15}$/
/**
 * In the header lines: a control character Bun.serve refuses in a value (tab and DEL it takes; names
 * are tokens, which hold none), or a CR that does not end its line. One scan of them all.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters in header lines is its purpose
const CONTROL_OR_BARE_CR = /[\x00-\x08\x0b\x0c\x0e-\x1f]|\r(?!\n)/g

/**
 * Header names as sent, by their lower-case form: clients send the same few names on every request,
 * and a name seen before is neither checked nor lower-cased again. Bounded: long names are not
 * kept, and the map starts again once full.
 */
const KNOWN_NAMES = new Map<string, string>()
const KNOWN_NAMES_MAX = 512

function lowerName(name: string): string | null {
  const known = KNOWN_NAMES.get(name)
  if (known !== undefined) return known
  if (!TCHAR.test(name)) return null
  const lower = name.toLowerCase()
  if (name.length > 64) return lower
  // full of names a client made up: start again, so the names every client sends come back at once
  if (KNOWN_NAMES.size >= KNOWN_NAMES_MAX) KNOWN_NAMES.clear()
  KNOWN_NAMES.set(name, lower)
  return lower
}

/** What a head's header lines say: the fields and what framing and rewriting need of them. */
interface Lines {
  contentLength: number
  chunked: boolean
  /** Where each Upgrade header line starts in the bytes. */
  upgradeAt: number[]
  /** Where each client copy of X-Real-IP starts in the bytes: renamed, never believed. */
  realIpAt: number[]
  /** The header fields in order: lower-case name, value without its surrounding spaces and tabs, ... (never changed: they may be the last head's) */
  fields: readonly string[]
  /** The Host header's value, null when there is none. */
  host: string | null
}

/**
 * The header lines of a connection's last head, as bytes, and what scanning them gave: a client on a
 * kept-alive connection sends the same lines with every request, and lines equal to the last ones
 * are compared (one memcmp) instead of scanned again. Lines holding Upgrade or X-Real-IP, whose
 * places in the bytes matter, are never kept. The fields are cut from a text of the lines alone, so
 * what a connection keeps is its lines, never a long request line before them.
 */
export class KnownLines {
  constructor(
    readonly bytes: Buffer,
    readonly lines: Lines,
  ) {}
}

/** Header lines longer than this are scanned every time. */
const KNOWN_LINES_MAX = 4096

export interface Head extends Lines {
  /** Where the head ends in the bytes (after its blank line). */
  headEnd: number
  /** LOOKUP, SYNC or CLEAR: sent on as POST with X-HTTP-Method-Override. */
  custom: CustomMethod | null
  /** A HEAD request: its answer has no body whatever its Content-Length says. */
  head: boolean
  /** The request line as sent, without its CRLF. */
  line: string
  /** The header lines kept for the connection's next head (the last head's when they were the same), or null. */
  known: KnownLines | null
}

const isOws = (c: number) => c === SP || c === HT

/** A request line with its CRLF, as scanned: its method, and the line without the CRLF; null when it is malformed. */
function requestLine(text: string): { method: string; line: string } | null {
  // a line ends in CRLF, and holds no CR of its own
  const cr = text.length - 2
  if (text.charCodeAt(cr + 1) !== LF || text.indexOf('\r') !== cr) return null
  const sp = text.indexOf(' ')
  if (sp < 0 || sp >= cr) return null
  const method = text.slice(0, sp)
  return TCHAR.test(method) ? { method, line: text.slice(0, cr) } : null
}

/**
 * Scans one request head starting at `start`. `known`: the header lines of the connection's last
 * head; when this head's are the same bytes, only its request line is read.
 */
export function scanHead(buf: Buffer, start: number, known: KnownLines | null = null): Head | 'incomplete' | 'bad' {
  const end = buf.indexOf(CRLFCRLF, start)
  if (end < 0) return 'incomplete'
  const linesFrom = buf.indexOf(LF, start) + 1
  const linesTo = end + 2 // the last header line's CRLF included
  const first = requestLine(buf.toString('latin1', start, linesFrom))
  if (first === null) return 'bad'
  const size = known?.bytes.length
  const same = known && linesTo - linesFrom === size && buf.compare(known.bytes, 0, size, linesFrom, linesTo) === 0
  const lines = same ? known.lines : scanLines(buf.toString('latin1', linesFrom, linesTo), linesFrom)
  if (lines === 'bad') return 'bad'
  const { method, line } = first
  return {
    headEnd: end + 4,
    custom: CUSTOM.has(method) ? (method as CustomMethod) : null,
    head: method === 'HEAD',
    line,
    contentLength: lines.contentLength,
    chunked: lines.chunked,
    upgradeAt: lines.upgradeAt,
    realIpAt: lines.realIpAt,
    fields: lines.fields,
    host: lines.host,
    known: same ? known : keep(buf, linesFrom, linesTo, lines),
  }
}

/** The header lines to compare the next head's with; null for lines never kept. */
function keep(buf: Buffer, from: number, to: number, lines: Lines): KnownLines | null {
  if (lines.upgradeAt.length > 0 || lines.realIpAt.length > 0 || to - from > KNOWN_LINES_MAX) return null
  const bytes = Buffer.allocUnsafe(to - from)
  buf.copy(bytes, 0, from, to)
  return new KnownLines(bytes, lines)
}

/** Scans the header lines: `text`, every line with its CRLF, found at `at` in the bytes. */
function scanLines(text: string, at: number): Lines | 'bad' {
  const fields: string[] = []
  const lines: Lines = { contentLength: 0, chunked: false, upgradeAt: [], realIpAt: [], fields, host: null }
  CONTROL_OR_BARE_CR.lastIndex = 0
  if (CONTROL_OR_BARE_CR.test(text)) return 'bad'
  let sawLength = false
  let sawEncoding = false
  for (let from = 0, lf = 0; from < text.length; from = lf + 1) {
    lf = text.indexOf('\n', from)
    const lineEnd = lf - 1
    if (text.charCodeAt(lineEnd) !== CR) return 'bad'
    const colon = text.indexOf(':', from)
    if (colon <= from || colon > lineEnd) return 'bad'
    // a token: also no obsolete line folding (a line that starts blank), no whitespace before the colon
    const lower = lowerName(text.slice(from, colon))
    if (lower === null) return 'bad'
    // the value without the optional whitespace around it (spaces and tabs: no other blank)
    let valueFrom = colon + 1
    let valueTo = lineEnd
    while (valueFrom < valueTo && isOws(text.charCodeAt(valueFrom))) valueFrom++
    while (valueTo > valueFrom && isOws(text.charCodeAt(valueTo - 1))) valueTo--
    const value = text.slice(valueFrom, valueTo)
    switch (lower) {
      case 'content-length':
        if (sawLength || !DIGITS.test(value)) return 'bad'
        sawLength = true
        lines.contentLength = Number(value)
        break
      case 'transfer-encoding':
        if (sawEncoding || value.toLowerCase() !== 'chunked') return 'bad'
        sawEncoding = true
        lines.chunked = true
        break
      case 'upgrade':
        lines.upgradeAt.push(at + from)
        break
      case 'host':
        if (lines.host !== null || !VALID_HOST.test(value)) return 'bad'
        lines.host = value
        break
      case 'x-real-ip':
        lines.realIpAt.push(at + from)
        break
    }
    fields.push(lower, value)
  }
  return sawLength && sawEncoding ? 'bad' : lines
}
