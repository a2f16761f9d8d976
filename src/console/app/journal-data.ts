/** The journal (/rest/v1/journal/changes): searching it, and the before/after of a change. */
import { API, call, query } from './api'
import { cellText } from './schema'

export interface Change {
  cmdtype: 'create' | 'update' | 'delete'
  dtutc: string
  modifierid: string
  modifiername: string
  objtype: string
  objid: string
  fields?: string
  obj: Record<string, unknown>
}

export interface Search {
  objtype?: string
  objid?: string
  dtstart?: string
  dtstop?: string
}

export async function searchJournal(params: Search, list: Record<string, string | number | undefined> = {}) {
  const a = await call<Change[]>('GET', `${API}/journal/changes${query({ params: JSON.stringify(params), ...list })}`)
  const total = a.headers.get('x-total-count')
  return { changes: a.data, total: total === null ? null : Number(total) }
}

/** An object's changes, oldest first (up to 1,000). */
export const historyOf = async (objtype: string, objid: string) =>
  (await searchJournal({ objtype, objid }, { order: '"dtutc"', limit: 1000 })).changes

function flatten(value: unknown, prefix = '', out: Record<string, string> = {}) {
  if (value && typeof value === 'object' && !Array.isArray(value))
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out)
  else if (prefix) out[prefix] = cellText(value)
  return out
}

export interface DiffRow {
  field: string
  before: string
  after: string
}

/** The fields a change made different: the object before it (the previous change's) and after it. */
export function diff(before: unknown, after: unknown): DiffRow[] {
  const a = flatten(before)
  const b = flatten(after)
  return [...new Set([...Object.keys(a), ...Object.keys(b)])]
    .filter((k) => a[k] !== b[k])
    .sort()
    .map((field) => ({ field, before: a[field] ?? '', after: b[field] ?? '' }))
}

/** A change's rows: against the one before it in the object's history. */
export function diffOf(change: Change, previous: Change | undefined): DiffRow[] {
  if (change.cmdtype === 'delete') return diff(change.obj, undefined)
  return diff(change.cmdtype === 'create' ? undefined : previous?.obj, change.obj)
}
