/**
 * A bare websocket client for the push bench: Bun.connect, the RFC 6455 handshake, masked text
 * frames out, and incoming frames handed over as bytes. Ten thousand WebSocket objects in one
 * process cost the client more than the server (an event object and a decoded string per frame),
 * so the bench would measure its own client; this one costs a buffer scan per frame. Frames are
 * read where the socket's chunk holds them and handed over as a range of it, not copied (only an
 * incomplete frame's bytes wait in a buffer of their own): what the client allocates runs its
 * collector, and a collection's pause in the bench's process was in the latency it measured.
 */
import type { Socket } from 'bun'

export interface BareSocket {
  /** The head of the 101 answer (its x-request-id names the process that took the socket). */
  head: string
  send(text: string): void
  close(): void
}

/** A text frame's payload: `buf` from `start` to `end` (valid only during the call). */
export type OnFrame = (buf: Buffer, start: number, end: number) => void

interface State {
  handshaken: boolean
  /** An incomplete frame's bytes, waiting for the rest. */
  buf: Buffer
  onFrame: OnFrame
  opened: (head: string) => void
  failed: (err: Error) => void
}

function maskedFrame(opcode: number, payload: Buffer): Buffer {
  const mask = crypto.getRandomValues(new Uint8Array(4))
  const len = payload.length
  const head =
    len < 126 ? Buffer.from([0x80 | opcode, 0x80 | len]) : Buffer.from([0x80 | opcode, 0x80 | 126, len >> 8, len & 255])
  const body = Buffer.alloc(len)
  for (let i = 0; i < len; i++) body[i] = payload[i]! ^ mask[i & 3]!
  return Buffer.concat([head, mask, body])
}

/** Reads every complete frame in the buffer; answers pings; returns where the incomplete rest begins. */
function readFrames(socket: Socket<State>, buf: Buffer): number {
  let at = 0
  for (;;) {
    if (buf.length - at < 2) break
    const opcode = buf[at]! & 0x0f
    let len = buf[at + 1]! & 0x7f
    let head = 2
    if (len === 126) {
      if (buf.length - at < 4) break
      len = buf.readUInt16BE(at + 2)
      head = 4
    } else if (len === 127) {
      if (buf.length - at < 10) break
      len = Number(buf.readBigUInt64BE(at + 2))
      head = 10
    }
    if (buf.length - at < head + len) break
    if (opcode === 0x9) socket.write(maskedFrame(0xa, Buffer.from(buf.subarray(at + head, at + head + len))))
    else if (opcode === 0x1) socket.data.onFrame(buf, at + head, at + head + len)
    at += head + len
  }
  return at
}

const EMPTY = Buffer.alloc(0)

/** Whether the payload `buf[start, end)` begins with `prefix`, compared in place. */
export const startsWith = (buf: Buffer, start: number, end: number, prefix: Buffer) =>
  end - start >= prefix.length && buf.compare(prefix, 0, prefix.length, start, start + prefix.length) === 0

export function connectBare(url: string, onFrame: OnFrame): Promise<BareSocket> {
  const { hostname, port, pathname, search } = new URL(url)
  return new Promise((resolve, reject) => {
    let socket: Socket<State> | undefined
    const state: State = {
      handshaken: false,
      buf: EMPTY,
      onFrame,
      opened: (head) =>
        resolve({
          head,
          send: (text) => void socket!.write(maskedFrame(0x1, Buffer.from(text))),
          close: () => socket!.end(),
        }),
      failed: reject,
    }
    void Bun.connect<State>({
      hostname,
      port: Number(port),
      data: state,
      socket: {
        open(s) {
          socket = s
          const key = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64')
          s.write(
            `GET ${pathname}${search} HTTP/1.1\r\nHost: ${hostname}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
          )
        },
        data(s, chunk) {
          const st = s.data
          // the chunk itself when nothing waits: its frames are read before this returns, the rest copied
          let buf = st.buf.length ? Buffer.concat([st.buf, chunk]) : chunk
          if (!st.handshaken) {
            const end = buf.indexOf('\r\n\r\n')
            if (end < 0) {
              st.buf = Buffer.from(buf)
              return
            }
            if (!buf.subarray(0, 12).toString().startsWith('HTTP/1.1 101')) {
              st.failed(new Error(`upgrade refused: ${buf.subarray(0, end).toString()}`))
              return void s.end()
            }
            st.handshaken = true
            const head = buf.subarray(0, end).toString()
            buf = buf.subarray(end + 4)
            st.opened(head)
          }
          const rest = readFrames(s, buf)
          st.buf = rest === buf.length ? EMPTY : Buffer.from(buf.subarray(rest))
        },
        error: (s, err) => s.data.failed(err),
        // closed before the 101: the promise fails rather than waits forever
        close: (s) => void (s.data.handshaken || s.data.failed(new Error('closed before the upgrade was answered'))),
        connectError: (_s, err) => reject(err),
      },
    }).catch(reject)
  })
}
