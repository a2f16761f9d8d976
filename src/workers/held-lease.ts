/**
 * A cluster lease kept between passes (`Worker.holdLease`). A worker woken by every commit took
 * and gave back its lease at each one: two KV round trips a commit for each such worker, and a
 * commit of another process found the lease taken and tried again 1, 2, 4 ms later. The holder
 * now keeps it, renewed every third of its lifetime, and gives it back at stop; a process that
 * dies holding it holds up the worker for at most HELD_LEASE_MS. The other processes pass their
 * wake-ups on to the holder over the KV's pub/sub (WAKE_CHANNEL) instead of trying the lease each
 * time, and try it again once ELSEWHERE_MS after they last found it held (its holder may be gone).
 */
import type { Kv, Lock } from '~storage/kv/kv'

/** The lifetime of a held lease: how long a worker waits after its holder died without giving it back. */
export const HELD_LEASE_MS = 3000
/** How long a process that found the lease held passes wake-ups on before it tries the lease again. */
const ELSEWHERE_MS = 1000
/** The KV channel of wake-ups passed on to a lease's holder; a message is the worker's name. */
export const WAKE_CHANNEL = 'worker-wake'

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
  ) {}

  get held(): boolean {
    return this.lock !== null
  }

  /** True when this process holds the lease, taking it if it is free; false when another process does. */
  async take(): Promise<boolean> {
    if (this.lock) return true
    if (Date.now() < this.elsewhereUntil) return false
    const lock = await this.kv.lock(`worker:${this.name}`, this.ttlMs)
    if (!lock) {
      this.elsewhereUntil = Date.now() + ELSEWHERE_MS
      return false
    }
    this.lock = lock
    this.renewal = setInterval(() => void this.renew(lock), this.ttlMs / 3)
    this.renewal.unref?.()
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
      .catch(() => {}) // the holder's schedule catches what a lost wake-up leaves
      .finally(() => {
        this.forwarding = false
        if (this.forwardAgain) {
          this.forwardAgain = false
          this.forward()
        }
      })
  }

  /** Gives the lease back (at stop): another process may take it at once. */
  async release(): Promise<void> {
    const lock = this.lock
    this.drop()
    await lock?.release().catch(() => {})
  }

  private async renew(lock: Lock): Promise<void> {
    const kept = await lock.extend(this.ttlMs).catch(() => null)
    if (kept || this.lock !== lock) return
    this.drop()
    this.onLost(new Error(kept === false ? 'the cluster lease was lost' : 'the cluster lease could not be renewed'))
  }

  private drop(): void {
    clearInterval(this.renewal)
    this.lock = null
  }
}
