/**
 * Budgets of lists over large tables, judged from their query plans: whether the list sorts every
 * match (no index gives its order), whether its filter reads rows one by one (no index serves it),
 * and the page of such a filtered list read from the first `budget` rows of its scope in its own
 * order only: when those do not fill the page and the scope holds more, the answer is null and the
 * caller refuses the list, naming the index to declare.
 */
import type { SqlValue } from './db'
import type { Doc } from './doc'
import { listWhere, pageSql, probeSql, scopeWhere, type ListScope } from './list-sql'
import { compileAfter, compileFilter, compileOrder, type ListQuery } from './query'
import type { Repository } from './repository'
import { Refreshed } from './refreshed'
import { int, text } from './columns'

/** Per repository: a class change (a new index) makes a new one, so a plan never outlives the indexes it saw. */
const plansOf = new WeakMap<Repository, Map<string, { sortsAll: boolean; readsAll: boolean }>>()

/** What SQLite's plan for a list says of it. */
export interface ListPlan {
  /** It reads and sorts every matching row (no index gives the order it asks for). */
  sorts: boolean
  /** Its filter reads rows one by one (a SCAN, or a SEARCH on the domain alone). */
  scans: boolean
}

/** The list's query plan, asked of SQLite once per statement shape and repository. */
export async function planOf(repo: Repository, domain: string, q: ListQuery, scope: ListScope): Promise<ListPlan> {
  const args: SqlValue[] = []
  const sql = probeSql(repo.spec, repo.layout, listWhere(repo.spec, repo.layout, domain, q, scope, args), q)
  let plans = plansOf.get(repo)
  if (!plans) {
    plans = new Map()
    plansOf.set(repo, plans)
  }
  // what the plan says of the statement; lists with and without an order by id share a statement
  let seen = plans.get(sql)
  if (seen === undefined) {
    const lines = (await repo.db.all(`EXPLAIN QUERY PLAN ${sql}`, args)).map((r) => String(r[3]))
    const table = repo.spec.table
    const access = lines.find((line) => line.includes(` ${table} `) || line.endsWith(` ${table}`))
    // a SEARCH constrained by the domain (and the keyset cursor) alone visits every row of the domain
    const constraint = /\((.*)\)$/.exec(access ?? '')?.[1] ?? ''
    seen = {
      sortsAll: lines.some((line) => line.includes('TEMP B-TREE FOR ORDER BY')),
      readsAll: !access || /^SCAN\b/.test(access) || /^domain=\?( AND id>\?)?$/.test(constraint),
    }
    if (plans.size > 1000) plans.clear()
    plans.set(sql, seen)
  }
  return { sorts: q.order.length > 0 && seen.sortsAll, scans: q.filter !== null && seen.readsAll }
}

/**
 * The domain's rows of the table, counted up to `cap` + 1 (whether a budget is exceeded needs no
 * more), in the reader thread: counting 100,000 rows takes a few milliseconds.
 */
export async function countUpTo(repo: Repository, domain: string, cap: number): Promise<number> {
  const sql = `SELECT count(*) FROM (SELECT 1 FROM ${repo.spec.table} WHERE domain = ? LIMIT ?)`
  return (await repo.db.allAside(sql, [domain, cap + 1]))[0]![0] as number
}

/**
 * `countUpTo`, counted at most every ten seconds per domain and table (a count of a million rows
 * would itself hold the process for 60 ms): a bound to judge a list by, not a figure to show. Lists
 * asked meanwhile share a count, and go by the last one while it is counted again (./refreshed.ts).
 */
const sizesOf = new WeakMap<Repository['db'], Refreshed<number>>()
export async function approxRows(repo: Repository, domain: string, cap: number, now: number): Promise<number> {
  let sizes = sizesOf.get(repo.db)
  if (!sizes) {
    sizes = new Refreshed(10_000, 10_000)
    sizesOf.set(repo.db, sizes)
  }
  return sizes.get(`${domain} ${repo.spec.table} ${cap}`, now, () => countUpTo(repo, domain, cap))
}

/** The last id within the budget and whether rows follow it, per list shape, for a few seconds (a bound, not a value to be exact about). */
interface Boundary {
  id: string
  beyond: boolean
}
const boundaries = new WeakMap<Repository, Refreshed<Boundary | null>>()
const BOUNDARY_MS = 10_000

/** Where a budgeted list's reads run: `aside`, those that may visit `budget` rows run in the reader thread. */
const readsOf = (repo: Repository, aside: boolean) =>
  aside ? repo.db.allAside.bind(repo.db) : repo.db.all.bind(repo.db)

/** The page read from the first `budget` rows of the scope in list order; null when those do not decide it. */
export async function budgetedPage(
  repo: Repository,
  domain: string,
  q: ListQuery,
  scope: ListScope,
  budget: number,
  readOnly = false,
  aside = false,
): Promise<{ docs: Doc[]; next: SqlValue[] | null } | null> {
  const byId = q.order.length === 0 || (q.order.length === 1 && q.order[0]!.field === 'id')
  if (!byId) return nestedPage(repo, domain, q, scope, budget, aside)
  const all = readsOf(repo, aside)
  const listPage = (s: ListScope) => repo.listPage(domain, q, s, readOnly, aside)
  // ordered by id: the budget ends at an id, and the page is the list's own statement bounded by it
  const desc = q.order[0]?.desc === true
  const { spec, layout } = repo
  const args: SqlValue[] = []
  let within = scopeWhere(spec, layout, domain, scope, args)
  if (q.after) within += ` AND ${compileAfter(q.order, q.after, layout.resolveField, 'id', args)}`
  const key = `${domain} ${desc} ${within}`
  const readBoundary = async (): Promise<Boundary | null> => {
    const rows = await all(
      `SELECT id FROM ${spec.table} WHERE ${within} ORDER BY id ${desc ? 'DESC' : 'ASC'} LIMIT 2 OFFSET ?`,
      [...args, budget - 1],
    )
    return rows.length === 0 ? null : { id: text(rows[0]![0]), beyond: rows.length === 2 }
  }
  let ofRepo = boundaries.get(repo)
  if (!ofRepo) {
    ofRepo = new Refreshed(BOUNDARY_MS, 100)
    boundaries.set(repo, ofRepo)
  }
  // a cursor's boundary is its own; the first page's is shared by the lists that ask for it
  const bound = q.after ? await readBoundary() : await ofRepo.get(key, Date.now(), readBoundary)
  // fewer rows than the budget: the whole list is within it
  if (!bound) return listPage(scope)
  const page = await listPage({ ...scope, idBound: { id: bound.id, desc } })
  return page.docs.length < q.limit && bound.beyond ? null : page
}

/** Any other order: the page read from a subquery of the first `budget` rows of the scope. */
async function nestedPage(
  repo: Repository,
  domain: string,
  q: ListQuery,
  scope: ListScope,
  budget: number,
  aside: boolean,
): Promise<{ docs: Doc[]; next: SqlValue[] | null } | null> {
  const { spec, layout } = repo
  const all = readsOf(repo, aside)
  const t = spec.table
  const args: SqlValue[] = []
  let inner = scopeWhere(spec, layout, domain, scope, args)
  if (q.after) inner += ` AND ${compileAfter(q.order, q.after, layout.resolveField, 'id', args)}`
  const innerArgs = [...args]
  args.push(budget)
  const filter = q.filter ? compileFilter(q.filter, layout.resolveField, args, domain) : '1'
  args.push(q.limit, q.offset)
  // the list's own page statement, over the first `budget` rows of its scope in its order
  const from = `(SELECT * FROM ${t} WHERE ${inner} ORDER BY ${compileOrder(q.order, layout.resolveField, 'id')} LIMIT ?) AS ${t}`
  const rows = await all(pageSql(spec, layout, filter, q, from), args)
  if (rows.length < q.limit) {
    // a short page is the whole answer only if the budget covered the scope
    const [seen] = await all(`SELECT count(*) FROM (SELECT 1 FROM ${t} WHERE ${inner} LIMIT ?)`, [
      ...innerArgs,
      budget + 1,
    ])
    if (int(seen![0]) > budget) return null
  }
  return repo.pageOf(rows, q.limit)
}
