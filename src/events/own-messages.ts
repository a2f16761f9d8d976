/**
 * The journal pump's messages, delivered in the process that publishes them at once (./bus.ts):
 * which of the messages the KV brings back are this process's own, and whether delivering one at
 * once keeps the order every process sees.
 *
 * Every process must see the pump's events in the order Redis delivers them: a websocket
 * subscription passes over an event whose seq is not above the last it passed. A process that has
 * just taken the pump over (`behind`), or received another process's pump message, may still have
 * that process's last messages on their way, so its own go through the KV until the last of them
 * sent so has come back (Redis delivers a subscriber's messages in the order it received them:
 * everything published before it has come).
 */

/** Messages awaited back at most: past it (the KV lost some) they are forgotten (one delivered here at once then comes twice). */
const AWAITED_MAX = 10_000

export class OwnMessages {
  /** Delivered here already: passed over when they come back, by text and count. */
  private readonly delivered = new Map<string, number>()
  /** Sent through the KV only: delivered when they come back. */
  private readonly returning = new Map<string, number>()
  /**
   * Everything published before this process's last message has come: one of its own came back,
   * with none sent through the KV still on its way, since it took the pump and since another
   * process's pump message came.
   */
  private caughtUp = false

  /** Whether a message about to be published is to be delivered here now (else when it comes back, after those before it). */
  deliverNow(message: string): boolean {
    const now = this.caughtUp
    const awaited = now ? this.delivered : this.returning
    if (awaited.size >= AWAITED_MAX) awaited.clear()
    awaited.set(message, (awaited.get(message) ?? 0) + 1)
    return now
  }

  /** Its publish failed: it may not come back (if it does, it is delivered then: a second time if it was delivered at once). */
  failed(message: string, deliveredNow: boolean): void {
    take(deliveredNow ? this.delivered : this.returning, message)
  }

  /**
   * A message came from the KV: whether to deliver it. `pumps` says whether it holds journal events
   * (asked only of other processes' messages).
   */
  received(message: string, pumps: () => boolean): boolean {
    if (this.delivered.size && take(this.delivered, message)) {
      this.caughtUp = this.returning.size === 0
      return false
    }
    // the last of its own sent through the KV: what was published before it has all come
    if (this.returning.size && take(this.returning, message)) this.caughtUp = this.returning.size === 0
    else if (pumps()) this.caughtUp = false
    return true
  }

  /** This process has just taken the pump (again): another's last messages may still be on their way. */
  behind(): void {
    this.caughtUp = false
  }

  /** The subscription broke: what was on its way is lost, and what comes next may be late. */
  reset(): void {
    this.delivered.clear()
    this.returning.clear()
    this.caughtUp = false
  }
}

function take(awaited: Map<string, number>, message: string): boolean {
  const count = awaited.get(message)
  if (count === undefined) return false
  if (count > 1) awaited.set(message, count - 1)
  else awaited.delete(message)
  return true
}
