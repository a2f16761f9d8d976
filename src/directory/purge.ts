/**
 * Deleting a domain deletes everything it holds, inside the transaction that deletes the domain:
 * the rows of every registered table, its model classes' tables, its journal, its pending
 * credential requests, queued work, service-task runs and directory edges. tests/api/domain-purge.test.ts checks that no table keeps a row.
 */
import type { TxStep } from '~storage/db'
import { purgeEdges } from '~storage/directory-edges'
import { purgeJournal } from '~storage/journal'
import { dropRecordTable, recordTablesOf } from '~storage/model-tables'
import { purgeQueue } from '~storage/queue'
import { purgeRequests } from '~storage/requests'
import { purgeRuns } from '~storage/task-runs'
import type { Deps } from '../deps'
import { tables } from '../entities/registry'
import { domains } from './domains'

export function* purgeDomain(deps: Deps, domain: string): TxStep<void> {
  // the domain's own row is the change being made (its parent's domain column holds it)
  for (const spec of tables()) if (spec !== domains.table) yield* deps.repo(spec).purge(domain)
  for (const table of yield* recordTablesOf(domain)) yield* dropRecordTable(table)
  yield* purgeEdges(domain)
  yield* purgeJournal(domain)
  yield* purgeRequests(domain)
  yield* purgeQueue(domain)
  yield* purgeRuns(domain)
}
