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
}

/** Resolves a validated field path to a SQL expression (a column or a JSON extraction). */
export type FieldResolver = (path: string) => string

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

export function compileFilter(node: FilterNode, resolve: FieldResolver, args: SqlValue[]): string {
  switch (node.op) {
    case 'and':
    case 'or':
      return `(${node.args.map((n) => compileFilter(n, resolve, args)).join(` ${node.op.toUpperCase()} `)})`
    case 'not':
      return `(NOT ${compileFilter(node.arg, resolve, args)})`
    case 'isnull':
      return `(${operand(node.arg, resolve, args)} IS NULL)`
    case 'contains': {
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
 * ORDER BY clause; the tie-breaker column keeps paging stable. It runs in the direction of the last
 * term, so that one index (…, field, id) can serve an order either way.
 */
export function compileOrder(order: OrderItem[], resolve: FieldResolver, tieBreaker: string): string {
  const parts = order.map((o) => `${resolve(o.field)} ${o.desc ? 'DESC' : 'ASC'}`)
  if (!order.some((o) => resolve(o.field) === tieBreaker))
    parts.push(`${tieBreaker} ${order.at(-1)?.desc ? 'DESC' : 'ASC'}`)
  return parts.join(', ')
}
