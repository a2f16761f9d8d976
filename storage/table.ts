/**
 * How a collection is stored: the table spec every entity declares next to its fields, and what
 * follows from it (which columns exist, how a row maps to a document). tests/storage/table-specs
 * compares every spec with the table the migrations create.
 */
import type { SqlValue } from './db'
import type { Doc } from './doc'

export interface TableSpec {
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
  /** true: only (domain, id, doc), no ct/lwt/version (derived caches rewritten as a whole). */
  bare?: boolean
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
