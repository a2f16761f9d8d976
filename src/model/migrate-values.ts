/**
 * Records follow their class: when a property's data_type (or `multi`) changes, every stored value
 * is converted where that loses nothing ("12" → 12, 12 → "12", "true" → true, a date → midnight of
 * it), and otherwise the class change is refused with a 409 naming the property and how many
 * records block it; a new property with a `default` is filled in where records lack it (when the
 * class fills defaults). Each record changed this way is an update in the journal, like any other.
 */
import type { TxStep } from '~storage/db'
import { type Doc, getPath, str } from '~storage/doc'
import { recordsAfter } from '~storage/model-tables'
import type { Repository } from '~storage/repository'
import type { Unit } from '../entities/unit'
import { ApiError } from '../errors'
import { checkValue, type Property } from './properties'

const BLOCKED = Symbol('blocked')

/** One value in the new type's terms, or BLOCKED when that would lose something. */
function convertOne(value: unknown, to: Property): unknown {
  let candidate = value
  switch (to.data_type) {
    case 'string':
      if (typeof value === 'number' || typeof value === 'boolean') candidate = String(value)
      break
    case 'long':
    case 'int':
    case 'integer':
      if (typeof value === 'string' && /^-?\d{1,16}$/.test(value)) candidate = Number(value)
      break
    case 'float':
      if (typeof value === 'string' && value.trim() !== '' && String(Number(value)) === value) candidate = Number(value)
      break
    case 'boolean':
      if (value === 'true' || value === 'false') candidate = value === 'true'
      break
    case 'datetime':
      if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value)) candidate = `${value}T00:00:00.000Z`
      break
    case 'date':
      if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T00:00:00(\.0+)?Z$/.test(value))
        candidate = value.slice(0, 10)
      break
  }
  try {
    const checked = checkValue({ ...to, multi: false }, candidate)
    // a float that stops being one, or text that became a different number, is not kept
    return typeof checked === 'number' && typeof value === 'number' && checked !== value ? BLOCKED : checked
  } catch {
    return BLOCKED
  }
}

/** A whole stored value (an array when multi) in the new property's terms, or BLOCKED. */
export function convertValue(value: unknown, from: Property, to: Property): unknown {
  if (value === null || value === undefined) return value
  const items = from.multi ? (value as unknown[]) : [value]
  if (!to.multi && items.length > 1) return BLOCKED
  const converted = items.map((v) => convertOne(v, to))
  if (converted.includes(BLOCKED)) return BLOCKED
  return to.multi ? converted : converted[0]
}

const changedType = (a: Property, b: Property) => a.data_type !== b.data_type || !!a.multi !== !!b.multi

/** Records read per statement: a chunk takes milliseconds, and long work pauses between them. */
const CHUNK = 500

/**
 * Converts the records of the tables (a class and its subclasses) after a change of properties, a
 * chunk of records at a time. Any record whose value cannot convert refuses the whole change (409,
 * counting them over every table), which the transaction then rolls back.
 */
export function* migrateRecords(
  u: Unit,
  repos: Repository[],
  before: Property[],
  after: Property[],
  fillDefaults: boolean,
): TxStep<void> {
  const old = new Map(before.map((p) => [p.name, p]))
  const retyped = after.filter((p) => old.has(p.name) && changedType(old.get(p.name)!, p))
  const defaults = fillDefaults ? after.filter((p) => !old.has(p.name) && p.default !== undefined) : []
  if (retyped.length === 0 && defaults.length === 0) return
  const domain = u.w.domain
  // records whose values cannot convert, per property: the change is refused (and rolled back) at the end
  const blocking = new Map(retyped.map((p) => [p.name, 0]))
  for (const repo of repos) {
    const total = yield* repo.count(domain)
    let done = 0
    for (let last = ''; ; ) {
      const docs = yield* recordsAfter(repo.spec.table, domain, last, CHUNK)
      if (docs.length === 0) break
      for (const doc of docs) {
        const changed: Doc = {}
        // getPath reads own values only: a property named `constructor` is not Object.prototype's
        for (const p of retyped) {
          const value = convertValue(getPath(doc, p.name), old.get(p.name)!, p)
          if (value === BLOCKED) blocking.set(p.name, blocking.get(p.name)! + 1)
          else if (value !== getPath(doc, p.name)) changed[p.name] = value
        }
        for (const p of defaults) if (getPath(doc, p.name) == null) changed[p.name] = p.default
        // once a record blocks, the change is refused: the rest is only counted
        if (Object.keys(changed).length > 0 && [...blocking.values()].every((n) => n === 0))
          yield* repo.update(u.w, str(doc, 'id'), (current) => ({ ...current, ...changed }))
        u.progress(++done, total)
      }
      last = str(docs.at(-1)!, 'id')
    }
  }
  for (const p of retyped) {
    const n = blocking.get(p.name)!
    if (n === 0) continue
    const was = old.get(p.name)!
    const message = `properties: ${p.name} cannot become ${p.data_type}${p.multi ? '[]' : ''} (from ${was.data_type}${was.multi ? '[]' : ''}): ${n} record(s) hold values that would be lost`
    throw new ApiError(409, message, { field: 'properties', property: p.name, records: n })
  }
}
