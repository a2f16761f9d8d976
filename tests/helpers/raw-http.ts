/** A raw TCP client for transport tests: Bun's fetch cannot send LOOKUP (it silently turns it into GET). */
import { connect, type Socket } from 'node:net'

export interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/** Parses as many complete HTTP/1.1 responses as `buf` holds. */
export function parseResponses(buf: Buffer): { responses: RawResponse[]; rest: Buffer } {
  const responses: RawResponse[] = []
  let at = 0
  for (;;) {
    const headEnd = buf.indexOf('\r\n\r\n', at)
    if (headEnd < 0) break
    const lines = buf.toString('latin1', at, headEnd).split('\r\n')
    const status = Number(lines[0]!.split(' ')[1])
    const headers: Record<string, string> = {}
    for (const l of lines.slice(1)) {
      const i = l.indexOf(':')
      headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim()
    }
    let p = headEnd + 4
    let body = ''
    if (headers['transfer-encoding'] === 'chunked') {
      const parts: Buffer[] = []
      for (;;) {
        const le = buf.indexOf('\r\n', p)
        if (le < 0) return { responses, rest: buf.subarray(at) }
        const size = parseInt(buf.toString('latin1', p, le), 16)
        if (buf.length < le + 2 + size + 2) return { responses, rest: buf.subarray(at) }
        parts.push(buf.subarray(le + 2, le + 2 + size))
        p = le + 2 + size + 2
        if (size === 0) break
      }
      body = Buffer.concat(parts).toString()
    } else {
      const len = status === 101 || status === 204 || status === 304 ? 0 : Number(headers['content-length'] ?? 0)
      if (buf.length < p + len) break
      body = buf.toString('utf8', p, p + len)
      p += len
    }
    responses.push({ status, headers, body })
    at = p
  }
  return { responses, rest: buf.subarray(at) }
}

export class RawClient {
  private buf = Buffer.alloc(0)
  private closed = false
  readonly socket: Socket

  private constructor(socket: Socket) {
    this.socket = socket
    socket.on('data', (d: Buffer) => (this.buf = Buffer.concat([this.buf, d])))
    socket.on('close', () => (this.closed = true))
    socket.on('error', () => (this.closed = true))
  }

  /** `localAddress` picks the client's own address (any of 127.0.0.0/8 works on loopback). */
  static open(port: number, host = '127.0.0.1', localAddress?: string): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const s = connect({ port, host, localAddress }, () => resolve(new RawClient(s)))
      s.once('error', reject)
    })
  }

  write(data: string | Buffer): void {
    this.socket.write(data)
  }

  /** Sends the data in pieces of `size` bytes, `delayMs` apart. */
  async trickle(data: string | Buffer, size: number, delayMs: number): Promise<void> {
    const b = Buffer.from(data)
    for (let i = 0; i < b.length; i += size) {
      this.socket.write(b.subarray(i, i + size))
      await Bun.sleep(delayMs)
    }
  }

  /** Waits until `count` complete responses arrived (or the connection closed, or the timeout). */
  async responses(count: number, timeoutMs = 5000): Promise<RawResponse[]> {
    const until = Date.now() + timeoutMs
    for (;;) {
      const { responses } = parseResponses(this.buf)
      if (responses.length >= count || this.closed || Date.now() > until) return responses
      await Bun.sleep(2)
    }
  }

  async closedWithin(ms: number): Promise<boolean> {
    const until = Date.now() + ms
    while (!this.closed && Date.now() < until) await Bun.sleep(5)
    return this.closed
  }

  raw(): Buffer {
    return this.buf
  }

  end(): void {
    this.socket.end()
  }
}

/** One request line + headers + optional body, as bytes a server reads. */
export function httpRequest(method: string, path: string, headers: Record<string, string> = {}, body?: string): string {
  const h = {
    host: 'test.local',
    ...headers,
    ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}),
  }
  return `${method} ${path} HTTP/1.1\r\n${Object.entries(h)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n')}\r\n\r\n${body ?? ''}`
}

export interface WriteFirstResult {
  responses: RawResponse[]
  /** A write failed (the server reset the connection): what a lingering close prevents. */
  writeError?: string
  /** The server closed the connection (after the answers it sent). */
  closed: boolean
}

/**
 * A client that writes its whole request before it reads anything, as many simple clients do: the
 * head, `bodyBytes` of body (framed as chunks of 64 KiB when `chunked`), then `after` (a pipelined
 * request), and only then reads, until `count` answers, a close, or `readMs`.
 */
export function writeAllThenRead(
  port: number,
  head: string,
  bodyBytes: number,
  options: { chunked?: boolean; after?: string; count?: number; readMs?: number } = {},
): Promise<WriteFirstResult> {
  const piece = Buffer.alloc(64 * 1024, 0x20)
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0)
    let writeError: string | undefined
    let closed = false
    const s = connect({ port, host: '127.0.0.1' })
    s.pause() // nothing is read until every byte is written
    // a server that neither reads nor closes leaves the writes waiting: that is a failure too
    const stalled = setTimeout(() => {
      writeError ??= 'stalled: the server stopped reading'
      finish()
    }, 15_000)
    let reading: Timer | undefined
    const finish = () => {
      clearTimeout(stalled)
      clearTimeout(reading)
      s.destroy()
      resolve({ responses: parseResponses(buf).responses, writeError, closed })
    }
    s.on('error', (e) => {
      writeError ??= e.message
      finish()
    })
    s.on('close', () => {
      closed = true
      finish()
    })
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d])
      if (parseResponses(buf).responses.length >= (options.count ?? 1)) finish()
    })
    const write = (data: string | Buffer) => new Promise<boolean>((done) => s.write(data, (err) => done(!err)))
    s.once('connect', async () => {
      let ok = await write(head)
      for (let sent = 0; ok && sent < bodyBytes; sent += piece.length) {
        const n = Math.min(piece.length, bodyBytes - sent)
        const data = n === piece.length ? piece : piece.subarray(0, n)
        ok = await write(options.chunked ? Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), data, CRLF]) : data)
      }
      if (ok && options.chunked) ok = await write('0\r\n\r\n')
      if (ok && options.after) ok = await write(options.after)
      if (!ok) return
      clearTimeout(stalled)
      s.resume()
      reading = setTimeout(finish, options.readMs ?? 5000)
    })
  })
}

const CRLF = Buffer.from('\r\n')
