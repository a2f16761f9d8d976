/**
 * A collection's list as its route reads it. One that reads many rows for its page runs in the
 * reader thread (`db.allAside`), so it holds no other request: over more than LIST_ASIDE_MIN_ROWS
 * rows of the domain, a filter or order no index serves (a search of 100,000 users by name reads
 * them all: 70-80 ms) or a member-list filter; and, at any size, member lists assembled for the
 * page (a group of 100,000 users). The rest, most lists, run on the event loop, where they cost least.
 */
import type { SqlValue } from '~storage/db'
import type { Doc } from '~storage/doc'
import { approxRows, planOf } from '~storage/list-budget'
import type { ListScope } from '~storage/list-sql'
import type { FilterNode, ListQuery } from '~storage/query'
import type { Repository } from '~storage/repository'
import type { Ctx } from '../context'

async function goesAside(ctx: Ctx, repo: Repository, q: ListQuery): Promise<boolean> {
  // a server runs its own statements: nothing holds this process meanwhile
  if (repo.db.driver !== 'embedded') return false
  if (repo.layout.assembled.some(([field]) => !q.omit?.includes(field))) return true
  if (!q.filter && q.order.length === 0) return false // the rows of the domain in key order, as many as the page
  const min = ctx.deps.config.listAsideMinRows
  if ((await approxRows(repo, ctx.domain, min, ctx.deps.clock.now())) <= min) return false
  // a member list's `contains` reads what the member's edges lead to: every superior of a user in a
  // group of 100,000 (20 ms), whatever the plan says
  if (q.filter && testsAssembled(q.filter, repo)) return true
  const { sorts, scans } = await planOf(repo, ctx.domain, q, {})
  return sorts || scans
}

function testsAssembled(f: FilterNode, repo: Repository): boolean {
  if (f.op === 'and' || f.op === 'or') return f.args.some((a) => testsAssembled(a, repo))
  if (f.op === 'not') return testsAssembled(f.arg, repo)
  return f.op === 'contains' && repo.layout.assembled.some(([field]) => field === f.field)
}

/** The page (and the cursor after it), read where it holds nothing; the docs are only presented. */
export async function readListPage(
  ctx: Ctx,
  repo: Repository,
  q: ListQuery,
): Promise<{ docs: Doc[]; next: SqlValue[] | null }> {
  return repo.listPage(ctx.domain, q, {}, true, await goesAside(ctx, repo, q))
}

/** How many rows the list's filter selects (X-Total-Count): counted aside when the domain has many. */
export async function countList(ctx: Ctx, repo: Repository, q: ListQuery, scope: ListScope = {}): Promise<number> {
  const min = ctx.deps.config.listAsideMinRows
  const many = repo.db.driver === 'embedded' && (await approxRows(repo, ctx.domain, min, ctx.deps.clock.now())) > min
  return repo.countMatching(ctx.domain, q, scope, many)
}
