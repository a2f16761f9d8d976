/**
 * The statements of a list over a table of the standard shape: the page (with the keyset values of
 * its last row), its count, and whether answering it means sorting every match. Built from a
 * validated ListQuery; nothing from a request reaches SQL but as parameters.
 */
import type { SqlValue } from './db'
import { compileAfter, compileFilter, compileOrder, type ListQuery } from './query'
import type { TableLayout, TableSpec } from './table'

/** A range over one derived column, for lists of partitioned tables: from <= column < to. */
export interface ColumnRange {
  column: string
  from: SqlValue
  to: SqlValue
}

export interface ListScope {
  /** Bounds a derived column (a partition date). */
  range?: ColumnRange
  /** Hides what expired by then (expiring tables). */
  now?: number
  /** Ends the list at this id (a scan budget of a list ordered by id): ids up to it ascending, from it descending. */
  idBound?: { id: string; desc: boolean }
}

/** The rows a list may show at all: the domain, the range, what is alive. */
export function scopeWhere(
  spec: TableSpec,
  layout: TableLayout,
  domain: string,
  scope: ListScope,
  args: SqlValue[],
): string {
  args.push(domain)
  let where = 'domain = ?'
  if (scope.range) {
    const { column } = scope.range
    if (!layout.derived.some(([c]) => c === column)) throw new Error(`${spec.table} has no column ${column}`)
    where += ` AND ${column} >= ? AND ${column} < ?`
    args.push(scope.range.from, scope.range.to)
  }
  if (spec.expiring && scope.now !== undefined) {
    where += ' AND (expires IS NULL OR expires > ?)'
    args.push(scope.now)
  }
  if (scope.idBound) {
    where += scope.idBound.desc ? ' AND id >= ?' : ' AND id <= ?'
    args.push(scope.idBound.id)
  }
  return where
}

/** The WHERE clause of a list: its scope, the filter, the keyset cursor. */
export function listWhere(
  spec: TableSpec,
  layout: TableLayout,
  domain: string,
  q: ListQuery,
  scope: ListScope,
  args: SqlValue[],
): string {
  let where = scopeWhere(spec, layout, domain, scope, args)
  if (q.filter) where += ` AND ${compileFilter(q.filter, layout.resolveField, args, domain)}`
  if (q.after) where += ` AND ${compileAfter(q.order, q.after, layout.resolveField, 'id', args)}`
  return where
}

/**
 * The page: the doc (and assembled fields), then the order expressions and the id (the keyset cursor
 * of the last row). `from` may be a subquery of the table under the table's own name.
 */
export function pageSql(spec: TableSpec, layout: TableLayout, where: string, q: ListQuery, from = spec.table): string {
  const keys = q.order.map((o) => layout.resolveField(o.field))
  if (!keys.includes('id')) keys.push('id')
  return `SELECT ${layout.listedOmitting(q.omit).join(', ')}, ${keys.join(', ')} FROM ${from} WHERE ${where}
          ORDER BY ${compileOrder(q.order, layout.resolveField, 'id')} LIMIT ? OFFSET ?`
}

/** The first row of the list, for asking SQLite how it would find and order the rows. */
export function probeSql(spec: TableSpec, layout: TableLayout, where: string, q: ListQuery): string {
  return `SELECT doc FROM ${spec.table} WHERE ${where} ORDER BY ${compileOrder(q.order, layout.resolveField, 'id')} LIMIT 1`
}
