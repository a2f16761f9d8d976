/** Helpers over JSON documents (plain objects) shared by storage and the HTTP layer. */

export type Doc = Record<string, unknown>

export function isPlainObject(v: unknown): v is Doc {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * A member that holds text (an id, a required name) of a doc typed only as `Doc` (a record, a
 * request's payload): checked, so a doc without it fails here rather than later, mistyped.
 */
export function str(doc: Doc, field: string): string {
  const v = doc[field]
  if (typeof v !== 'string') throw new TypeError(`${field} is not text`)
  return v
}

/** A member that is text when present (an optional name): anything else reads as absent. */
export function optStr(doc: Doc | undefined, field: string): string | undefined {
  const v = doc?.[field]
  return typeof v === 'string' ? v : undefined
}

/** Whether a value is a list of strings (a doc's ids or names). */
export const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string')

/** A doc's list of ids or names: none when absent (or not a list of strings). */
export const stringsOf = (v: unknown): string[] => (isStrings(v) ? v : [])

/** Value at a dotted path, or undefined; own members only (`constructor` is not Object's). */
export function getPath(doc: unknown, path: string): unknown {
  let cur: unknown = doc
  for (const key of path.split('.')) {
    if (!isPlainObject(cur) || !Object.hasOwn(cur, key)) return undefined
    cur = cur[key]
  }
  return cur
}

/** Sets an own member, also one named `__proto__` (an assignment would set the object's prototype). */
export function setOwn(doc: Doc, key: string, value: unknown): void {
  Object.defineProperty(doc, key, { value, writable: true, enumerable: true, configurable: true })
}

/** Nested objects become dotted keys (`{opts: {title}}` -> `{"opts.title"}`); arrays stay values. */
export function flatten(doc: Doc, prefix = '', out: Doc = {}): Doc {
  for (const [k, v] of Object.entries(doc)) {
    const key = prefix + k
    if (isPlainObject(v) && Object.keys(v).length > 0) flatten(v, `${key}.`, out)
    else out[key] = v
  }
  return out
}

/** Dotted names of the leaves that differ between two documents, sorted. */
export function changedPaths(before: Doc, after: Doc, ignore: ReadonlySet<string>): string[] {
  const a = flatten(before)
  const b = flatten(after)
  const out: string[] = []
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (ignore.has(key)) continue
    if (JSON.stringify(a[key]) !== JSON.stringify(b[key])) out.push(key)
  }
  return out.sort()
}

export const MASKED = '***'

/** A copy of the document with the values at the given paths replaced by MASKED. */
export function maskPaths(doc: Doc, paths: readonly string[]): Doc {
  if (paths.length === 0) return doc
  const copy: Doc = structuredClone(doc)
  for (const path of paths) {
    const keys = path.split('.')
    let cur: unknown = copy
    for (const key of keys.slice(0, -1)) cur = isPlainObject(cur) ? cur[key] : undefined
    const last = keys[keys.length - 1]!
    if (isPlainObject(cur) && cur[last] !== undefined) cur[last] = MASKED
  }
  return copy
}

/** Nesting a stored document may have: SQLite's JSON functions stop at 1000 levels and fail the whole query. */
export const MAX_DOC_DEPTH = 100

/** A value the database cannot keep as given: refused with a 400 naming `field`. */
export class UnstorableValue extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message)
  }
}

/**
 * Refuses a document SQLite's JSON functions would fail on: one nested deeper than MAX_DOC_DEPTH
 * (every filtered or ordered list of its table would fail while it is stored), or a string or key
 * holding a lone UTF-16 surrogate (`"\ud800"` is valid JSON, but json_extract turns it into bytes
 * that are not UTF-8, and the driver aborts the process reading them). The error names the
 * top-level field.
 */
export function checkStorable(doc: Doc): void {
  for (const field in doc) {
    if (!field.isWellFormed()) throw new UnstorableValue(field, `the field name ${JSON.stringify(field)} ${LONE}`)
    unstorable(doc[field], field, 1)
  }
}

/** What checkStorable would refuse in the document, or null. */
export function storableProblem(doc: Doc): string | null {
  try {
    checkStorable(doc)
    return null
  } catch (err) {
    if (err instanceof UnstorableValue) return err.message
    throw err
  }
}

const LONE = 'holds a lone UTF-16 surrogate, which is not text'

function unstorable(v: unknown, field: string, depth: number): void {
  if (typeof v === 'string') {
    if (!v.isWellFormed()) throw new UnstorableValue(field, `${field} ${LONE}`)
    return
  }
  if (typeof v !== 'object' || v === null) return
  if (depth >= MAX_DOC_DEPTH) throw new UnstorableValue(field, `${field} is nested deeper than ${MAX_DOC_DEPTH} levels`)
  if (Array.isArray(v)) {
    for (const item of v) unstorable(item, field, depth + 1)
    return
  }
  for (const key in v) {
    if (!key.isWellFormed()) throw new UnstorableValue(field, `a key in ${field} ${LONE}`)
    unstorable((v as Doc)[key], field, depth + 1)
  }
}
