/**
 * What keeps one list of a large class from holding the process: a list whose order no index
 * gives makes SQLite read and sort every matching record (640 ms at a million, every other request
 * waiting), and one whose filter no index serves reads records one by one until its page is full
 * (all of them when the match is rare). Beyond LIST_SORT_MAX_RECORDS the first is refused; beyond
 * LIST_SCAN_MAX_RECORDS the second runs over that many records in list order and is refused when
 * they do not decide the page. Both refusals name the index that would serve the list.
 */
import type { Doc } from '~storage/doc'
import { approxRows, budgetedPage, planOf } from '~storage/list-budget'
import type { FilterNode, ListQuery } from '~storage/query'
import type { ColumnRange, Repository } from '~storage/repository'
import type { SqlValue } from '~storage/db'
import type { Ctx } from '../context'
import { badRequest } from '../errors'
import type { ClassModel } from './class-model'

/** The properties the filter tests for equality, then the order's: the index that serves the list. */
function indexFor(query: ListQuery): string[] {
  const tests = (f: FilterNode | null | undefined): FilterNode[] => (!f ? [] : f.op === 'and' ? f.args : [f])
  const fieldOf = (f: FilterNode) =>
    'left' in f && 'field' in f.left ? f.left.field : f.op === 'contains' ? f.field : undefined
  const all = tests(query.filter)
  const equal = all.flatMap((f) => (f.op === '==' && fieldOf(f) ? [fieldOf(f)!] : []))
  const compared = all.flatMap((f) => (fieldOf(f) ? [fieldOf(f)!] : []))
  return [...new Set([...equal, ...compared, ...query.order.map((o) => o.field)])].filter((f) => f !== 'id')
}

/** What a list of the class may show: the range, and what has not expired by now (classes that expire records). */
export const listScope = (ctx: Ctx, range?: ColumnRange) => ({ range, now: ctx.deps.clock.now() })

/** The page of a record list, within the budgets. */
export async function readPage(
  ctx: Ctx,
  model: ClassModel,
  repo: Repository,
  query: ListQuery,
  range?: ColumnRange,
): Promise<{ docs: Doc[]; next: SqlValue[] | null }> {
  const scope = listScope(ctx, range)
  const { listSortMaxRecords: sortMax, listScanMaxRecords: scanMax } = ctx.deps.config
  // a partition or an interval bounds what is read
  // the docs are only presented: a page answered from memory gives the docs parsed before
  if (range) return repo.listPage(ctx.domain, query, scope, true)
  const cap = Math.max(sortMax, scanMax)
  const n = await approxRows(repo, ctx.domain, cap, ctx.deps.clock.now())
  const size = n > cap ? `more than ${cap}` : String(n)
  const refuse = (doing: string, field: string) => {
    const index = indexFor(query)
    return badRequest(
      `${doing} ${size} records of ${model.classname} reads every one of them: declare the index ${JSON.stringify(index)} in the class's opts.indexes`,
      field,
      { index },
    )
  }
  const asideMin = ctx.deps.config.listAsideMinRows
  const judged = (query.order.length > 0 || query.filter !== null) && n > Math.min(sortMax, scanMax, asideMin)
  const { sorts, scans } = judged ? await planOf(repo, ctx.domain, query, scope) : { sorts: false, scans: false }
  if (sorts && n > sortMax) throw refuse('ordering', 'order')
  // within the budgets, a list that reads many records reads them in the reader thread
  const aside = n > asideMin && (sorts || scans)
  if (n <= scanMax || !scans) return repo.listPage(ctx.domain, query, scope, true, aside)
  const page = await budgetedPage(repo, ctx.domain, query, scope, scanMax, true, aside)
  if (!page) throw refuse(`filtering beyond the first ${scanMax} of`, 'filter')
  return page
}
