/**
 * The list query every collection accepts (filter, order, offset, limit), already validated by
 * the HTTP layer's parser, and its compilation to SQL. Nothing from a request reaches SQL except
 * through parameters and the column expressions a table resolves field paths to.
 */
import type { SqlValue } from './db'

export type Literal = string | number | boolean | null
export type Operand = { field: string } | { value: Literal }
export type CompareOp = '==' | '!=' | '>' | '>=' | '<' | '<='

export type FilterNode =
  | { op: 'and' | 'or'; args: FilterNode[] }
  | { op: 'not'; arg: FilterNode }
  | { op: CompareOp; left: Operand; right: Operand }
  | { op: 'in'; left: Operand; values: Literal[] }
  | { op: 'like' | 'ilike'; left: Operand; pattern: string }
  | { op: 'isnull'; arg: Operand }
  /** The field is an array holding the value (a multi property, a cache's list of ids). */
  | { op: 'contains'; field: string; value: Literal }

export interface OrderItem {
  field: string
  desc: boolean
}

export interface ListQuery {
  filter: FilterNode | null
  order: OrderItem[]
  offset: number
  limit: number
  /**
   * Keyset paging: the order values (then the id) of the last row of the previous page; the page
   * starts after it, so its cost does not grow with how deep it is.
   */
  after?: SqlValue[]
  /**
   * Assembled fields the reader will not show (its mask leaves them out): the page does not assemble
   * them, so a large member list costs nothing in a list that shows only ids.
   */
  omit?: readonly string[]
}

/**
 * Resolves a validated field path to a SQL expression (a column or a JSON extraction). `contains`,
 * when it knows the path, gives the SQL that holds when the field's array holds a value; its two `?`
 * are the domain and the value (an array assembled from an indexed table answers that from the
 * value's side, without building the array for every row).
 */
export type FieldResolver = ((path: string) => string) & { contains?: (path: string) => string | undefined }

/** The one way to address a JSON member, so expression indexes match textually. */
export function jsonField(column: string, path: string): string {
  return `json_extract(${column}, '$.${path}')`
}

const SQL_COMPARE: Record<CompareOp, string> = { '==': '=', '!=': 'IS NOT', '>': '>', '>=': '>=', '<': '<', '<=': '<=' }

function bindable(value: Literal): SqlValue {
  return typeof value === 'boolean' ? (value ? 1 : 0) : value
}

function operand(o: Operand, resolve: FieldResolver, args: SqlValue[]): string {
  if ('field' in o) return resolve(o.field)
  args.push(bindable(o.value))
  return '?'
}

/** SQL LIKE ignores case for ASCII; GLOB does not, so `like` patterns are translated to GLOB. */
export function likeToGlob(pattern: string): string {
  let out = ''
  for (const ch of pattern) {
    if (ch === '%') out += '*'
    else if (ch === '_') out += '?'
    else if (ch === '*' || ch === '?' || ch === '[') out += `[${ch}]`
    else out += ch
  }
  return out
}

/** The filter as SQL over the rows of `domain` (which an assembled field's `contains` binds). */
export function compileFilter(node: FilterNode, resolve: FieldResolver, args: SqlValue[], domain: string): string {
  switch (node.op) {
    case 'and':
    case 'or':
      return `(${node.args.map((n) => compileFilter(n, resolve, args, domain)).join(` ${node.op.toUpperCase()} `)})`
    case 'not':
      return `(NOT ${compileFilter(node.arg, resolve, args, domain)})`
    case 'isnull':
      return `(${operand(node.arg, resolve, args)} IS NULL)`
    case 'contains': {
      const indexed = resolve.contains?.(node.field)
      if (indexed !== undefined) {
        args.push(domain, bindable(node.value))
        return `(${indexed})`
      }
      // anything but a JSON array (text, a number, malformed JSON) holds nothing, never an error
      const x = resolve(node.field)
      args.push(bindable(node.value))
      const array = `CASE WHEN json_type(CASE WHEN json_valid(${x}) THEN ${x} END) = 'array' THEN ${x} ELSE '[]' END`
      return `(EXISTS (SELECT 1 FROM json_each(${array}) WHERE value = ?))`
    }
    case 'in': {
      const left = operand(node.left, resolve, args)
      if (node.values.length === 0) return '(0)'
      for (const v of node.values) args.push(bindable(v))
      return `(${left} IN (${node.values.map(() => '?').join(',')}))`
    }
    case 'like':
    case 'ilike': {
      const left = operand(node.left, resolve, args)
      if (node.op === 'like') {
        args.push(likeToGlob(node.pattern))
        return `(${left} GLOB ?)`
      }
      args.push(node.pattern)
      return `(${left} LIKE ?)`
    }
    default: {
      const isNull = (o: Operand) => 'value' in o && o.value === null
      if (node.op === '==' && (isNull(node.left) || isNull(node.right))) {
        const other = isNull(node.left) ? node.right : node.left
        return `(${operand(other, resolve, args)} IS NULL)`
      }
      const left = operand(node.left, resolve, args)
      const right = operand(node.right, resolve, args)
      return `(${left} ${SQL_COMPARE[node.op]} ${right})`
    }
  }
}

/**
 * A keyset cursor whose values do not match the list's order (one per order term, then the id):
 * the client sent a cursor of another order or made one up; refused with a 400 naming `after`.
 */
export class BadCursor extends Error {
  constructor(readonly expected: number) {
    super(`after must be the X-Next-After of the previous page with the same order (${expected} values)`)
  }
}

/**
 * Rows after the cursor in the list's order (the order fields, then the tie-breaker): for each
 * position, the rows equal on every earlier field and beyond on this one. Follows SQLite's order,
 * where NULL comes first ascending and last descending, so no row is skipped or repeated.
 */
export function compileAfter(
  order: OrderItem[],
  after: SqlValue[],
  resolve: FieldResolver,
  tieBreaker: string,
  args: SqlValue[],
): string {
  const terms = order.map((o) => ({ expr: resolve(o.field), desc: o.desc }))
  if (!terms.some((t) => t.expr === tieBreaker)) terms.push({ expr: tieBreaker, desc: order.at(-1)?.desc ?? false })
  // a cursor of another order (or hand-made) cannot be placed in this one
  if (after.length !== terms.length) throw new BadCursor(terms.length)
  const alternatives: string[] = []
  terms.forEach((term, i) => {
    const v = after[i] as SqlValue
    // nothing comes after NULL descending but its ties: no alternative, so bind none of its values
    // either (binding the equalities first shifted every later argument, LIMIT's too)
    if (v === null && term.desc) return
    const parts: string[] = []
    for (let j = 0; j < i; j++) {
      parts.push(`${terms[j]!.expr} IS ?`)
      args.push(after[j] as SqlValue)
    }
    if (v === null) parts.push(`${term.expr} IS NOT NULL`)
    else {
      parts.push(term.desc ? `(${term.expr} < ? OR ${term.expr} IS NULL)` : `${term.expr} > ?`)
      args.push(v)
    }
    alternatives.push(`(${parts.join(' AND ')})`)
  })
  if (alternatives.length === 0) return '(0)'
  // implied by the above, and what lets an index on the first order field seek to the page instead
  // of reading every row before it: the cost of a page does not grow with its depth
  const first = terms[0]!
  const v = after[0] as SqlValue
  let seek = '' // after a NULL ascending every row may follow: no bound
  if (v !== null) {
    seek = first.desc ? ` AND (${first.expr} <= ? OR ${first.expr} IS NULL)` : ` AND ${first.expr} >= ?`
    args.push(v)
  }
  return `((${alternatives.join(' OR ')})${seek})`
}

/**
 * ORDER BY clause; the tie-breaker column keeps paging stable. It runs in the direction of the last
 * term, so that one index (…, field, id) can serve an order either way.
 */
export function compileOrder(order: OrderItem[], resolve: FieldResolver, tieBreaker: string): string {
  const parts = order.map((o) => `${resolve(o.field)} ${o.desc ? 'DESC' : 'ASC'}`)
  if (!order.some((o) => resolve(o.field) === tieBreaker))
    parts.push(`${tieBreaker} ${order.at(-1)?.desc ? 'DESC' : 'ASC'}`)
  return parts.join(', ')
}
