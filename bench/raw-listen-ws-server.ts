// The floor of websockets a Bun.listen front serves itself (as src/gateway/front-socket.ts does):
// the RFC 6455 handshake by hand, and a POST (any path) writes one pre-encoded frame of the
// service's size and shape to every socket in a JS loop, then answers with that time as `ext.lwt`,
// as bench/raw-ws-server.ts does with Bun.serve's native publish. Bodies by Content-Length only.
import type { Socket } from 'bun'
import { pushFrameText, SUBSCRIBED } from './push-frame'

interface Conn {
  buf: Buffer
  upgraded: boolean
}

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'
const members = new Set<Socket<Conn>>()

/** An unmasked text frame, as a server sends it. */
function textFrame(text: string): Buffer {
  const payload = Buffer.from(text)
  const n = payload.length
  const head = n < 126 ? Buffer.from([0x81, n]) : Buffer.alloc(n < 65536 ? 4 : 10)
  if (n >= 126 && n < 65536) head.set([0x81, 126, n >> 8, n & 255])
  else if (n >= 65536) {
    head.set([0x81, 127])
    head.writeBigUInt64BE(BigInt(n), 2)
  }
  return Buffer.concat([head, payload])
}
const ACK = textFrame(SUBSCRIBED)

function publish(w: number, at: string): void {
  const frame = textFrame(pushFrameText(w, at))
  for (const socket of members) socket.write(frame)
}

/** HTTP: an upgrade, or a POST that publishes. */
function readHttp(socket: Socket<Conn>): void {
  const end = socket.data.buf.indexOf('\r\n\r\n')
  if (end < 0) return
  const head = socket.data.buf.subarray(0, end).toString('latin1')
  const key = /^sec-websocket-key:\s*(\S+)/im.exec(head)?.[1]
  if (key) {
    const accept = new Bun.CryptoHasher('sha1').update(key + GUID).digest('base64')
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    )
    socket.data.upgraded = true
    socket.data.buf = socket.data.buf.subarray(end + 4)
    members.add(socket)
    readFrames(socket)
    return
  }
  const length = Number(/^content-length:\s*(\d+)/im.exec(head)?.[1] ?? 0)
  if (socket.data.buf.length < end + 4 + length) return
  const body = socket.data.buf.subarray(end + 4, end + 4 + length).toString()
  socket.data.buf = socket.data.buf.subarray(end + 4 + length)
  const at = new Date().toISOString()
  publish((JSON.parse(body) as { value: { w: number } }).value.w, at)
  const answer = `{"ext":{"lwt":"${at}"}}`
  socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${answer.length}\r\n\r\n${answer}`)
  if (socket.data.buf.length) readHttp(socket)
}

/** Client frames (masked, short): each text frame is a subscribe, acknowledged. */
function readFrames(socket: Socket<Conn>): void {
  const buf = socket.data.buf
  let at = 0
  while (buf.length - at >= 6) {
    let length = buf[at + 1]! & 0x7f
    let head = 2
    if (length === 126) {
      length = buf.readUInt16BE(at + 2)
      head = 4
    }
    if (buf.length - at < head + 4 + length) break
    if ((buf[at]! & 0x0f) === 1) socket.write(ACK)
    at += head + 4 + length
  }
  socket.data.buf = buf.subarray(at)
}

const listener = Bun.listen<Conn>({
  hostname: '127.0.0.1',
  port: 0,
  socket: {
    open(socket) {
      socket.data = { buf: Buffer.alloc(0), upgraded: false }
    },
    data(socket, data) {
      socket.data.buf = socket.data.buf.length ? Buffer.concat([socket.data.buf, data]) : Buffer.from(data)
      if (socket.data.upgraded) readFrames(socket)
      else readHttp(socket)
    },
    close: (socket) => void members.delete(socket),
  },
})
console.log(`listening ${listener.port}`)
