/**
 * What keeps one list of a large class from holding the process: a list whose order no index
 * gives makes SQLite read and sort every matching record (640 ms at a million, every other request
 * waiting), and one whose filter no index serves reads records one by one until its page is full
 * (all of them when the match is rare). Beyond LIST_SORT_MAX_RECORDS the first is refused; beyond
 * LIST_SCAN_MAX_RECORDS the second runs over that many records in list order and is refused when
 * they do not decide the page. Both refusals name the index that would serve the list.
 */
import type { Doc } from '~storage/doc'
import { budgetedPage, countUpTo, filterScans, listSorts } from '~storage/list-budget'
import type { FilterNode, ListQuery } from '~storage/query'
import type { ColumnRange, Repository } from '~storage/repository'
import type { SqlValue } from '~storage/db'
import type { Ctx } from '../context'
import { badRequest } from '../errors'
import type { ClassModel } from './class-model'

/**
 * Records per class table, counted at most every ten seconds and only up to the larger budget (a
 * count of a million records would itself hold the process for 60 ms).
 */
const sizes = new Map<string, { n: number; at: number }>()
async function approxRecords(ctx: Ctx, repo: Repository, cap: number): Promise<number> {
  const key = `${ctx.domain} ${repo.spec.table}`
  const now = ctx.deps.clock.now()
  const known = sizes.get(key)
  if (known && now - known.at < 10_000) return known.n
  const n = await countUpTo(repo, ctx.domain, cap)
  if (sizes.size > 10_000) sizes.clear()
  sizes.set(key, { n, at: now })
  return n
}

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
  const n = await approxRecords(ctx, repo, cap)
  const size = n > cap ? `more than ${cap}` : String(n)
  const refuse = (doing: string, field: string) => {
    const index = indexFor(query)
    return badRequest(
      `${doing} ${size} records of ${model.classname} reads every one of them: declare the index ${JSON.stringify(index)} in the class's opts.indexes`,
      field,
      { index },
    )
  }
  if (query.order.length > 0 && n > sortMax && (await listSorts(repo, ctx.domain, query, scope)))
    throw refuse('ordering', 'order')
  if (n <= scanMax || !(await filterScans(repo, ctx.domain, query, scope)))
    return repo.listPage(ctx.domain, query, scope, true)
  const page = await budgetedPage(repo, ctx.domain, query, scope, scanMax, true)
  if (!page) throw refuse(`filtering beyond the first ${scanMax} of`, 'filter')
  return page
}
