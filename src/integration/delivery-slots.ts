/**
 * A process's delivery slots (src/workers/webhook-deliveries.ts): how many deliveries go to one
 * host at once, and how many jobs a domain holds in the process. Everything is counted per domain,
 * so one tenant's receivers never take another's slots, and a host is known both by the name the
 * tenant wrote and by the address (and port) it resolved to: five names of one hanging receiver are
 * one host (they held every slot between them when only the name counted). A domain holds at most
 * DOMAIN_MAX claimed jobs (in flight, or waiting here for a host), so its slow hosts hold a bounded
 * share of the process's MAX_HELD and the rest is left to the other domains.
 */

/** Deliveries in flight to one host (name, or address) of one domain. */
export const PER_HOST = 4
/** Claimed jobs a process holds at most. */
export const MAX_HELD = 256
/**
 * Claimed jobs one domain holds at most in a process: a quarter, so three domains of hanging
 * receivers leave room for the rest. One domain alone keeps the 64 it had before there was a share
 * (with 32, a backlog for a slow receiver claimed ahead of a fast one's jobs was cycled through the
 * queue at a third of the pace, and the fast one's deliveries waited tens of seconds behind it).
 */
export const DOMAIN_MAX = 64
/**
 * Claimed jobs that may wait here for a busy host (beyond them a job goes back to the queue).
 * Waiting here instead of re-queueing keeps a backlog to one host flowing at its PER_HOST pace: as
 * many as the host takes in WAIT_BUDGET_MS at its pace (a moving average of its deliveries'
 * durations), at least WAITING_MIN and at most what the domain may hold besides those in flight.
 * A slow host holds WAITING_MIN, whose wait fits in a claim's lease (WAITING_MIN / PER_HOST rounds
 * of at most a delivery's timeout each); a fast one takes what a backlog needs.
 */
const WAITING_MIN = 16
const WAITING_MAX = DOMAIN_MAX - PER_HOST
const WAIT_BUDGET_MS = 250
/** The pace of a host not yet measured. */
const FIRST_PACE_MS = 100

/** Where a delivery goes: its domain and the keys of its host (`domain name`, `domain address`). */
export interface Target {
  domain: string
  keys: readonly string[]
}

/**
 * The target of a delivery to `url` at the first of its checked addresses. The address counts with
 * its port: services on other ports of one machine are other receivers (a slow one on another port
 * held a fast one to its pace), and many ports of one tenant are bounded by DOMAIN_MAX instead.
 */
export function targetOf(domain: string, url: URL, address: string): Target {
  const port = url.port || (url.protocol === 'https:' ? '443' : '80')
  return { domain, keys: [`${domain} name ${url.host}`, `${domain} address ${address} ${port}`] }
}

interface Waiter {
  keys: readonly string[]
  start: () => void
}

export class DeliverySlots {
  /** Deliveries in flight per host key. */
  private readonly busy = new Map<string, number>()
  /** Jobs waiting for a slot per host key, and the waiters of each domain in arrival order. */
  private readonly waitingOn = new Map<string, number>()
  private readonly waiters = new Map<string, Waiter[]>()
  /** Claimed jobs held per domain, and in all. */
  private readonly held = new Map<string, number>()
  heldInAll = 0
  /** How long a delivery to each host key lasts, a moving average in ms. */
  private readonly pace = new Map<string, number>()

  /** How many more jobs the domain may be given. */
  room(domain: string): number {
    return DOMAIN_MAX - (this.held.get(domain) ?? 0)
  }

  /** The domains that may be given no more. */
  full(): string[] {
    return [...this.held].filter(([, n]) => n >= DOMAIN_MAX).map(([d]) => d)
  }

  /** A claimed job of the domain is held until `drop`. */
  hold(domain: string): void {
    this.held.set(domain, (this.held.get(domain) ?? 0) + 1)
    this.heldInAll++
  }

  drop(domain: string): void {
    const left = (this.held.get(domain) ?? 1) - 1
    if (left > 0) this.held.set(domain, left)
    else this.held.delete(domain)
    this.heldInAll--
  }

  /** Takes a slot of every key of the target, waiting for one if the wait lists have room; false when they have none. */
  async take(t: Target): Promise<boolean> {
    if (this.fits(t.keys)) {
      this.start(t.keys)
      return true
    }
    if (t.keys.some((k) => (this.waitingOn.get(k) ?? 0) >= this.waitingFor(k))) return false
    for (const k of t.keys) this.waitingOn.set(k, (this.waitingOn.get(k) ?? 0) + 1)
    const list = this.waiters.get(t.domain) ?? []
    this.waiters.set(t.domain, list)
    await new Promise<void>((start) => list.push({ keys: t.keys, start }))
    return true // `give` took the slots for it
  }

  /**
   * Gives the target's slots back after a delivery of `ms`, and starts the domain's waiting jobs
   * that now fit; false when none did (then the worker may claim more).
   */
  give(t: Target, ms: number): boolean {
    for (const k of t.keys) {
      this.count(this.busy, k, -1)
      this.measured(k, ms)
    }
    const list = this.waiters.get(t.domain) ?? []
    let started = false
    for (let i = 0; i < list.length; ) {
      const w = list[i]!
      if (!this.fits(w.keys)) {
        i++
        continue
      }
      list.splice(i, 1)
      for (const k of w.keys) this.count(this.waitingOn, k, -1)
      this.start(w.keys)
      w.start()
      started = true
    }
    if (!list.length) this.waiters.delete(t.domain)
    return started
  }

  private fits(keys: readonly string[]): boolean {
    return keys.every((k) => (this.busy.get(k) ?? 0) < PER_HOST)
  }

  private start(keys: readonly string[]): void {
    for (const k of keys) this.count(this.busy, k, 1)
  }

  private count(map: Map<string, number>, key: string, by: number): void {
    const n = (map.get(key) ?? 0) + by
    if (n > 0) map.set(key, n)
    else map.delete(key)
  }

  /** How many jobs may wait here for the host: what it takes in WAIT_BUDGET_MS at its pace. */
  private waitingFor(key: string): number {
    const fits = Math.floor((PER_HOST * WAIT_BUDGET_MS) / (this.pace.get(key) ?? FIRST_PACE_MS))
    return Math.max(WAITING_MIN, Math.min(WAITING_MAX, fits))
  }

  private measured(key: string, ms: number): void {
    if (this.pace.size >= 10_000 && !this.pace.has(key)) this.pace.clear()
    const pace = this.pace.get(key)
    this.pace.set(key, pace === undefined ? ms : pace * 0.8 + ms * 0.2)
  }
}
