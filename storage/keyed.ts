/**
 * Lists over a fixed catalog of keys whose stored documents override defaults (domain settings):
 * the catalog is a VALUES table joined with what the domain stored, so filter, order and paging
 * run in SQL like every other list.
 */
import type { Db, SqlValue } from './db'
import type { Doc } from './doc'
import type { TableSpec } from './table'
import { compileFilter, compileOrder, jsonField, type FieldResolver, type ListQuery } from './query'
import { docOf } from './columns'

const resolve: FieldResolver = (path) => jsonField('doc', path)

export async function listWithDefaults(
  db: Db,
  spec: TableSpec,
  domain: string,
  defaults: Doc[],
  q: ListQuery,
): Promise<Doc[]> {
  const { table, idField = 'id' } = spec
  if (defaults.length === 0) return []
  const args: SqlValue[] = []
  const values = defaults.map((d) => {
    args.push(String(d[idField]), JSON.stringify(d))
    return '(?, ?)'
  })
  args.push(domain)
  const filter = q.filter ? `WHERE ${compileFilter(q.filter, resolve, args, domain)}` : ''
  args.push(q.limit, q.offset)
  const rows = await db.all(
    `WITH catalog(id, doc) AS (VALUES ${values.join(', ')})
     SELECT doc FROM (SELECT COALESCE(s.doc, c.doc) AS doc FROM catalog c LEFT JOIN ${table} s ON s.domain = ? AND s.id = c.id)
     ${filter} ORDER BY ${compileOrder(q.order, resolve, jsonField('doc', idField))} LIMIT ? OFFSET ?`,
    args,
  )
  return rows.map((r) => docOf(r[0]))
}
