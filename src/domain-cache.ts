/**
 * Values cached per domain in this process, dropped when the domain changes: `invalidate` bumps
 * the domain's generation here and, through KV pub/sub, in every process of the cluster. A short
 * lifetime bounds staleness if a message is lost; a subscriber reconnect clears everything.
 */
import { type Kv, KvUnavailable } from '~storage/kv/kv'
import type { Clock } from './clock'

const TTL_MS = 30_000
const MAX_ENTRIES = 50_000

/**
 * A cache of one kind of value: answers synchronously on a hit, loads (and keeps) on a miss. A value
 * `keep` refuses is answered to its callers but not kept.
 */
export type DomainCache<T> = (
  domain: string,
  key: string,
  load: () => Promise<T>,
  keep?: (value: T) => boolean,
) => T | Promise<T>

interface Entry<T> {
  gen: number
  until: number
  value: T
}

export class DomainCaches {
  private readonly generations = new Map<string, number>()
  private readonly maps: Map<string, Entry<unknown>>[] = []
  private readonly listeners = new Set<(domain: string) => void>()

  constructor(
    private readonly kv: Kv,
    private readonly clock: Clock,
    private readonly channel: string,
  ) {}

  async start(): Promise<void> {
    await this.kv.subscribe(this.channel, (domain) => this.bump(domain))
    this.kv.onSubscriberReset(() =>
      this.maps.forEach((m) => {
        m.clear()
      }),
    )
  }

  /**
   * Drops the domain's values here and tells the other processes. Runs after a commit, so an outage
   * of the store does not fail the write: the others then see the change when their entries lapse.
   */
  async invalidate(domain: string): Promise<void> {
    this.bump(domain)
    await this.kv.publish(this.channel, domain).catch((err) => {
      if (!(err instanceof KvUnavailable)) throw err
    })
  }

  /** Drops the domain's values in this process only (it learned of a change another process announces). */
  forget(domain: string): void {
    this.bump(domain)
  }

  /** Told of every change to a domain, in this process or another (open websockets re-check their session). */
  onChange(listener: (domain: string) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private bump(domain: string): void {
    this.generations.set(domain, (this.generations.get(domain) ?? 0) + 1)
    for (const listener of this.listeners) listener(domain)
  }

  cache<T>(): DomainCache<T> {
    const map = new Map<string, Entry<T>>()
    this.maps.push(map as Map<string, Entry<unknown>>)
    return (domain, key, load, keep) => {
      const gen = this.generations.get(domain) ?? 0
      const now = this.clock.now()
      const hit = map.get(key)
      if (hit && hit.gen === gen && hit.until > now) return hit.value
      return load().then((value) => {
        if (keep && !keep(value)) return value
        if (map.size >= MAX_ENTRIES) map.clear()
        map.set(key, { gen, until: now + TTL_MS, value })
        return value
      })
    }
  }
}
