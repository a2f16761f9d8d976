/**
 * A handler acts for its domain only while that domain lets it: once the domain is deleted (also
 * when a domain is created again with its id: another tenant) or blocked, its handlers end, their
 * host calls are refused and none starts. What the KV store holds of handlers is keyed by domain,
 * so a deleted domain's keys can be found and dropped.
 */
import { delPrefix, type Kv } from '~storage/kv/kv'
import type { Deps } from '../deps'
import type { DomainInfo } from '../ports'

/** How long a handler's outcome (and its log) is kept after its end. */
export const OUTCOME_TTL_MS = 24 * 3600 * 1000

export const recordKey = (domain: string, id: string) => `handler:${domain}:${id}`
export const indexKey = (domain: string) => `handlers:${domain}`
export const outcomeKey = (domain: string, id: string) => `handler-outcome:${domain}:${id}`
/** A handler's own log lines (what its `log()` wrote), kept as long as its outcome. */
export const logKey = (domain: string, id: string) => `handler-log:${domain}:${id}`

/** Why a domain refuses its handlers; `gone` when it no longer exists (nothing of them is kept then). */
export interface Refusal {
  why: string
  gone: boolean
}

/** Why the domain refuses a handler started in it when it was `created` (its ext.ct), or null. */
export function refusalFor(info: DomainInfo | null, created: string): Refusal | null {
  // rows without a creation time compare equal: a missing stamp must not end every handler
  if (!info || (created && info.created && info.created !== created))
    return { why: 'its domain was deleted', gone: true }
  return info.blocked ? { why: `its domain ${info.name} is blocked`, gone: false } : null
}

export async function refusalOf(deps: Pick<Deps, 'access'>, domain: string, created: string): Promise<Refusal | null> {
  return refusalFor(await deps.access.domainInfo(domain), created)
}

/** Drops the records, index, outcomes and logs of a deleted domain's handlers (a new domain may take its id). */
export async function forgetHandlersOf(kv: Kv, domain: string): Promise<void> {
  await delPrefix(kv, recordKey(domain, ''))
  await delPrefix(kv, outcomeKey(domain, ''))
  await delPrefix(kv, logKey(domain, ''))
  await kv.del(indexKey(domain))
}
