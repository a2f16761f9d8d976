/**
 * A bare websocket client for the push bench: Bun.connect, the RFC 6455 handshake, masked text
 * frames out, and incoming frames handed over as bytes. Ten thousand WebSocket objects in one
 * process cost the client more than the server (an event object and a decoded string per frame),
 * so the bench would measure its own client; this one costs a buffer scan per frame.
 */
import type { Socket } from 'bun'

export interface BareSocket {
  /** The head of the 101 answer (its x-request-id names the process that took the socket). */
  head: string
  send(text: string): void
  close(): void
}

interface State {
  handshaken: boolean
  buf: Buffer
  onFrame: (payload: Buffer) => void
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

/** Reads every complete frame in the buffer; answers pings; returns what is left. */
function readFrames(socket: Socket<State>, buf: Buffer): Buffer {
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
    const payload = buf.subarray(at + head, at + head + len)
    if (opcode === 0x9) socket.write(maskedFrame(0xa, Buffer.from(payload)))
    else if (opcode === 0x1) socket.data.onFrame(payload)
    at += head + len
  }
  return at === buf.length ? Buffer.alloc(0) : buf.subarray(at)
}

export function connectBare(url: string, onFrame: (payload: Buffer) => void): Promise<BareSocket> {
  const { hostname, port, pathname, search } = new URL(url)
  return new Promise((resolve, reject) => {
    let socket: Socket<State> | undefined
    const state: State = {
      handshaken: false,
      buf: Buffer.alloc(0),
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
          st.buf = st.buf.length ? Buffer.concat([st.buf, chunk]) : Buffer.from(chunk)
          if (!st.handshaken) {
            const end = st.buf.indexOf('\r\n\r\n')
            if (end < 0) return
            if (!st.buf.subarray(0, 12).toString().startsWith('HTTP/1.1 101')) {
              st.failed(new Error(`upgrade refused: ${st.buf.subarray(0, end).toString()}`))
              return void s.end()
            }
            st.handshaken = true
            const head = st.buf.subarray(0, end).toString()
            st.buf = st.buf.subarray(end + 4)
            st.opened(head)
          }
          st.buf = readFrames(s, st.buf)
        },
        error: (s, err) => s.data.failed(err),
        connectError: (_s, err) => reject(err),
      },
    }).catch(reject)
  })
}
