/**
 * Each domain's webhook subscriptions as the deliveries read them, kept in this process: read from
 * the KV store when a domain's are first asked for or have changed, not for every batch of events.
 * Read per batch, they were one SMEMBERS a create at 1,000 creates a second, as many Redis commands
 * as the journal pump's publishes. A change (subscribe, renew, unsubscribe, a domain's purge) drops
 * the domain's entry here at once and in the other processes through KV pub/sub (../domain-cache.ts:
 * a lost message is outlived by the entry's lifetime); a lapse is seen where they are used (`until`).
 */
import type { Kv } from '~storage/kv/kv'
import type { Clock } from '../clock'
import { type DomainCache, DomainCaches } from '../domain-cache'
import type { SubscriptionsPort } from '../ports'
import type { Subscription } from './webhook-keys'

const CHANNEL = 'webhook-subscriptions'

export class SubscriptionCache implements SubscriptionsPort {
  private readonly caches: DomainCaches
  private readonly kept: DomainCache<Subscription[]>

  constructor(kv: Kv, clock: Clock) {
    this.caches = new DomainCaches(kv, clock, CHANNEL)
    this.kept = this.caches.cache()
  }

  start(): Promise<void> {
    return this.caches.start()
  }

  of(domain: string, read: () => Promise<Subscription[]>): Subscription[] | Promise<Subscription[]> {
    return this.kept(domain, domain, read)
  }

  changed(domain: string): Promise<void> {
    return this.caches.invalidate(domain)
  }
}
