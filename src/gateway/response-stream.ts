/**
 * The gateway's view of the app's responses on one connection: where each ends. The gateway hands
 * the app one request at a time, because Bun.serve closes a connection when it parses a request
 * behind a response still pending (oven-sh/bun#38128), which dropped pipelined requests. The bytes
 * pass to the client untouched; this only watches them. The app is our own Bun.serve, so this reads
 * what it writes (Content-Length or chunked bodies), not every form HTTP allows.
 */

const LF = 10
const CRLFCRLF = Buffer.from('\r\n\r\n')
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i
const CHUNKED = /\r\ntransfer-encoding:[ \t]*chunked/i

type State = 'head' | 'body' | 'chunk-size' | 'chunk-data' | 'trailers' | 'until-close' | 'switched'

export interface Observed {
  /** Final responses that ended in these bytes (interim 1xx answers do not count). */
  completed: number
  /** A 101: from its head on, the connection is a tunnel. */
  switched: boolean
}

export class ResponseStream {
  private state: State = 'head'
  private partial: Buffer | null = null
  private remaining = 0
  private line = ''

  /** `headRequest`: the response being read answers a HEAD request (no body, whatever its length says). */
  observe(chunk: Buffer, headRequest: boolean): Observed {
    let buf = chunk
    if (this.partial) {
      buf = Buffer.concat([this.partial, chunk])
      this.partial = null
    }
    const seen: Observed = { completed: 0, switched: false }
    let p = 0
    while (p < buf.length) {
      switch (this.state) {
        case 'head': {
          const end = buf.indexOf(CRLFCRLF, p)
          if (end < 0) {
            this.partial = Buffer.from(buf.subarray(p))
            return seen
          }
          const head = buf.toString('latin1', p, end + 2)
          p = end + 4
          const status = Number(head.slice(9, 12))
          if (status === 101) {
            this.state = 'switched'
            seen.switched = true
            return seen
          }
          if (status < 200) break // interim (100 Continue): the final answer follows
          const length = CONTENT_LENGTH.exec(head)
          if (headRequest || status === 204 || status === 304) seen.completed++
          else if (CHUNKED.test(head)) this.state = 'chunk-size'
          else if (length) {
            this.remaining = Number(length[1])
            if (this.remaining === 0) seen.completed++
            else this.state = 'body'
          } else this.state = 'until-close'
          break
        }
        case 'body':
        case 'chunk-data': {
          const n = Math.min(this.remaining, buf.length - p)
          p += n
          this.remaining -= n
          if (this.remaining > 0) break
          if (this.state === 'body') seen.completed++
          this.state = this.state === 'body' ? 'head' : 'chunk-size'
          break
        }
        case 'chunk-size':
        case 'trailers': {
          const lf = buf.indexOf(LF, p)
          this.line += buf.toString('latin1', p, lf < 0 ? buf.length : lf)
          if (lf < 0) return seen
          p = lf + 1
          const line = this.line.trimEnd()
          this.line = ''
          if (this.state === 'trailers') {
            if (line === '') {
              seen.completed++
              this.state = 'head'
            }
          } else {
            const size = parseInt(line, 16) // an extension after ';' is ignored by parseInt
            if (size > 0) {
              this.remaining = size + 2 // the data and its CRLF
              this.state = 'chunk-data'
            } else this.state = 'trailers'
          }
          break
        }
        case 'until-close':
        case 'switched':
          return seen
      }
    }
    return seen
  }
}
