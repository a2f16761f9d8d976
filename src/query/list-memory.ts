/**
 * The list query applied to documents held in memory (the cluster's nodes live in the KV store, not
 * in a table), with the same meaning as the SQL a table's list compiles to: the filter through the
 * in-memory evaluator the event matcher uses, the order as SQL's ORDER BY, then offset and limit.
 */
import { getPath, type Doc } from '~storage/doc'
import type { ListQuery } from '~storage/query'
import { compareFields, filterHolds } from './filter-eval'

/** `tiebreak` orders documents the client's order leaves equal (a table list's is the id). */
export function applyListQuery<T extends Doc>(docs: readonly T[], query: ListQuery, tiebreak: string): T[] {
  const kept = query.filter ? docs.filter((d) => filterHolds(query.filter!, d)) : [...docs]
  const order = [...query.order, { field: tiebreak, desc: false }]
  kept.sort((a, b) => {
    for (const { field, desc } of order) {
      const c = compareFields(getPath(a, field), getPath(b, field))
      if (c !== 0) return desc ? -c : c
    }
    return 0
  })
  return kept.slice(query.offset, query.offset + query.limit)
}
