/**
 * RFC 6455 framing for the websockets the front serves itself (./front-socket.ts): the handshake's
 * accept key, server frames (unmasked), and a reader of client frames (masked) that hands over
 * whole messages, answers what the protocol asks of it (pong, close) and says why it must close
 * (1002 a protocol error, 1007 text that is not UTF-8, 1009 a message over the limit). No
 * extension is offered (Bun.serve's per-message deflate is off here too), so RSV bits are errors.
 */

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'

export const OP_CONTINUATION = 0x0
export const OP_TEXT = 0x1
export const OP_BINARY = 0x2
export const OP_CLOSE = 0x8
export const OP_PING = 0x9
export const OP_PONG = 0xa

/** The Sec-WebSocket-Accept of a key, or null when the key is not 16 bytes in base64 (not a websocket handshake). */
export function acceptKey(key: string | null): string | null {
  if (!key || !/^[A-Za-z0-9+/]{22}==$/.test(key)) return null
  return new Bun.CryptoHasher('sha1').update(key + GUID).digest('base64')
}

/** A server frame, FIN set, unmasked. */
export function encodeFrame(opcode: number, payload: Buffer | string): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload
  const n = body.length
  const headLength = n < 126 ? 2 : n < 65_536 ? 4 : 10
  const frame = Buffer.allocUnsafe(headLength + n)
  frame[0] = 0x80 | opcode
  if (n < 126) frame[1] = n
  else if (n < 65_536) {
    frame[1] = 126
    frame.writeUInt16BE(n, 2)
  } else {
    frame[1] = 127
    frame.writeBigUInt64BE(BigInt(n), 2)
  }
  body.copy(frame, headLength)
  return frame
}

/** A close frame's payload: the code, then the reason (cut to fit a control frame's 125 bytes). */
export function closePayload(code: number, reason: string): Buffer {
  const text = Buffer.from(reason).subarray(0, 123)
  const payload = Buffer.allocUnsafe(2 + text.length)
  payload.writeUInt16BE(code, 0)
  text.copy(payload, 2)
  return payload
}

/** What a read of client bytes asks of the socket, in order. */
export type FrameEvent =
  | { is: 'message'; data: string | Buffer }
  | { is: 'ping'; data: Buffer }
  | { is: 'pong' }
  /** The client closed (its code, 1005 when it gave none), or the socket must close for `code`. */
  | { is: 'close'; code: number; reason: string; byClient: boolean }

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** Frames one message may come in: empty continuations would otherwise pile up with no byte counted. */
export const MAX_FRAGMENTS = 1024

/** Close codes a client may send (RFC 6455 7.4). */
const validCloseCode = (code: number) =>
  (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1011) || (code >= 3000 && code <= 4999)

/** Client frames, read as they come in pieces; after a close, nothing more is read. */
export class FrameReader {
  /** Bytes of a frame not whole yet, kept as they came until `need` of them are there (joined once). */
  private rest: Buffer[] = []
  private restBytes = 0
  private need = 0
  private fragments: Buffer[] | null = null
  private fragmentsText = false
  private fragmentBytes = 0
  private done = false

  constructor(private readonly maxPayload: number) {}

  read(chunk: Buffer): FrameEvent[] {
    const events: FrameEvent[] = []
    if (this.done) return events
    if (this.restBytes + chunk.length < this.need) {
      // a large frame arriving in small pieces: joined once it is whole, not at every piece
      this.rest.push(chunk)
      this.restBytes += chunk.length
      return events
    }
    const buf = this.restBytes ? Buffer.concat([...this.rest, chunk]) : chunk
    this.need = 0
    let at = 0
    while (!this.done && buf.length - at >= 2) {
      const b0 = buf[at]!
      const b1 = buf[at + 1]!
      const opcode = b0 & 0x0f
      let length = b1 & 0x7f
      let head = 2
      if (length === 126) {
        if (buf.length - at < 4) break
        length = buf.readUInt16BE(at + 2)
        head = 4
      } else if (length === 127) {
        if (buf.length - at < 10) break
        const big = buf.readBigUInt64BE(at + 2)
        length = big > BigInt(this.maxPayload) ? this.maxPayload + 1 : Number(big)
        head = 10
      }
      const refusal = this.refusal(b0, b1, opcode, length)
      if (refusal) {
        events.push(this.fail(...refusal))
        break
      }
      if (buf.length - at < head + 4 + length) {
        this.need = head + 4 + length
        break
      }
      const mask = at + head
      const payload = Buffer.from(buf.subarray(mask + 4, mask + 4 + length)) // a copy of its own, unmasked in place
      for (let i = 0; i < length; i++) payload[i]! ^= buf[mask + (i & 3)]!
      at = mask + 4 + length
      const event = this.frame((b0 & 0x80) !== 0, opcode, payload)
      if (event) events.push(event)
    }
    const left = this.done ? 0 : buf.length - at
    this.rest = left ? [buf.subarray(at)] : []
    this.restBytes = left
    return events
  }

  /** Why a frame's head alone ends the socket (code, reason), or null. */
  private refusal(b0: number, b1: number, opcode: number, length: number): [number, string] | null {
    if (b0 & 0x70) return [1002, 'no extension was agreed (RSV bits set)']
    if (!(b1 & 0x80)) return [1002, 'a client frame must be masked']
    if (opcode >= OP_CLOSE) {
      if (opcode > OP_PONG) return [1002, `unknown opcode ${opcode}`]
      if (!(b0 & 0x80) || length > 125) return [1002, 'a control frame is one frame of at most 125 bytes']
    } else if (opcode > OP_BINARY) return [1002, `unknown opcode ${opcode}`]
    if (opcode === OP_CONTINUATION && this.fragments && this.fragments.length >= MAX_FRAGMENTS)
      return [1009, `a message comes in at most ${MAX_FRAGMENTS} frames`]
    const message = opcode < OP_CLOSE ? this.fragmentBytes + length : length // a control frame is its own
    if (message > this.maxPayload) return [1009, `a message is at most ${this.maxPayload} bytes`]
    return null
  }

  private frame(fin: boolean, opcode: number, payload: Buffer): FrameEvent | null {
    switch (opcode) {
      case OP_PING:
        return { is: 'ping', data: payload }
      case OP_PONG:
        return { is: 'pong' }
      case OP_CLOSE:
        return this.closed(payload)
      case OP_CONTINUATION:
        if (!this.fragments) return this.fail(1002, 'a continuation frame without a message begun')
        this.fragments.push(payload)
        this.fragmentBytes += payload.length
        if (!fin) return null
        return this.message(this.fragmentsText, Buffer.concat(this.fragments))
      default:
        if (this.fragments) return this.fail(1002, 'a new message began before the last one ended')
        if (fin) return this.message(opcode === OP_TEXT, payload)
        this.fragments = [payload]
        this.fragmentsText = opcode === OP_TEXT
        this.fragmentBytes = payload.length
        return null
    }
  }

  private message(text: boolean, payload: Buffer): FrameEvent {
    this.fragments = null
    this.fragmentBytes = 0
    if (!text) return { is: 'message', data: payload }
    try {
      return { is: 'message', data: utf8.decode(payload) }
    } catch {
      return this.fail(1007, 'a text message must be UTF-8')
    }
  }

  private closed(payload: Buffer): FrameEvent {
    this.done = true
    if (payload.length === 0) return { is: 'close', code: 1005, reason: '', byClient: true }
    const code = payload.length >= 2 ? payload.readUInt16BE(0) : 0
    if (!validCloseCode(code)) return this.fail(1002, 'an invalid close code')
    try {
      return { is: 'close', code, reason: utf8.decode(payload.subarray(2)), byClient: true }
    } catch {
      return this.fail(1007, 'a close reason must be UTF-8')
    }
  }

  private fail(code: number, reason: string): FrameEvent {
    this.done = true
    return { is: 'close', code, reason, byClient: false }
  }
}
