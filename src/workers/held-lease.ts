/**
 * A cluster lease kept between passes (`Worker.holdLease`). A worker woken by every commit took
 * and gave back its lease at each one: two KV round trips a commit for each such worker, and a
 * commit of another process found the lease taken and tried again 1, 2, 4 ms later. The holder
 * now keeps it, renewed every third of its lifetime, and gives it back at stop, saying so on the
 * channel so that another process takes it at once; a process that dies holding it holds up the
 * worker for HELD_LEASE_MS and at most ELSEWHERE_MS more. The other processes pass their wake-ups
 * on to the holder over the KV's pub/sub (WAKE_CHANNEL) instead of trying the lease each time, and
 * try it again once ELSEWHERE_MS after they last found it held (its holder may be gone).
 */
import type { Kv, Lock } from '~storage/kv/kv'

/** The lifetime of a held lease: how long a worker waits after its holder died without giving it back. */
export const HELD_LEASE_MS = 3000
/** How long a process that found the lease held passes wake-ups on before it tries the lease again (the schedule's period). */
const ELSEWHERE_MS = 500
/**
 * The KV channel of wake-ups passed on to a lease's holder: a message is the worker's name, or
 * RELEASED and the name when its holder gave the lease back.
 */
export const WAKE_CHANNEL = 'worker-wake'
export const RELEASED = 'released '

export class HeldLease {
  private lock: Lock | null = null
  private renewal?: ReturnType<typeof setInterval>
  private elsewhereUntil = 0
  private forwarding = false
  private forwardAgain = false

  constructor(
    private readonly kv: Kv,
    readonly name: string,
    private readonly ttlMs: number,
    /** Told when the lease was lost while held (not renewed in time, or the KV failed): the pass stops. */
    private readonly onLost: (reason: Error) => void,
    /** Told when this process takes the lease (again). */
    private readonly onTaken: () => void = () => {},
  ) {}

  get held(): boolean {
    return this.lock !== null
  }

  /** True when this process holds the lease, taking it if it is free; false when another process does. */
  async take(): Promise<boolean> {
    if (this.lock) return true
    if (performance.now() < this.elsewhereUntil) return false
    const lock = await this.kv.lock(`worker:${this.name}`, this.ttlMs)
    if (!lock) {
      this.elsewhereUntil = performance.now() + ELSEWHERE_MS
      return false
    }
    this.lock = lock
    this.renewal = setInterval(() => void this.renew(lock), this.ttlMs / 3)
    this.renewal.unref?.()
    this.onTaken()
    return true
  }

  /** Passes a wake-up on to the holder: one message in flight at a time, and one more after it if more came. */
  forward(): void {
    if (this.forwarding) {
      this.forwardAgain = true
      return
    }
    this.forwarding = true
    void this.kv
      .publish(WAKE_CHANNEL, this.name)
      .catch(() => {}) // the holder's periodic read of the journal catches what a lost wake-up leaves (src/journal/recent.ts)
      .finally(() => {
        this.forwarding = false
        if (this.forwardAgain) {
          this.forwardAgain = false
          this.forward()
        }
      })
  }

  /** Another process gave the lease back: the next wake-up tries it. */
  released(): void {
    this.elsewhereUntil = 0
  }

  /** Gives the lease back (at stop) and says so: another process takes it at its next wake-up. */
  async release(): Promise<void> {
    const lock = this.lock
    if (!lock) return
    this.drop()
    if (await lock.release().catch(() => false))
      await this.kv.publish(WAKE_CHANNEL, `${RELEASED}${this.name}`).catch(() => {})
  }

  private async renew(lock: Lock): Promise<void> {
    const kept = await lock.extend(this.ttlMs).catch(() => null)
    if (kept || this.lock !== lock) return
    this.drop()
    // not renewed in time (the KV was slow or away): the key may still be ours, and would hold everyone off until it ends
    if (kept === null) void lock.release().catch(() => {})
    this.onLost(new Error(kept === false ? 'the cluster lease was lost' : 'the cluster lease could not be renewed'))
  }

  private drop(): void {
    clearInterval(this.renewal)
    this.lock = null
  }
}
