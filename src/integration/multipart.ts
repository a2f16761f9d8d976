/**
 * A streaming multipart/form-data reader (RFC 7578): parts one after another, each part's body as
 * chunks while they arrive, so an upload never sits whole in memory. Bun's `request.formData()`
 * buffers the entire body, which is why uploads do not use it. At most a part's headers and one
 * delimiter's length of data are held at a time.
 */
import { badRequest } from '../errors'

/** Longest header block of one part; beyond it the body is malformed rather than a large upload. */
const MAX_PART_HEAD = 16 * 1024
const CRLF = Buffer.from('\r\n')
const HEAD_END = Buffer.from('\r\n\r\n')

export interface PartHead {
  /** Header names in lower case. */
  headers: Record<string, string>
  /** The form field name (Content-Disposition `name`). */
  name: string | null
  /** The file name (`filename*` when given, else `filename`); null for a plain field. */
  filename: string | null
}

const malformed = (why: string) => badRequest(`the multipart body is malformed: ${why}`, 'body')

/** The boundary of a `multipart/form-data` Content-Type, or null for any other type. */
export function formDataBoundary(contentType: string | null): string | null {
  if (!contentType || !/^\s*multipart\/form-data\s*(;|$)/i.test(contentType)) return null
  const m = /;\s*boundary\s*=\s*(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType)
  if (!m) throw badRequest('multipart/form-data needs a boundary parameter', 'Content-Type')
  return m[1] ?? m[2]!
}

/** The part of a stream reader used here (Bun's and Node's reader types differ in extras). */
interface ChunkReader {
  read(): Promise<{ done: true; value?: Uint8Array } | { done: false; value: Uint8Array }>
  cancel(reason?: unknown): Promise<void>
}

export class MultipartReader {
  private buf: Buffer = Buffer.alloc(0)
  private readonly reader: ChunkReader
  /** `\r\n--boundary`: what ends every part's body (the first one is preceded by a virtual CRLF). */
  private readonly delimiter: Buffer
  private state: 'start' | 'body' | 'between' | 'done' = 'start'
  private ended = false

  constructor(body: ReadableStream<Uint8Array>, boundary: string) {
    this.reader = body.getReader()
    this.delimiter = Buffer.from(`\r\n--${boundary}`)
    // the first delimiter may open the body without a CRLF before it
    this.buf = Buffer.from(CRLF)
  }

  /** Reads more of the body; false at its end. */
  private async fill(): Promise<boolean> {
    if (this.ended) return false
    const next = await this.reader.read()
    if (next.done) {
      this.ended = true
      return false
    }
    const chunk = Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength)
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk])
    return true
  }

  /** The next part's head, after skipping what is left of the current part; null after the last part. */
  async next(): Promise<PartHead | null> {
    if (this.state === 'body') await this.skipBody()
    if (this.state === 'done') return null
    if (this.state === 'start') await this.skipPreamble()
    // after a delimiter: `--` closes the body, else optional padding and CRLF start a part
    while (this.buf.length < 2) if (!(await this.fill())) throw malformed('it ends after a boundary')
    if (this.buf[0] === 0x2d && this.buf[1] === 0x2d) {
      this.state = 'done'
      await this.reader.cancel().catch(() => {})
      return null
    }
    let eol = this.buf.indexOf(CRLF)
    for (; eol < 0; eol = this.buf.indexOf(CRLF)) {
      if (this.buf.length > 256) throw malformed('no line end after a boundary')
      if (!(await this.fill())) throw malformed('it ends after a boundary')
    }
    if (!/^[ \t]*$/.test(this.buf.toString('latin1', 0, eol))) throw malformed('text after a boundary')
    this.buf = this.buf.subarray(eol) // keep the CRLF: an empty header block is then `\r\n\r\n`
    let end = this.buf.indexOf(HEAD_END)
    for (; end < 0; end = this.buf.indexOf(HEAD_END)) {
      if (this.buf.length > MAX_PART_HEAD) throw malformed('the headers of a part are too long')
      if (!(await this.fill())) throw malformed('it ends inside the headers of a part')
    }
    if (end > MAX_PART_HEAD) throw malformed('the headers of a part are too long')
    const head = parseHead(this.buf.toString('utf8', 2, end))
    this.buf = this.buf.subarray(end + 4)
    this.state = 'body'
    return head
  }

  private async skipPreamble(): Promise<void> {
    for (;;) {
      const at = this.buf.indexOf(this.delimiter)
      if (at >= 0) {
        this.buf = this.buf.subarray(at + this.delimiter.length)
        this.state = 'between'
        return
      }
      this.buf = this.buf.subarray(Math.max(0, this.buf.length - this.delimiter.length + 1))
      if (!(await this.fill())) throw malformed('no boundary found')
    }
  }

  private async skipBody(): Promise<void> {
    const rest = this.body()
    while (!(await rest.next()).done) {}
  }

  /** The current part's body, chunk by chunk; read it before asking for the next part. */
  async *body(): AsyncGenerator<Uint8Array> {
    if (this.state !== 'body') return
    for (;;) {
      const at = this.buf.indexOf(this.delimiter)
      if (at >= 0) {
        const last = this.buf.subarray(0, at)
        this.buf = this.buf.subarray(at + this.delimiter.length)
        this.state = 'between'
        if (last.length) yield last
        return
      }
      // all but a tail that could be the start of the delimiter is the part's data
      const safe = this.buf.length - this.delimiter.length + 1
      if (safe > 0) {
        const chunk = this.buf.subarray(0, safe)
        this.buf = this.buf.subarray(safe)
        yield chunk
      }
      if (!(await this.fill())) throw malformed('it ends inside a part')
    }
  }

  /** Stops reading (an error, or the caller needs no more parts). */
  async cancel(): Promise<void> {
    this.state = 'done'
    await this.reader.cancel().catch(() => {})
  }
}

function parseHead(text: string): PartHead {
  const headers: Record<string, string> = {}
  for (const line of text.split('\r\n')) {
    if (line === '') continue
    const colon = line.indexOf(':')
    if (colon <= 0) throw malformed('a part header is not "name: value"')
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  const params = dispositionParams(headers['content-disposition'] ?? '')
  return { headers, name: params.name ?? null, filename: params['filename*'] ?? params.filename ?? null }
}

/** Parameters of a Content-Disposition value; `filename*` (RFC 5987) decoded. Quoted strings may escape with `\`. */
export function dispositionParams(value: string): Record<string, string> {
  const params: Record<string, string> = {}
  const re = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g
  for (const m of value.matchAll(re)) {
    const key = m[1]!.toLowerCase()
    const raw = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3]!.trim()
    if (key.endsWith('*')) {
      const ext = /^([\w!#$%&+^`{}~-]+)'[^']*'(.*)$/.exec(raw)
      if (!ext || ext[1]!.toLowerCase() !== 'utf-8') continue // other charsets: fall back to the plain form
      try {
        params[key] = decodeURIComponent(ext[2]!)
      } catch {
        throw malformed(`${key} is not valid percent-encoding`)
      }
    } else params[key] = raw
  }
  return params
}
