/**
 * Requests the front answers itself, on the app's own thread: the head as ./head.ts scanned it
 * becomes a view of the request for the app (../http/inline-request.ts: no native Request is made), and
 * the answer the app leaves on it becomes bytes on the client's connection (no Response either,
 * unless the route made its own).
 * Nothing crosses the app's unix socket, which cost as much CPU as the request itself. Requests
 * whose body must stream (chunked, larger than INLINE_MAX_BODY, or held back by `Expect`), and
 * upgrade requests, still go to Bun.serve over the unix socket.
 */
import { STATUS_CODES } from 'node:http'
import type { Answer } from '../http/answer'
import { toHttpResponse } from '../http/hooks/answers'
import { InlineHeaders, InlineRequest } from '../http/inline-request'
import type { Head, KnownLines } from './head'
import { newRequestId } from '../http/request-id'

/** Bodies up to this size are read whole before the app sees them; larger ones stream through Bun.serve. */
export const INLINE_MAX_BODY = 256 * 1024
/** Response bodies up to this size go out in one write; larger ones (files) are streamed as the client takes them. */
export const INLINE_RESPONSE_PIECE = 256 * 1024

export interface InlineHead {
  method: string
  url: string
  /** By lower-case name; a header given twice has its values joined as Bun joins them (`, `, cookies `; `). */
  headers: InlineHeaders
  /** The client asked to close after this answer (Connection: close, or HTTP/1.0 without keep-alive). */
  close: boolean
}

/**
 * The methods as the code spells them: a method cut from the head is a new string each time, and
 * every map and property looked up by it (the route's handler, the metrics) would hash it anew.
 */
const KNOWN_METHODS = new Map(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].map((m) => [m, m]))

// biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII is NUL to DEL; what matters is no char above it
const ASCII = /^[\x00-\x7f]*$/
const PLAIN_CHARS = /^[\w.\-~!$&'()*+,;=:@/?%]*$/
/**
 * A request target the WHATWG URL parser keeps as it is: no dot segment (`/.`, `/%2e`), backslash
 * or byte outside ASCII. Tested in pieces: one regex with a look-ahead for the dot segments cost more.
 */
const plainTarget = (target: string) =>
  PLAIN_CHARS.test(target) && !target.includes('/.') && !(target.includes('%') && /\/%2e/i.test(target))

/** HTTP/1.1 requires a Host: the head the front answers with a 400 itself (Bun.serve's own has no body). */
export const NO_HOST = 'no-host'
/** The asterisk-form target (`OPTIONS *`, RFC 9112 3.2.4), which the front answers itself (Bun.serve's 400 has no body). */
export const ASTERISK = 'asterisk'

/**
 * The head as the app would see it over the unix socket, from the head as scanned (./head.ts): a
 * client's X-Real-IP renamed, the client's address as X-Real-IP, LOOKUP, SYNC and CLEAR as POST
 * with X-HTTP-Method-Override (./request-stream.ts rewrites the bytes the same way). NO_HOST, or
 * null when it is not one the front answers itself.
 */
export function inlineHead(
  scanned: Head,
  clientAddress: string,
  upgrade = false,
): InlineHead | typeof NO_HOST | typeof ASTERISK | null {
  const { line, custom, host } = scanned
  const sp1 = line.indexOf(' ')
  const sp2 = line.lastIndexOf(' ')
  const version = line.slice(sp2 + 1)
  if (version === 'HTTP/1.1' && host === null) return NO_HOST
  if (version !== 'HTTP/1.1' && version !== 'HTTP/1.0') return null
  // origin-form targets only: absolute-form and `*` are Bun.serve's to judge
  const target = line.slice(sp1 + 1, sp2)
  if (target === '*' && sp2 > sp1) return ASTERISK
  if (sp2 <= sp1 || target.charCodeAt(0) !== 47 /* / */) return null
  const asSent = line.slice(0, sp1)
  const method = custom ? 'POST' : (KNOWN_METHODS.get(asSent) ?? asSent)
  const lines = upgrade ? upgradeLines(scanned, clientAddress) : linesView(scanned, clientAddress)
  if (lines === null) return null
  const { headers, connection, origin } = lines
  const close =
    version === 'HTTP/1.0' ? !/\bkeep-alive\b/.test(connection) : connection !== '' && /\bclose\b/.test(connection)
  if (plainTarget(target)) return { method, url: origin + target, headers, close }
  // bytes outside ASCII: Bun.serve reads them as UTF-8, this text holds them as latin1
  if (!ASCII.test(target)) return null
  // what Bun.serve's URL would be: dot segments resolved (also %2e), backslashes as slashes, and so on
  try {
    return { method, url: new URL(target, origin).href, headers, close }
  } catch {
    return null
  }
}

/** What a head's header lines give the app: the same for every head of a connection that sends the same lines. */
interface LinesView {
  custom: Head['custom']
  clientAddress: string
  /** By lower-case name, never changed once made (the next request with the same lines reads them too). */
  headers: InlineHeaders
  /** The Connection header in lower case, or ''. */
  connection: string
  origin: string
}

/** By the lines they were made of: the view, or null for lines with Expect. */
const VIEWS = new WeakMap<KnownLines, LinesView | null>()

/**
 * The headers as the app reads them, made once for the lines a connection keeps sending (./head.ts
 * KnownLines). Null when the client waits for a 100 before its body (Expect):
 * Bun.serve sends it.
 */
function linesView(scanned: Head, clientAddress: string): LinesView | null {
  const { custom, known } = scanned
  const kept = known ? VIEWS.get(known) : undefined
  if (kept !== undefined && (kept === null || (kept.custom === custom && kept.clientAddress === clientAddress)))
    return kept
  const made = appHeaders(scanned.fields, custom, clientAddress)
  const view = made && { custom, clientAddress, ...made, origin: `http://${scanned.host || 'localhost'}` }
  if (known) VIEWS.set(known, view)
  return view
}

/** The headers of an upgrade request the front serves itself (./front-socket.ts): Upgrade kept, never cached. */
function upgradeLines(scanned: Head, clientAddress: string): LinesView | null {
  const made = appHeaders(scanned.fields, scanned.custom, clientAddress, true)
  return made && { custom: scanned.custom, clientAddress, ...made, origin: `http://${scanned.host || 'localhost'}` }
}

function appHeaders(
  fields: readonly string[],
  custom: Head['custom'],
  clientAddress: string,
  upgrade = false,
): { headers: InlineHeaders; connection: string } | null {
  const headers = new Map<string, string>()
  let connection = ''
  for (let i = 0; i < fields.length; i += 2) {
    let name = fields[i]!
    const value = fields[i + 1]!
    if (name === 'expect') return null
    if (name === 'connection') connection = value.toLowerCase()
    // an upgrade request went to Bun.serve unless the front serves it: here Upgrade is only renamed, as in the bytes
    if (name === 'x-real-ip') name = 'x-untr-ip'
    else if (name === 'upgrade' && !upgrade) name = 'x-upgrd'
    addHeader(headers, name, value)
  }
  if (custom) addHeader(headers, 'x-http-method-override', custom)
  headers.set('x-real-ip', clientAddress)
  return { headers: new InlineHeaders(headers), connection }
}

/** Repeated lines are one list, as Bun's Headers join them (cookies with `; `). */
function addHeader(headers: Map<string, string>, name: string, value: string): void {
  const before = headers.get(name)
  headers.set(name, before === undefined ? value : `${before}${name === 'cookie' ? '; ' : ', '}${value}`)
}

/**
 * The Request the app gets for a request the front answers in-process: it says the answer is
 * written by the front (`inline`), which then needs no Response body or headers of the app's own.
 */
export const inlineRequest = (head: InlineHead, bytes: Buffer | null): Request =>
  new InlineRequest(head.method, head.method, head.url, head.headers, bytes).asRequest()

/** The time of an answer's Date header; answers of the same second share the string. */
let dateSecond = 0
let dateText = ''
function httpDate(): string {
  const second = Math.floor(Date.now() / 1000)
  if (second !== dateSecond) {
    dateSecond = second
    dateText = new Date(second * 1000).toUTCString()
  }
  return dateText
}

const NO_HOST_BODY = JSON.stringify({
  error_code: 1400,
  error_message: 'an HTTP/1.1 request must name its host in the Host header',
  error_details: { field: 'host' },
})
/** An error body of the front's own (ASCII: its length is its bytes), under a request id of its own. */
const frontError = (status: number, body: string): Answer => ({
  status,
  headers: { 'content-type': 'application/json', 'x-request-id': newRequestId() },
  cookies: [],
  body,
  bytes: body.length,
})

/** The answer to a head without Host: the connection ends after it, as Bun.serve ends it. */
export const noHostAnswer = (): Answer => frontError(400, NO_HOST_BODY)

const ODD_UPGRADE_BODY = JSON.stringify({
  error_code: 1400,
  error_message: 'a websocket upgrade request must have a path as its target and no Expect header',
})
/**
 * The answer to an upgrade request the front cannot view as the app would (an absolute or odd
 * target, Expect): every websocket of a process is the front's, so that one publish reaches a topic.
 */
export const oddUpgradeAnswer = (): Answer => frontError(400, ODD_UPGRADE_BODY)

/** The answer to a declared body larger than its route takes: the app's own 413 (payloadTooLarge), without the app. */
export function tooLargeAnswer(limit: number): Answer {
  const body = JSON.stringify({
    error_code: 2413, // payloadTooLarge's (errors.ts: 1413 is the spec's)
    error_message: `request body is larger than the limit of ${limit} bytes`,
    error_details: { field: 'body' },
  })
  return frontError(413, body)
}

const SERVED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, LOOKUP, SYNC, CLEAR'
const ASTERISK_BODY = JSON.stringify({
  error_code: 1400,
  error_message: 'the request target * names the server, not a resource: only OPTIONS takes it',
  error_details: { field: 'target' },
})
/**
 * The answer to an asterisk-form request: what the server serves, to OPTIONS; a 400 to any other
 * method. The connection ends after it (a body it may have is not read).
 */
export const asteriskAnswer = (method: string): Answer =>
  method === 'OPTIONS'
    ? {
        status: 204,
        headers: { allow: SERVED_METHODS, 'x-request-id': newRequestId() },
        cookies: [],
        body: null,
        bytes: 0,
      }
    : frontError(400, ASTERISK_BODY)

/** Headers the front writes itself. */
const OWN = new Set(['content-length', 'transfer-encoding', 'connection', 'date'])

export interface InlineAnswer {
  /**
   * The head, and the whole body when it fits in one piece: text when all of it is ASCII (a byte a
   * character: no buffer is made for it, nor its length in bytes counted again), else bytes.
   */
  bytes: Buffer | string
  /** A larger body (a file), to send in pieces after `bytes`. */
  rest: Blob | null
  /** The connection ends after this answer (asked by the client, or by the app: a body it could not drop). */
  close: boolean
}

const noBody = (status: number) => status === 204 || status === 304 || status < 200
/** A header value that would end its line: Bun's Headers refuse it, and so does the gateway. */
const breaksLine = (value: string) => value.includes('\n') || value.includes('\r')
/** Anything in a header value but printable ASCII and tabs: asked once, the rare value is then looked at. */
const UNUSUAL = /[^\t\x20-\x7e]/

/** A header value or cookie as it may be written; false when it is not all ASCII. */
function plainValue(value: string, what: string): boolean {
  if (!UNUSUAL.test(value)) return true
  if (breaksLine(value)) throw new Error(`${what} holds a line break`)
  return ASCII.test(value)
}

/**
 * The status line and headers of an answer, up to where its length goes. The front writes Date,
 * Connection and the length itself; `given` is a Content-Length the answer named, `close` whether
 * it (or the client) asked the connection to end.
 */
function headOf(
  status: number,
  headers: Record<string, string> | Headers,
  cookies: readonly string[],
  close: boolean,
): { head: string; close: boolean; given: number; ascii: boolean } {
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}\r\n`
  let given = -1
  let ascii = true
  const line = (name: string, value: string) => {
    const n = name.length // the lengths of OWN's names: a name of another length is not one of them
    if ((n === 4 || n === 10 || n === 14 || n === 17) && OWN.has(name.toLowerCase())) {
      const lower = name.toLowerCase()
      if (lower === 'content-length') given = Number(value)
      if (lower === 'connection' && value === 'close') close = true
      return
    }
    if (!plainValue(value, `header ${name}`)) ascii = false
    head += `${name}: ${value}\r\n`
  }
  // a record is walked in place: Object.entries cost a point read more than the rest of its head
  if (headers instanceof Headers) for (const [name, value] of headers) line(name, value)
  else for (const name in headers) if (Object.hasOwn(headers, name)) line(name, headers[name]!)
  for (const cookie of cookies) {
    if (!plainValue(cookie, 'a cookie')) ascii = false
    head += `set-cookie: ${cookie}\r\n`
  }
  head += `date: ${httpDate()}\r\n`
  if (close) head += 'connection: close\r\n'
  return { head, close, given, ascii }
}

/**
 * An answer as HTTP/1.1 bytes: a Content-Length body, none for HEAD, 204 and 304. Synchronous
 * unless the route made a Response, whose body is read first.
 */
export function inlineAnswer(
  answer: Answer,
  headRequest: boolean,
  close: boolean,
): InlineAnswer | Promise<InlineAnswer> {
  if (answer.body instanceof Response) return responseAnswer(toHttpResponse(answer), headRequest, close)
  const status = answer.status
  const made = headOf(status, answer.headers, answer.cookies, close)
  let head = made.head
  if (noBody(status)) return { bytes: textBytes(`${head}\r\n`, made.ascii), rest: null, close: made.close }
  const body = headRequest ? null : answer.body
  if (typeof body === 'string') {
    // `bytes` is the text's length in UTF-8 (../http/hooks/answers.ts): the same as its length when it is ASCII
    head += `content-length: ${answer.bytes}\r\n\r\n`
    return { bytes: textBytes(head + body, made.ascii && answer.bytes === body.length), rest: null, close: made.close }
  }
  head += `content-length: ${body?.byteLength ?? 0}\r\n\r\n`
  return { bytes: withBody(head, body), rest: null, close: made.close }
}

/** Text as it goes to the socket: as it is when ASCII, else its UTF-8 bytes. */
const textBytes = (text: string, ascii: boolean) => (ascii ? text : Buffer.from(text))

function withBody(head: string, body: Uint8Array | null): Buffer {
  const bytes = Buffer.allocUnsafe(head.length + (body?.byteLength ?? 0))
  bytes.write(head, 0, 'latin1')
  if (body) bytes.set(body, head.length)
  return bytes
}

/** A Response of a route's own (a file, a page) as HTTP/1.1 bytes. */
async function responseAnswer(response: Response, headRequest: boolean, close: boolean): Promise<InlineAnswer> {
  const status = response.status
  const made = headOf(status, response.headers, [], close)
  let head = made.head
  close = made.close
  if (noBody(status)) return { bytes: Buffer.from(`${head}\r\n`, 'latin1'), rest: null, close }
  const blob = response.body ? await response.blob() : null
  const size = blob?.size ?? 0
  // a HEAD answer tells the length its GET would have, as far as the route said it
  head += `content-length: ${headRequest && size === 0 && made.given >= 0 ? made.given : size}\r\n\r\n`
  if (headRequest || !blob || size === 0) return { bytes: Buffer.from(head, 'latin1'), rest: null, close }
  if (size > INLINE_RESPONSE_PIECE) return { bytes: Buffer.from(head, 'latin1'), rest: blob, close }
  return { bytes: withBody(head, await blob.bytes()), rest: null, close }
}
