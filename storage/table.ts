/**
 * How a collection is stored: the table spec every entity declares next to its fields, and what
 * follows from it (which columns exist, how a row maps to a document). tests/storage/table-specs
 * compares every spec with the table the migrations create.
 */
import type { Row, SqlValue } from './db'
import { checkStorable, type Doc, getPath, isPlainObject, MASKED, maskPaths } from './doc'
import { type FieldResolver, jsonField } from './query'
import { text, textOrNull } from './columns'

/**
 * `D`: the document the table stores, which its repository's reads return (`TableSpec<User>`).
 * Every write of the table goes through the entity or code that declares the spec, which checks
 * the document, so a row read back is a `D`.
 */
export interface TableSpec<D extends Doc = Doc> {
  table: string
  /** Entity type recorded in the journal. */
  objtype: string
  /** Doc field stored in the `id` column: 'id' (default) or a key such as 'key'. */
  idField?: string
  /** Indexed columns mirrored from doc paths: column name -> doc path. */
  columns?: Record<string, string>
  /**
   * Top-level fields kept in columns of their own (as JSON) instead of the doc: large values that
   * lists never show, so listing never reads them.
   */
  detached?: string[]
  /**
   * Columns kept out of the doc (password hashes), by the field name the journal shows for them:
   * never read by lists or GET, journaled only as a masked value.
   */
  hidden?: Record<string, string>
  /** Doc paths whose values the journal masks. */
  secrets?: string[]
  /** Whether ext.ct / ext.lwt are stamped into the doc (default true). */
  stamps?: boolean
  /** Columns computed from the doc on every write (a partition date, an expiry time). */
  derived?: Record<string, (doc: Doc) => SqlValue>
  /** The table has an `expires` column (ms since the epoch): reads given a time skip what expired. */
  expiring?: boolean
  /** false: changes are not journaled (derived data, the service's own bookkeeping). */
  journal?: false
  /** true: only (domain, id, doc), no ct/lwt/version (derived caches, written row by row). */
  bare?: boolean
  /**
   * Top-level array fields stored in no column of the table: each read (GET, lists, filters) assembles
   * them from other tables (a group's users, from an indexed edge table).
   */
  assembled?: Record<string, AssembledField>
  /** Never set: it only carries `D` (what `repo(spec)` infers its reads' type from). */
  readonly stores?: D
}

/** A field a read assembles in SQL for the row of `table` (the outer statement's table, unaliased). */
export interface AssembledField {
  /** The field's value: a JSON array. */
  value: (table: string) => string
  /**
   * True when the array holds a value. Its two parameters `?` are, in this order, the row's domain and
   * the value: bound, not correlated, so SQLite can find the few rows from the value's side.
   */
  contains: (table: string) => string
}

/** The columns a spec says its table has, in a stable order (for the spec-to-migration test). */
export function specColumns(spec: TableSpec): string[] {
  return [
    'domain',
    'id',
    'doc',
    ...(spec.bare ? [] : ['ct', 'lwt', 'version']),
    ...Object.keys(spec.columns ?? {}),
    ...(spec.detached ?? []),
    ...Object.keys(spec.hidden ?? {}),
    ...Object.keys(spec.derived ?? {}),
    ...(spec.expiring && !spec.derived?.expires ? ['expires'] : []),
  ]
}

/** What a spec means for rows: which columns hold what, how a document becomes a row and back. */
export class TableLayout {
  readonly idField: string
  readonly columns: [column: string, path: string][]
  readonly detached: string[]
  /** The detached fields as JSON keys, made once for `docText`. */
  private readonly detachedKeys: string[]
  readonly hidden: string[]
  readonly derived: [column: string, compute: (doc: Doc) => SqlValue][]
  /** Assembled fields and their SQL, spliced into every read after the detached fields. */
  readonly assembled: [field: string, sql: string][]
  /** The SQL expression of a (validated) field path: a column or a JSON extraction. */
  readonly resolveField: FieldResolver
  /** What a read selects: the doc, then the detached and hidden columns (see `docText`, `hiddenOf`). */
  readonly selected: string[]
  /** What a list selects before its keyset values: the doc, then the assembled fields (see `listText`). */
  readonly listed: string[]
  /** Every column a write sets besides domain, id, doc and the stamps, in the order of `rowValues`. */
  readonly written: string[]

  constructor(readonly spec: TableSpec) {
    this.idField = spec.idField ?? 'id'
    this.columns = Object.entries(spec.columns ?? {})
    this.detached = spec.detached ?? []
    this.hidden = Object.keys(spec.hidden ?? {})
    this.derived = Object.entries(spec.derived ?? {})
    const assembled = Object.entries(spec.assembled ?? {})
    this.assembled = assembled.map(([f, a]) => [f, a.value(spec.table)])
    this.detachedKeys = [...this.detached, ...this.assembled.map(([f]) => f)].map((f) => JSON.stringify(f))
    const assembledSql = this.assembled.map(([, sql]) => sql)
    this.selected = ['doc', ...this.detached, ...assembledSql, ...this.hidden]
    this.listed = ['doc', ...assembledSql]
    this.written = [...this.detached, ...this.columns.map(([c]) => c), ...this.hidden, ...this.derived.map(([c]) => c)]
    const byPath = new Map(this.columns.map(([column, path]) => [path, column]))
    byPath.set(this.idField, 'id')
    if (!spec.bare) {
      byPath.set('ext.ct', 'ct')
      byPath.set('ext.lwt', 'lwt')
    }
    for (const d of this.detached) byPath.set(d, d)
    for (const [f, sql] of this.assembled) byPath.set(f, sql)
    const resolve: FieldResolver = (path) => {
      const column = byPath.get(path)
      if (column) return column
      const top = path.split('.', 1)[0]!
      return this.detached.includes(top) ? jsonField(top, path.slice(top.length + 1)) : jsonField('doc', path)
    }
    const contains = new Map(assembled.map(([f, a]) => [f, a.contains(spec.table)]))
    resolve.contains = (path) => contains.get(path)
    this.resolveField = resolve
  }

  /** `listed`, with NULL (nothing spliced in) for the assembled fields in `omit`. */
  listedOmitting(omit: readonly string[] | undefined): string[] {
    if (!omit?.length) return this.listed
    return ['doc', ...this.assembled.map(([f, sql]) => (omit.includes(f) ? 'NULL' : sql))]
  }

  /** The doc with the server's times in `ext` (unless the table keeps none). */
  stamp(doc: Doc, ct: string, lwt: string): Doc {
    if (this.spec.stamps === false || this.spec.bare) return doc
    const ext = isPlainObject(doc.ext) ? doc.ext : {}
    return { ...doc, ext: { ...ext, ct, lwt } }
  }

  /** The stored doc (without detached fields), and the values of the `written` columns. */
  rowValues(full: Doc, hidden: Record<string, SqlValue>): { doc: string; columns: SqlValue[] } {
    const doc: Doc = { ...full }
    for (const [f] of this.assembled) delete doc[f]
    checkStorable(doc) // assembled lists are ids the write checked (a group's 100,000 members)
    const detached = this.detached.map((f) => {
      const v = doc[f]
      delete doc[f]
      return v === undefined ? null : JSON.stringify(v)
    })
    const mirrored = this.columns.map(([, path]) => {
      const v = getPath(full, path)
      return v === undefined ? null : typeof v === 'boolean' ? (v ? 1 : 0) : (v as SqlValue)
    })
    const derived = this.derived.map(([, compute]) => compute(full))
    const columns = [...detached, ...mirrored, ...this.hidden.map((h) => hidden[h] ?? null), ...derived]
    return { doc: JSON.stringify(doc), columns }
  }

  /**
   * The doc with its members in the order a read gives them (`docText`): the detached, then the
   * assembled fields last. A write answers it so: its text is then the text a GET of it answers, and
   * the ETag of both the same.
   */
  asRead(doc: Doc): Doc {
    if (this.detachedKeys.length === 0) return doc
    const last = [...this.detached, ...this.assembled.map(([f]) => f)]
    const entries = Object.entries(doc)
    return Object.fromEntries([
      ...entries.filter(([k]) => !last.includes(k)),
      ...last.filter((f) => doc[f] !== undefined).map((f) => [f, doc[f]]),
    ])
  }

  /**
   * The whole document as JSON text from a row of `selected`: the stored doc with its detached and
   * assembled fields spliced back in.
   */
  docText(row: Row): string {
    return this.splice(row, this.detachedKeys, 0)
  }

  /** A list item as JSON text from a row of `listed`: the stored doc with its assembled fields. */
  listText(row: Row): string {
    return this.splice(row, this.detachedKeys, this.detached.length)
  }

  private splice(row: Row, keys: string[], from: number): string {
    const doc = text(row[0])
    let members = ''
    for (let i = from; i < keys.length; i++) {
      const value = textOrNull(row[1 + i - from])
      if (value !== null) members += `${members ? ',' : ''}${keys[i]}:${value}`
    }
    if (!members) return doc
    return doc.length > 2 ? `${doc.slice(0, -1)},${members}}` : `{${members}}`
  }

  /** The hidden column values from a row of `selected`. */
  hiddenOf(row: Row): Record<string, SqlValue> {
    const out: Record<string, SqlValue> = {}
    const start = 1 + this.detached.length + this.assembled.length
    this.hidden.forEach((h, i) => {
      out[h] = row[start + i] as SqlValue
    })
    return out
  }

  /** The object as the journal records it: secrets masked, a set hidden value shown only as masked. */
  journalObj(doc: Doc, hidden: Record<string, SqlValue>): Doc {
    const obj = { ...maskPaths(doc, this.spec.secrets ?? []) }
    for (const h of this.hidden) if (hidden[h] !== null && hidden[h] !== undefined) obj[this.spec.hidden![h]!] = MASKED
    return obj
  }

  /** The doc field a column holds (for naming the field of a unique-index violation). */
  fieldOfColumn(column: string | undefined): string {
    if (column === 'id' || column === undefined) return this.idField
    return this.columns.find(([c]) => c === column)?.[1] ?? column
  }
}
