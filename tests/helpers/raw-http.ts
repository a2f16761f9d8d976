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
