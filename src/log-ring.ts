/**
 * The memory the request thread hands log lines over in, to the thread that writes them
 * (./log-thread.ts): a ring of bytes in a SharedArrayBuffer with two positions, as pino's
 * thread-stream hands them over. Handing a batch over as a message cost a point read more than
 * writing it had (a copy, an allocation and a postMessage every 32 KiB: 4-5 % of the request
 * thread's profile); here a line is encoded into the ring and its end published with one store.
 * The writer looks every FLUSH_MS, or at once when it is kicked (an error line, a ring half full,
 * the exit); after IDLE_LOOKS with nothing it sleeps until a line comes. Waking a thread costs
 * (a system call, on a VM an interrupt of the other core): under load nobody is woken per line.
 * The ring is small enough to stay in the core's cache: a 4 MiB one made encoding a line into it
 * cost twice as much.
 */

/** The ring's size: a power of two, so a position is a wrapping int32 masked into it. */
export const RING_BYTES = 256 * 1024
/** How long lines gather before they are written. */
export const FLUSH_MS = 20
/** Lines waiting past this are written at once. */
const KICK_AT = RING_BYTES / 2
/** Looks that found nothing before the writer sleeps until woken (a second). */
const IDLE_LOOKS = 50

/** Slots of the control words. */
const PUT = 0 // where the request thread's next line goes (bytes put so far, wrapping)
const TAKEN = 1 // up to where the writer has written
const KICK = 2 // 1: write now
const SHARED = 3 // 1: stdout is shared with other processes (./log-thread.ts writes pieces of whole lines)
const ASLEEP = 4 // 1: the writer sleeps until a line wakes it

export class LogRing {
  readonly control: Int32Array
  readonly bytes: Buffer
  private put = 0

  constructor(readonly shared: SharedArrayBuffer) {
    this.control = new Int32Array(shared, 0, 5)
    this.bytes = Buffer.from(shared, 32, RING_BYTES)
    this.put = Atomics.load(this.control, PUT)
  }

  static create(): LogRing {
    return new LogRing(new SharedArrayBuffer(32 + RING_BYTES))
  }

  /** Bytes put and not yet written. */
  waiting(): number {
    return (this.put - Atomics.load(this.control, TAKEN)) | 0
  }

  /**
   * Puts one line (a newline is added), or answers false when the ring has no room for it now
   * (the caller keeps it and tries again later). Only the request thread calls it.
   */
  putLine(line: string, scratch: Buffer): boolean {
    const waiting = this.waiting()
    const most = line.length * 3 + 1
    if (most > RING_BYTES - waiting) {
      // the bound is loose (3 bytes a character): the exact size may still fit
      const exact = Buffer.byteLength(line) + 1
      if (exact > RING_BYTES - waiting) return false
    }
    const at = this.put & (RING_BYTES - 1)
    let n: number
    if (at + most <= RING_BYTES) {
      n = this.bytes.write(line, at)
      this.bytes[at + n++] = 10
    } else {
      // across the end: encoded aside, put as bytes (in two pieces)
      const text = scratch.length >= most ? scratch : Buffer.allocUnsafe(most)
      n = text.write(line, 0)
      text[n++] = 10
      return this.putBytes(text.subarray(0, n)) === n
    }
    this.publish(n, waiting)
    return true
  }

  /**
   * Puts lines already encoded (each ending with its newline), as many whole ones as there is room
   * for: answers how many bytes it took.
   */
  putBytes(bytes: Uint8Array): number {
    const waiting = this.waiting()
    const room = RING_BYTES - waiting
    // (a negative start would count from the end)
    const n = bytes.length <= room ? bytes.length : room === 0 ? 0 : bytes.lastIndexOf(10, room - 1) + 1
    if (n === 0) return 0
    const at = this.put & (RING_BYTES - 1)
    const first = Math.min(n, RING_BYTES - at)
    this.bytes.set(bytes.subarray(0, first), at)
    this.bytes.set(bytes.subarray(first, n), 0)
    this.publish(n, waiting)
    return n
  }

  private publish(n: number, waiting: number): void {
    this.put = (this.put + n) | 0
    Atomics.store(this.control, PUT, this.put)
    // asked after the store: a writer going to sleep meanwhile either sees the line or is woken
    if (Atomics.load(this.control, ASLEEP) === 1) Atomics.notify(this.control, PUT)
    if (waiting + n >= KICK_AT) this.kick()
  }

  /** This process shares stdout with the other app processes of its service. */
  shareStdout(): void {
    Atomics.store(this.control, SHARED, 1)
  }

  get sharedStdout(): boolean {
    return Atomics.load(this.control, SHARED) === 1
  }

  /** Has what waits written now. */
  kick(): void {
    if (Atomics.exchange(this.control, KICK, 1) === 0) Atomics.notify(this.control, KICK)
  }

  /** Waits until everything put so far is written, up to `ms`; answers whether it was. */
  waitWritten(ms: number): boolean {
    this.kick()
    const deadline = Date.now() + ms
    for (let taken = Atomics.load(this.control, TAKEN); taken !== this.put; taken = Atomics.load(this.control, TAKEN)) {
      const left = deadline - Date.now()
      if (left <= 0) return false
      Atomics.wait(this.control, TAKEN, taken, left)
    }
    return true
  }

  /**
   * The writer's side: waits for lines, lets them gather, and gives them to `write` in one piece
   * (a piece across the ring's end is joined first). Runs for as long as the thread does.
   */
  drainForever(write: (bytes: Uint8Array, sharedStdout: boolean) => void): never {
    let taken = Atomics.load(this.control, TAKEN)
    const joined = Buffer.allocUnsafe(RING_BYTES)
    for (let idle = 0; ; ) {
      Atomics.wait(this.control, KICK, 0, FLUSH_MS) // at once when kicked
      Atomics.store(this.control, KICK, 0)
      const put = Atomics.load(this.control, PUT)
      if (put === taken) {
        if (++idle < IDLE_LOOKS) continue
        Atomics.store(this.control, ASLEEP, 1)
        if (Atomics.load(this.control, PUT) === taken) Atomics.wait(this.control, PUT, taken)
        Atomics.store(this.control, ASLEEP, 0)
        idle = 0
        continue
      }
      idle = 0
      const size = (put - taken) | 0
      const from = taken & (RING_BYTES - 1)
      const piece =
        from + size <= RING_BYTES ? this.bytes.subarray(from, from + size) : this.copyOut(taken, size, joined)
      write(piece, this.sharedStdout)
      taken = put
      Atomics.store(this.control, TAKEN, taken)
      Atomics.notify(this.control, TAKEN)
    }
  }

  /** What was put and not written, in order (the writer is gone: the request thread writes it itself). */
  unwritten(): Uint8Array {
    const taken = Atomics.load(this.control, TAKEN)
    const size = (this.put - taken) | 0
    const out = this.copyOut(taken, size, Buffer.allocUnsafe(size))
    Atomics.store(this.control, TAKEN, this.put)
    return out
  }

  /** `size` bytes from position `at`, also across the ring's end, copied into `into`. */
  private copyOut(at: number, size: number, into: Buffer): Buffer {
    const from = at & (RING_BYTES - 1)
    const first = Math.min(size, RING_BYTES - from)
    this.bytes.copy(into, 0, from, from + first)
    this.bytes.copy(into, first, 0, size - first)
    return into.subarray(0, size)
  }
}
