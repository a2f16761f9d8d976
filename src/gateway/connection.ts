/** One client connection of the gateway's front: its state, and writes that queue what the socket cannot take yet. */
import type { Socket } from 'bun'
import type { Chunk, ConnState } from './conn-state'

/** The connection record: the machine's state (./conn-state.ts) and what only the socket adapter (./front.ts) touches. */
export interface Conn extends ConnState {
  client: Socket<Conn>
  up: Socket<Conn> | null
  /** A large in-process answer waits for the client to take what is queued. */
  onDrained?: () => void
  toUp: Chunk[]
  /** What the client has not taken yet, or (until the turn ends) not been written yet. */
  toClient: Chunk[]
  /**
   * Answered and half-closed: what the client still sends is read and dropped (a lingering close,
   * see LINGER) until it ends, LINGER.ms pass or LINGER.bytes arrive, so it reads the answer
   * instead of a connection reset.
   */
  lingering?: { dropped: number; timer: Timer }
  /** What it counts against in the per-address cap ('' when it does not count). */
  capKey: string
  /** Refused over the cap: answered 503 and closed, nothing else. */
  refused?: true
  /** The websocket the front serves on this connection, once upgraded (./front-socket.ts). */
  ws?: ConnSocket
}

/** What the adapter asks of the websocket it serves on a connection (./front-socket.ts). */
export interface ConnSocket {
  /** Client bytes: frames. */
  read(data: Buffer): void
  /** The front's clock (pings, the idle timeout). */
  tick(now: number): void
  /** The connection closed. */
  closed(): void
}

/** Pieces queued together are joined into one write up to this size. */
const JOIN_MAX = 64 * 1024

const asBuffer = (chunk: Chunk) => (typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk)

/** Writes what it can; queues the rest and calls `backlog` (which pauses the other side) until `drain`. */
export function send(sock: Socket<Conn>, queue: Chunk[], data: Chunk, backlog: () => void): void {
  if (queue.length === 0) {
    const n = sock.write(data)
    if (n === data.length) return
    data = asBuffer(data).subarray(Math.max(0, n))
  }
  queue.push(data)
  backlog()
}

/** True once the queue is written out. Small pieces go out in one write (one wakeup of the peer for them all). */
export function flushQueue(sock: Socket<Conn>, queue: Chunk[]): boolean {
  while (queue.length) {
    let joined = 1
    let size = queue[0]!.length
    while (joined < queue.length && size + queue[joined]!.length <= JOIN_MAX) size += queue[joined++]!.length
    if (joined > 1) {
      const pieces = queue.splice(0, joined)
      queue.unshift(pieces.every((p) => typeof p === 'string') ? pieces.join('') : Buffer.concat(pieces.map(asBuffer)))
    }
    const d = queue[0]!
    const n = sock.write(d)
    if (n < size) {
      queue[0] = asBuffer(d).subarray(Math.max(0, n))
      return false
    }
    queue.shift()
  }
  return true
}

/**
 * What goes to clients while the loop reads sockets is written when that turn ends: a write wakes
 * the client's side, and answers written back to back wake it once (a point read took 3 µs less
 * CPU, measured), pipelined ones too. An answer made after the reading (a group commit, at the
 * turn's end, releases it) is written once the code that released it is done, in the same turn:
 * waiting for the next one held every client's next request a turn, and commits found half as many
 * writes to take together (31 bodies a commit through the gateway against 58 direct). A connection
 * is written that way once a turn; what else it is answered then (pipelined requests) waits for
 * the turn's end, so a turn's work stays bounded.
 */
export class TurnWrites {
  /** Connections written when the turn ends. */
  private waiting = new Set<Conn>()
  private turnEndScheduled = false
  /** Connections written once the code now running is done. */
  private soon = new Set<Conn>()
  /** Connections written that way since the last turn's end. */
  private wroteSoon = new Set<Conn>()
  /** A socket callback ran since the last turn's end: writes wait for this turn's end. */
  private reading = false

  /** `write` writes a connection's queue (and goes on with what waited for it). */
  constructor(private readonly write: (c: Conn, now: number) => void) {}

  /** The front read from a socket: what is answered meanwhile goes out when the turn ends. */
  readingNow(): void {
    if (this.reading) return
    this.reading = true
    this.scheduleTurnEnd()
  }

  add(c: Conn, data: Chunk): void {
    if (c.toClient.length === 0) c.lastWrite = Date.now() // a backlog's age starts with its first piece
    c.toClient.push(data)
    if (this.reading || this.wroteSoon.has(c)) {
      this.waiting.add(c)
      this.scheduleTurnEnd()
      return
    }
    if (this.soon.size === 0) queueMicrotask(() => this.flushSoon())
    this.soon.add(c)
  }

  /** The connection has writes waiting to be made. */
  due(c: Conn): boolean {
    return this.waiting.has(c) || this.soon.has(c)
  }

  private scheduleTurnEnd(): void {
    if (this.turnEndScheduled) return
    this.turnEndScheduled = true
    setImmediate(() => {
      this.turnEndScheduled = false
      this.reading = false
      this.wroteSoon.clear()
      const due = this.waiting
      this.waiting = new Set()
      this.flush(due)
    })
  }

  private flushSoon(): void {
    const due = this.soon
    this.soon = new Set()
    for (const c of due) this.wroteSoon.add(c)
    if (due.size) this.scheduleTurnEnd() // where the marks are cleared
    this.flush(due)
  }

  private flush(due: Set<Conn>): void {
    const now = Date.now()
    for (const c of due) {
      try {
        this.write(c, now)
      } catch (err) {
        // the connections after it still have their writes made, at the next turn's end
        let after = false
        for (const rest of due)
          if (after) this.waiting.add(rest)
          else after = rest === c
        if (this.waiting.size) this.scheduleTurnEnd()
        throw err
      }
    }
  }
}

/**
 * What clients send during a turn of the loop is taken once the turn's reading is done, all of it
 * together, in the order it came: the app's code then runs for one request after another, with its
 * code and data still in the core's caches, instead of between the kernel's socket work for each
 * (a point read took about 12 % less CPU, measured). A client's end of input waits in the same
 * line, after what it sent before. Still the same turn: no answer waits longer for it.
 */
export class TurnReads {
  /** Connection, then its data (null: the client ended its side), in arrival order. */
  private queue: (Conn | Buffer | null)[] = []

  constructor(
    private readonly take: (c: Conn, data: Buffer) => void,
    private readonly ended: (c: Conn) => void,
  ) {}

  add(c: Conn, data: Buffer | null): void {
    if (this.queue.length === 0) setImmediate(() => this.takeAll())
    this.queue.push(c, data)
  }

  private takeAll(): void {
    const queue = this.queue
    this.queue = []
    for (let i = 0; i < queue.length; i += 2) {
      const c = queue[i] as Conn
      const data = queue[i + 1] as Buffer | null
      try {
        if (data) this.take(c, data)
        else this.ended(c)
      } catch {
        c.client.end() // as the socket's own error handler would; the other connections go on
      }
    }
  }
}
