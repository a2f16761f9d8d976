/**
 * Deleting a domain deletes everything it holds, inside the transaction that deletes the domain:
 * the rows of every registered table (a list it is handed: the registry, which holds the domains,
 * gives it to their hooks), its model classes' tables, its journal, its pending credential
 * requests, queued work, service-task runs, directory edges and model generation.
 * tests/api/domain-purge.test.ts checks that no table keeps a row.
 * What the KV store keeps of it goes after the commit (`forgetDomainKeys`).
 */
import type { TxStep } from '~storage/db'
import type { TableSpec } from '~storage/repository'
import { purgeEdges } from '~storage/directory-edges'
import { purgeJournal } from '~storage/journal'
import { dropRecordTable, recordTablesOf } from '~storage/model-tables'
import { purgeGeneration } from '~storage/model-generations'
import { purgeUsage } from '~storage/file-usage'
import { purgeQueue } from '~storage/queue'
import { purgeRequests } from '~storage/requests'
import { purgeRuns } from '~storage/task-runs'
import type { Deps } from '../deps'
import type { Unit } from '../entities/unit'
import { forgetSubscriptions } from '../integration/webhook-keys'
import { forgetHandlersOf } from '../scripts/handler-domain'

/** Purges `specs` (the registered tables but the domains') and the rest of what the domain holds. */
export function* purgeDomain(u: Unit, domain: string, specs: readonly TableSpec[]): TxStep<void> {
  const { deps } = u.ctx
  const records = yield* recordTablesOf(domain)
  const total = specs.length + records.length
  for (const [i, spec] of specs.entries()) {
    yield* deps.repo(spec).purge(domain)
    u.progress(i + 1, total)
  }
  for (const [i, table] of records.entries()) {
    yield* deps.repo({ table, objtype: 'record', stamps: false }).purge(domain) // in chunks: a drop is one statement
    yield* dropRecordTable(table)
    u.progress(specs.length + i + 1, total)
  }
  yield* purgeEdges(domain)
  yield* purgeJournal(domain)
  // what the journal's followers keep in memory of it is gone too (src/journal/recent.ts)
  if (u.w.journaled) u.w.journaled.untrusted = true
  yield* purgeRequests(domain)
  yield* purgeQueue(domain)
  yield* purgeRuns(domain)
  yield* purgeGeneration(domain)
  yield* purgeUsage(domain)
}

/** After the deletion commits: its webhook subscriptions and handler records, which would come back with its id. */
export async function forgetDomainKeys(deps: Deps, domain: string): Promise<void> {
  await forgetSubscriptions(deps, domain)
  await forgetHandlersOf(deps.kv, domain)
}
