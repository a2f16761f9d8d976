/**
 * Websockets the front serves itself, without the second hop: the app decides the upgrade
 * in-process, the front answers 101 and reads and writes the frames (./ws-frames.ts) on the
 * client's own connection. Relayed through Bun.serve, a frame pushed to 5,000 sockets took 22.5-24.6
 * µs of server CPU and 115 ms p99 from the commit; served here 11.8-14.2 µs and 59-68 ms
 * (bench/ws-push.ts). A `FrontSocket` is what the app's socket handlers see of Bun's
 * ServerWebSocket: `data`, `send`, `close`, `getBufferedAmount` and topics to publish to, with the
 * limits Bun.serve applies (idle timeout with pings, payload size, backpressure).
 */
import type { AdmittedSocket, AppSocket, SocketData } from '../ws/endpoint'
import type { Answer } from '../http/answer'
import { type Chunk, queued } from './conn-state'
import type { Conn, ConnSocket } from './connection'
import {
  acceptKey,
  closePayload,
  encodeFrame,
  FrameReader,
  OP_BINARY,
  OP_CLOSE,
  OP_PING,
  OP_PONG,
  OP_TEXT,
} from './ws-frames'

/** A message as one frame: text for a string, binary for bytes. */
const messageFrame = (message: string | Buffer) =>
  encodeFrame(typeof message === 'string' ? OP_TEXT : OP_BINARY, message)

/** The app's side of an upgrade: admitted, or the answer that refuses it (or answers a path with no endpoint). */
export type SocketAdmission = (request: Request) => Promise<AdmittedSocket | Answer>

/** What of the front the sockets use. */
export interface SocketIo {
  toClient(c: Conn, data: Chunk): void
  /** The 101 went out: the connection reads frames from now on. */
  opened(c: Conn): void
  /** The socket closes: its close frame is the last thing sent. */
  closing(c: Conn): void
  /** The upgrade was refused with this answer (in-process, as any answer to the request: `head`, `close`). */
  refused(c: Conn, answer: Answer, head: boolean, close: boolean): void
  /** Writes what waits for the turn's end now, as far as the socket takes it. */
  flush(c: Conn): void
}

/** Unsent bytes past this are flushed before they are judged: what waits for the turn's end is not the client's backlog. */
const JUDGED_AFTER_FLUSH = 64 * 1024

/** The topics of one front's sockets (Bun.serve keeps its own for its sockets). */
export type Topics = Map<string, Set<FrontSocket>>

/** Decides an upgrade request and opens the socket it admits. */
export async function upgradeInFront(
  c: Conn,
  upgrade: { request: Request; head: boolean; close: boolean },
  admit: SocketAdmission,
  io: SocketIo,
  topics: Topics,
): Promise<void> {
  const { request } = upgrade
  const admitted = await admit(request)
  if (c.clientSide === 'gone') return
  if ('status' in admitted) return io.refused(c, admitted, upgrade.head, upgrade.close)
  // a client that ended its side meanwhile gets no socket: the machine closes it
  if (c.clientSide !== 'open') return io.opened(c)
  const accept = acceptKey(request.headers.get('sec-websocket-key'))!
  const extra = Object.entries(admitted.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')
  io.toClient(
    c,
    `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n${extra}\r\n`,
  )
  const socket = new FrontSocket(c, admitted, io, topics)
  c.ws = socket
  admitted.handlers.open?.(socket)
  io.opened(c) // the frames the client sent behind its upgrade request are read now
}

export class FrontSocket implements AppSocket, ConnSocket {
  readonly data: SocketData
  private readonly reader: FrameReader
  private readonly subscribed = new Set<string>()
  private closeSent = false
  private ended = false
  private closeCode = 1006
  private closeReason = ''
  private lastHeard = Date.now()
  private pinged = false

  constructor(
    private readonly c: Conn,
    private readonly admitted: AdmittedSocket,
    private readonly io: SocketIo,
    private readonly topics: Topics,
  ) {
    this.data = admitted.data
    this.reader = new FrameReader(admitted.limits.maxPayloadLength)
  }

  send(message: string | Buffer): number {
    return this.write(messageFrame(message))
  }

  /**
   * Sends a close frame and ends the connection once it is out. The endpoint hears the close at
   * once, as from Bun.serve: a client that reads nothing would hold it otherwise.
   */
  close(code = 1000, reason = ''): void {
    if (this.closeSent || this.c.clientSide === 'gone') return
    this.closeSent = true
    this.closeCode = code
    this.closeReason = reason
    this.io.toClient(this.c, encodeFrame(OP_CLOSE, closePayload(code, reason)))
    this.io.closing(this.c)
    queueMicrotask(() => this.closed()) // not inside the caller's own loop over sockets
  }

  /** What the client's socket has not taken (as Bun counts it: not what only waits for the turn's end). */
  getBufferedAmount(): number {
    const waiting = queued(this.c.toClient)
    if (waiting <= JUDGED_AFTER_FLUSH) return waiting
    this.io.flush(this.c)
    return queued(this.c.toClient)
  }

  subscribe(topic: string): boolean {
    if (this.subscribed.has(topic)) return true
    this.subscribed.add(topic)
    const members = this.topics.get(topic)
    if (members) members.add(this)
    else this.topics.set(topic, new Set([this]))
    return true
  }

  unsubscribe(topic: string): boolean {
    if (!this.subscribed.delete(topic)) return false
    const members = this.topics.get(topic)
    members?.delete(this)
    if (members?.size === 0) this.topics.delete(topic)
    return true
  }

  /** Sends to every other member of the topic: one frame made, written to each. */
  publish(topic: string, message: string | Buffer): number {
    const members = this.topics.get(topic)
    if (!members) return 0
    const frame = messageFrame(message)
    for (const member of members) if (member !== this) member.write(frame)
    return frame.length
  }

  /** Client bytes: whole messages go to the endpoint's handler. */
  read(data: Buffer): void {
    this.lastHeard = Date.now()
    this.pinged = false
    for (const event of this.reader.read(data)) {
      if (event.is === 'message') {
        if (!this.closeSent) this.admitted.handlers.message(this, event.data) // none after a close, as from Bun
      } else if (event.is === 'ping') this.write(encodeFrame(OP_PONG, event.data))
      else if (event.is === 'close') {
        // the client's close is answered with its code; a protocol failure is closed with ours
        if (event.byClient && this.closeSent) this.io.closing(this.c)
        else this.close(event.byClient && event.code === 1005 ? 1000 : event.code, event.byClient ? '' : event.reason)
        if (event.byClient) [this.closeCode, this.closeReason] = [event.code, event.reason]
      }
    }
  }

  /**
   * The front's clock: a socket the client has sent nothing on for half the idle timeout is pinged,
   * and one silent for all of it closed (Bun.serve's sendPings and idleTimeout).
   */
  tick(now: number): void {
    if (this.closeSent) return
    const silent = now - this.lastHeard
    const idleMs = this.admitted.limits.idleTimeoutSec * 1000
    if (silent >= idleMs) this.close(1001, 'idle')
    else if (silent >= idleMs / 2 && !this.pinged) {
      this.pinged = true
      this.write(encodeFrame(OP_PING, ''))
    }
  }

  /** The connection closed: the socket leaves its topics, and the endpoint hears it once. */
  closed(): void {
    if (this.ended) return
    this.ended = true
    for (const topic of [...this.subscribed]) this.unsubscribe(topic)
    this.admitted.handlers.close?.(this, this.closeCode, this.closeReason)
  }

  /** A frame out, unless the socket is closing; past the backpressure limit the socket closes instead. */
  private write(frame: Buffer): number {
    if (this.closeSent || this.c.clientSide === 'gone') return 0
    const limit = this.admitted.limits.backpressureLimit ?? 1024 * 1024
    if (this.getBufferedAmount() + frame.length > limit) {
      this.close(1008, 'the client reads too slowly')
      return 0
    }
    this.io.toClient(this.c, frame)
    return frame.length
  }
}
