/**
 * Where webhook subscriptions live in the KV store (src/integration/webhooks.ts keeps them): a
 * record per subscription, a marker of ids a channel once had, a per-domain index; and dropping a
 * deleted domain's, which the domain purge does without importing the subscription rules.
 */
import { delPrefix } from '~storage/kv/kv'
import type { Deps } from '../deps'
import type { EventObject } from '../events/match'

export const MAX_EXPIRES_SEC = 86_400

export interface Subscription {
  id: string
  domain: string
  channel: string
  events: string[]
  /** As sent, for the read-back. */
  objects: unknown[]
  /** As the matcher takes them: a collection's name read as its data class (absent in older records). */
  bound?: EventObject[]
  url: string
  /** End of the lifetime on the service's clock (ms); the KV TTL ends it in real time too. */
  until: number
}

export const recordKey = (domain: string, id: string) => `webhook:sub:${domain}:${id}`
export const knownKey = (domain: string, id: string) => `webhook:known:${domain}:${id}`
export const indexKey = (domain: string) => `webhook:subs:${domain}`
/**
 * A record kept before the keys named their domain: still delivered, read, renewed and removed by
 * its own channel, and believed only for the domain it names. The last of them lapse within
 * MAX_EXPIRES_SEC of the upgrade.
 */
export const legacyRecordKey = (id: string) => `webhook:sub:${id}`
export const legacyOf = (text: string | null, domain: string): Subscription | null => {
  const sub = text ? (JSON.parse(text) as Subscription) : null
  return sub?.domain === domain ? sub : null
}

/** Drops every subscription of a deleted domain, lapsed ids included: a new domain may take its id. */
export async function forgetSubscriptions(deps: Deps, domain: string): Promise<void> {
  const { kv } = deps
  for (const id of await kv.smembers(indexKey(domain)))
    if (legacyOf(await kv.get(legacyRecordKey(id)), domain)) await kv.del(legacyRecordKey(id))
  await delPrefix(kv, recordKey(domain, ''))
  await delPrefix(kv, knownKey(domain, ''))
  await kv.del(indexKey(domain))
}
