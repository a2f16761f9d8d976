/**
 * The gateway's view of one client connection's bytes: it finds request boundaries (heads, read by
 * ./head.ts; Content-Length and chunked bodies), rewrites the request line of
 * LOOKUP, SYNC and CLEAR into `POST` + `X-HTTP-Method-Override`, and adds the client address to
 * every head. Everything else passes through as the same bytes. It must be at least as strict as
 * Bun's own parser, so both always agree on where a request ends (reference/gateway-findings.md).
 */
import { rawPathOf } from '../http/body-limits'
import { CUSTOM_METHODS, type CustomMethod, type Head, type KnownLines, scanHead } from './head'

const CR = 13
const LF = 10
const CRLF = Buffer.from('\r\n')
const CRLFCRLF = Buffer.from('\r\n\r\n')
const POST = Buffer.from('POST')

/** Heads larger than this are answered 431. */
export const MAX_HEAD_BYTES = 16 * 1024
/**
 * 13 hex digits stay below 2^52, so a chunk size (leading zeros included) can never grow past
 * Number.MAX_SAFE_INTEGER and lose precision; longer size fields are malformed (400). Sizes above the
 * body limit are refused long before that (413).
 */
export const MAX_CHUNK_SIZE_DIGITS = 13

const OVERRIDE_LINE = Object.fromEntries(
  CUSTOM_METHODS.map((m) => [m, Buffer.from(`X-HTTP-Method-Override: ${m}\r\n`)]),
) as Record<CustomMethod, Buffer>
const RENAMED_UPGRADE = Buffer.from('X-Upgrd') // same length as "Upgrade"
const RENAMED_REAL_IP = Buffer.from('X-Untr-IP') // same length as "X-Real-IP"

type State =
  | 'head'
  | 'body'
  | 'chunk-size'
  | 'chunk-ext'
  | 'chunk-size-lf'
  | 'chunk-data'
  | 'chunk-data-cr'
  | 'chunk-data-lf'
  | 'trailer-start'
  | 'trailer-line'
  | 'trailer-line-lf'
  | 'trailer-end-lf'
  | 'upgrade'
  | 'failed'

/** 400 malformed, 413 a body or chunk larger than the body limit, 431 a head larger than MAX_HEAD_BYTES. */
export type FailStatus = 400 | 413 | 431

export interface PushResult {
  /** Bytes to send upstream, in order. */
  out: Buffer[]
  /** Where in `out` each request that began in these bytes starts. */
  starts: RequestStart[]
  /** The connection must be answered with this status and closed. */
  fail?: FailStatus
  /** An upgrade request went upstream; these later bytes wait for its answer. */
  held?: Buffer
}

export interface RequestStart {
  at: number
  /** A HEAD request: its answer has no body. */
  head: boolean
  /** How many entries of `out` the (rewritten) head takes. */
  parts: number
  /** The Content-Length of its body; -1 for a chunked body, or for an upgrade request (it has none). */
  bodyBytes: number
  /** Its head as scanned: request line and fields (names in lower case) as the client sent them, not rewritten. */
  scanned: Head
  /** Its declared body is larger than its route takes (this limit): answered 413, the body dropped unsent. */
  refused?: number
}

/** The routes' own limits (../http/body-limits.ts), asked only of a body larger than the smallest of them. */
export interface RouteLimits {
  smallest: number
  /** `overridable`: a POST that may carry a client's X-HTTP-Method-Override. */
  of(method: string, rawPath: string, overridable: boolean): number
}

/** The limit of the route a head names. */
function routeLimit(limits: RouteLimits, head: Head): number {
  const { line, custom } = head
  const sp = line.indexOf(' ')
  const target = line.slice(sp + 1, line.lastIndexOf(' '))
  const method = custom ?? line.slice(0, sp)
  return limits.of(method, rawPathOf(target), !custom && method === 'POST')
}

/**
 * A copy of a head's bytes: a view into the bytes a socket read (`subarray`) first gives them a
 * buffer of their own to be a view of, which cost several times the copy (3 % of a point read's
 * profile); most heads are answered in-process and never sent on.
 */
function copyOf(buf: Buffer, from: number, to: number): Buffer {
  const copy = Buffer.allocUnsafe(to - from)
  buf.copy(copy, 0, from, to)
  return copy
}

export class RequestStream {
  private state: State = 'head'
  private partial: Buffer | null = null
  /** When the pending incomplete head started arriving (for the 408: the machine's tick, ./machine.ts). */
  partialSince = 0
  private remaining = 0
  private digits = 0
  private requests = 0
  private failStatus: FailStatus = 400
  /** The body being read is dropped, not sent on (a refused one). */
  private dropping = false
  /** The limit of the chunked body being read: no chunk may be larger. */
  private chunkLimit = 0
  /** The last head's header lines (./head.ts): the next head that sends the same is not scanned again. */
  private lastLines: KnownLines | null = null

  /**
   * `realIp` is the complete header line added to every head: `X-Real-IP: 1.2.3.4\r\n`.
   * `maxBodyBytes`, the largest body any route takes, caps a declared Content-Length and a single
   * chunk (the whole body may not be larger anyway). `routes`: each route's own limit, which a
   * declared length past it gets a 413 for without the app seeing the request (a chunked body is
   * counted by the app as it reads it; here only each chunk's size is held to the limit).
   * `knownLines` false scans every head anew: the reference the head cache is fuzzed against.
   */
  constructor(
    private readonly realIp: Buffer,
    private readonly maxBodyBytes: number,
    private readonly routes?: RouteLimits,
    private readonly knownLines = true,
  ) {}

  get waitingForHead(): boolean {
    return this.partial !== null
  }

  /** Within a request's body (or its chunked framing): more of it is expected from the client. */
  get inBody(): boolean {
    return this.state !== 'head' && this.state !== 'upgrade' && this.state !== 'failed'
  }

  /** After an upgrade request: the upstream did not switch protocols, so parsing resumes. */
  upgradeDeclined(): void {
    if (this.state === 'upgrade') this.state = 'head'
  }

  push(chunk: Buffer, now: number): PushResult {
    let buf = chunk
    if (this.partial) {
      const before = this.partial.length
      buf = Buffer.concat([this.partial, chunk])
      // A CR held back from a blank line between requests is settled by its LF alone; waiting for a
      // whole head here would leave an idle connection looking like a slow head (and get it a 408).
      const blankLine = buf[0] === CR && buf[1] === LF
      if (!blankLine && buf.indexOf(CRLFCRLF, Math.max(0, before - 3)) < 0) {
        if (buf.length > MAX_HEAD_BYTES) return this.failWith([], [], 431)
        this.partial = buf
        return { out: [], starts: [] }
      }
      this.partial = null
    }
    const out: Buffer[] = []
    const starts: PushResult['starts'] = []
    let seg = 0
    let p = 0
    const flush = () => {
      if (p > seg) out.push(buf.subarray(seg, p))
      seg = p
    }
    while (p < buf.length) {
      switch (this.state) {
        case 'head': {
          // empty lines between requests are tolerated, as HTTP allows
          if (buf[p] === CR && buf[p + 1] === LF) {
            p += 2
            continue
          }
          if (buf[p] === CR && p + 1 === buf.length) {
            flush()
            this.partial = Buffer.from(buf.subarray(p))
            this.partialSince = now
            return { out, starts }
          }
          const head = scanHead(buf, p, this.lastLines)
          if (head === 'incomplete') {
            if (buf.length - p > MAX_HEAD_BYTES) {
              flush()
              return this.failWith(out, starts, 431)
            }
            flush()
            this.partial = Buffer.from(buf.subarray(p))
            this.partialSince = now
            return { out, starts }
          }
          if (head === 'bad') {
            flush()
            return this.failWith(out, starts, 400)
          }
          if (this.knownLines) this.lastLines = head.known
          if (head.headEnd - p > MAX_HEAD_BYTES) {
            flush()
            return this.failWith(out, starts, 431)
          }
          // a body no route takes: refused before the app sees its head
          if (head.contentLength > this.maxBodyBytes) {
            flush()
            return this.failWith(out, starts, 413)
          }
          const limit =
            this.routes && (head.chunked || head.contentLength > this.routes.smallest)
              ? Math.min(routeLimit(this.routes, head), this.maxBodyBytes)
              : this.maxBodyBytes
          const refused = head.contentLength > limit ? limit : undefined
          flush()
          this.requests++
          const hasBody = head.chunked || head.contentLength > 0
          const upgrade = head.upgradeAt.length > 0 && this.requests === 1 && !hasBody
          if (!upgrade) for (const at of head.upgradeAt) RENAMED_UPGRADE.copy(buf, at)
          for (const at of head.realIpAt) RENAMED_REAL_IP.copy(buf, at)
          const tail = head.headEnd - 2 // the head without its final CRLF
          const at = out.length
          if (head.custom)
            out.push(POST, copyOf(buf, p + head.custom.length, tail), OVERRIDE_LINE[head.custom], this.realIp, CRLF)
          else out.push(copyOf(buf, p, tail), this.realIp, CRLF)
          const bodyBytes = head.chunked || upgrade ? -1 : refused ? 0 : head.contentLength
          starts.push({ at, head: head.head, parts: out.length - at, bodyBytes, scanned: head, refused })
          p = seg = head.headEnd
          if (upgrade) {
            this.state = 'upgrade'
            return { out, starts, held: buf.subarray(p) }
          }
          this.chunkLimit = limit
          if (head.chunked) this.startChunk()
          else if (head.contentLength > 0) {
            this.state = 'body'
            this.remaining = head.contentLength
            this.dropping = refused !== undefined
          }
          break
        }
        case 'body':
        case 'chunk-data': {
          const n = Math.min(this.remaining, buf.length - p)
          p += n
          this.remaining -= n
          if (this.dropping) seg = p
          if (this.remaining === 0) {
            this.state = this.state === 'body' ? 'head' : 'chunk-data-cr'
            this.dropping = false
          }
          break
        }
        case 'upgrade':
          flush()
          return { out, starts, held: buf.subarray(p) }
        case 'failed':
          return { out: [], starts: [], fail: this.failStatus }
        default: {
          const failed = this.framingByte(buf[p]!)
          if (failed) {
            flush()
            return this.failWith(out, starts, failed)
          }
          p++
        }
      }
    }
    flush()
    return { out, starts }
  }

  private failWith(out: Buffer[], starts: PushResult['starts'], status: FailStatus): PushResult {
    this.state = 'failed'
    this.failStatus = status
    this.partial = null
    return { out, starts, fail: status }
  }

  private startChunk(): void {
    this.state = 'chunk-size'
    this.remaining = 0
    this.digits = 0
  }

  /**
   * One byte of chunked framing (size lines, CRLFs, trailers): 0 when it fits, else the status to
   * fail with. A chunk declared larger than the body limit is refused as soon as its size passes the
   * limit, so the client gets 413 at once instead of the app waiting for data it will never accept.
   */
  private framingByte(b: number): 0 | 400 | 413 {
    switch (this.state) {
      case 'chunk-size': {
        const hex = b >= 48 && b <= 57 ? b - 48 : (b | 0x20) >= 97 && (b | 0x20) <= 102 ? (b | 0x20) - 87 : -1
        if (hex >= 0) {
          if (++this.digits > MAX_CHUNK_SIZE_DIGITS) return 400
          this.remaining = this.remaining * 16 + hex
          return this.remaining > this.chunkLimit ? 413 : 0
        }
        if (this.digits === 0) return 400
        if (b === CR) this.state = 'chunk-size-lf'
        else if (b === 59 /* ; */) this.state = 'chunk-ext'
        else return 400
        return 0
      }
      case 'chunk-ext':
        if (b === CR) this.state = 'chunk-size-lf'
        else if (b === LF) return 400
        return 0
      case 'chunk-size-lf':
        if (b !== LF) return 400
        this.state = this.remaining === 0 ? 'trailer-start' : 'chunk-data'
        return 0
      case 'chunk-data-cr':
        if (b !== CR) return 400
        this.state = 'chunk-data-lf'
        return 0
      case 'chunk-data-lf':
        if (b !== LF) return 400
        this.startChunk()
        return 0
      case 'trailer-start':
        this.state = b === CR ? 'trailer-end-lf' : 'trailer-line'
        return b === LF ? 400 : 0
      case 'trailer-line':
        if (b === CR) this.state = 'trailer-line-lf'
        else if (b === LF) return 400
        return 0
      case 'trailer-line-lf':
        if (b !== LF) return 400
        this.state = 'trailer-start'
        return 0
      case 'trailer-end-lf':
        if (b !== LF) return 400
        this.state = 'head'
        return 0
      default:
        return 400
    }
  }
}
