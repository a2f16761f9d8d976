/**
 * The generic repository: list, get, lookup, create, update and remove for any table of the
 * standard shape (domain, id, <key columns>, doc, ct, lwt, version). Every statement is scoped by
 * the domain it is given, and every mutation writes its journal record in the same transaction.
 */
import type { Db, Row, SqlValue, TxStep } from './db'
import { ConstraintError, tx } from './db'
import { changedPaths, getPath, isPlainObject, maskPaths, type Doc } from './doc'
import { appendJournal, type WriteContext } from './journal'
import { compileFilter, compileOrder, jsonField, type FieldResolver, type ListQuery } from './query'

export interface TableSpec {
  table: string
  /** Entity type recorded in the journal. */
  objtype: string
  /** Doc field stored in the `id` column: 'id' (default) or a key such as 'key'. */
  idField?: string
  /** Indexed columns mirrored from doc paths: column name -> doc path. */
  columns?: Record<string, string>
  /** Extra columns kept out of the doc (password hashes); never listed, never journaled. */
  hidden?: string[]
  /** Doc paths whose values the journal masks. */
  secrets?: string[]
  /** Top-level doc fields left out of list reads (large values). */
  listExclude?: string[]
  /** Whether ext.ct / ext.lwt are stamped into the doc (default true). */
  stamps?: boolean
}

/** Changes that only touch these never count as an update. */
const STAMP_PATHS = new Set(['ext.ct', 'ext.lwt'])

export class Repository {
  readonly idField: string
  private readonly columns: [column: string, path: string][]
  private readonly resolveField: FieldResolver
  private readonly sql: Record<'get' | 'getFull' | 'insert' | 'update' | 'delete', string>
  private readonly listDoc: string

  constructor(
    readonly db: Db,
    readonly spec: TableSpec,
  ) {
    this.idField = spec.idField ?? 'id'
    this.columns = Object.entries(spec.columns ?? {})
    const byPath = new Map(this.columns.map(([column, path]) => [path, column]))
    byPath.set(this.idField, 'id')
    byPath.set('ext.ct', 'ct')
    byPath.set('ext.lwt', 'lwt')
    this.resolveField = (path) => byPath.get(path) ?? jsonField('doc', path)

    const t = spec.table
    const hidden = spec.hidden ?? []
    const extra = [...this.columns.map(([c]) => c), ...hidden]
    this.sql = {
      get: `SELECT doc FROM ${t} WHERE domain = ? AND id = ?`,
      getFull: `SELECT doc, version${hidden.map((h) => `, ${h}`).join('')} FROM ${t} WHERE domain = ? AND id = ?`,
      insert: `INSERT INTO ${t} (domain, id, doc, ct, lwt, version${extra.map((c) => `, ${c}`).join('')})
               VALUES (?, ?, ?, ?, ?, 1${extra.map(() => ', ?').join('')})`,
      update: `UPDATE ${t} SET doc = ?, lwt = ?, version = version + 1${extra.map((c) => `, ${c} = ?`).join('')}
               WHERE domain = ? AND id = ?`,
      delete: `DELETE FROM ${t} WHERE domain = ? AND id = ?`,
    }
    const excluded = spec.listExclude ?? []
    this.listDoc = excluded.length ? `json_remove(doc${excluded.map((f) => `, '$.${f}'`).join('')})` : 'doc'
  }

  /** SQL expression of a field path, for callers that build on this table's queries. */
  field(path: string): string {
    return this.resolveField(path)
  }

  /** The stored JSON text of one entity: the hot point read passes it through unparsed. */
  async getText(domain: string, id: string): Promise<string | undefined> {
    const row = await this.db.get(this.sql.get, [domain, id])
    return row?.[0] as string | undefined
  }

  async get(domain: string, id: string): Promise<Doc | undefined> {
    const text = await this.getText(domain, id)
    return text === undefined ? undefined : (JSON.parse(text) as Doc)
  }

  /** The hidden column values of one entity (e.g. a password hash). */
  async getHidden(domain: string, id: string): Promise<Record<string, SqlValue> | undefined> {
    const row = await this.db.get(this.sql.getFull, [domain, id])
    return row && this.hiddenOf(row)
  }

  async list(domain: string, q: ListQuery): Promise<Doc[]> {
    const args: SqlValue[] = [domain]
    let where = 'domain = ?'
    if (q.filter) where += ` AND ${compileFilter(q.filter, this.resolveField, args)}`
    args.push(q.limit, q.offset)
    const rows = await this.db.all(
      `SELECT ${this.listDoc} FROM ${this.spec.table} WHERE ${where}
       ORDER BY ${compileOrder(q.order, this.resolveField, 'id')} LIMIT ? OFFSET ?`,
      args,
    )
    return rows.map((r) => JSON.parse(r[0] as string) as Doc)
  }

  /** Ids of the entities whose value in any of the given fields equals `value`. */
  async lookup(domain: string, fields: readonly string[], value: string | number): Promise<string[]> {
    const cond = fields.map((f) => `${this.resolveField(f)} = ?`).join(' OR ')
    const rows = await this.db.all(
      `SELECT id FROM ${this.spec.table} WHERE domain = ? AND (${cond}) ORDER BY id LIMIT 1000`,
      [domain, ...fields.map(() => value)],
    )
    return rows.map((r) => r[0] as string)
  }

  // ---- mutations: transaction steps, and one-transaction wrappers ----

  *insert(w: WriteContext, input: Doc, hidden: Record<string, SqlValue> = {}): TxStep<Doc> {
    const doc = this.stamp(input, w.now, w.now)
    const id = String(doc[this.idField])
    try {
      yield* tx.run(this.sql.insert, [w.domain, id, JSON.stringify(doc), w.now, w.now, ...this.extraValues(doc, hidden)])
    } catch (err) {
      throw this.explainConstraint(err, id)
    }
    yield* appendJournal(w, { cmdtype: 'create', objtype: this.spec.objtype, objid: id, obj: this.journalObj(doc) })
    return doc
  }

  /**
   * Applies `change` to the stored entity: it returns the new doc and may set new hidden values
   * in the object it is given. An update that changes nothing writes nothing. Undefined when absent.
   */
  *update(
    w: WriteContext,
    id: string,
    change: (current: Doc, hidden: Record<string, SqlValue>) => Doc,
  ): TxStep<Doc | undefined> {
    const row = yield* tx.get(this.sql.getFull, [w.domain, id])
    if (!row) return undefined
    const before = JSON.parse(row[0] as string) as Doc
    const oldHidden = this.hiddenOf(row)
    const hidden = { ...oldHidden }
    const ct = getPath(before, 'ext.ct') as string | undefined
    const after = this.stamp(change(structuredClone(before), hidden), ct ?? w.now, w.now)
    const changed = changedPaths(before, after, STAMP_PATHS)
    for (const h of this.spec.hidden ?? []) if (hidden[h] !== oldHidden[h]) changed.push(h)
    if (changed.length === 0) return before
    try {
      yield* tx.run(this.sql.update, [JSON.stringify(after), w.now, ...this.extraValues(after, hidden), w.domain, id])
    } catch (err) {
      throw this.explainConstraint(err, id)
    }
    yield* appendJournal(w, {
      cmdtype: 'update',
      objtype: this.spec.objtype,
      objid: id,
      fields: changed.join(','),
      obj: this.journalObj(after),
    })
    return after
  }

  /** Deletes one entity; returns it as it was, or undefined when absent. */
  *remove(w: WriteContext, id: string): TxStep<Doc | undefined> {
    const row = yield* tx.get(this.sql.get, [w.domain, id])
    if (!row) return undefined
    const before = JSON.parse(row[0] as string) as Doc
    yield* tx.run(this.sql.delete, [w.domain, id])
    yield* appendJournal(w, { cmdtype: 'delete', objtype: this.spec.objtype, objid: id, obj: this.journalObj(before) })
    return before
  }

  create(w: WriteContext, doc: Doc, hidden?: Record<string, SqlValue>): Promise<Doc> {
    return this.db.write(() => this.insert(w, doc, hidden))
  }

  modify(w: WriteContext, id: string, change: Parameters<Repository['update']>[2]): Promise<Doc | undefined> {
    return this.db.write(() => this.update(w, id, change))
  }

  delete(w: WriteContext, id: string): Promise<Doc | undefined> {
    return this.db.write(() => this.remove(w, id))
  }

  // ---- helpers ----

  private stamp(doc: Doc, ct: string, lwt: string): Doc {
    if (this.spec.stamps === false) return doc
    const ext = isPlainObject(doc.ext) ? doc.ext : {}
    return { ...doc, ext: { ...ext, ct, lwt } }
  }

  private extraValues(doc: Doc, hidden: Record<string, SqlValue>): SqlValue[] {
    const mirrored = this.columns.map(([, path]) => {
      const v = getPath(doc, path)
      return v === undefined ? null : typeof v === 'boolean' ? (v ? 1 : 0) : (v as SqlValue)
    })
    return [...mirrored, ...(this.spec.hidden ?? []).map((h) => hidden[h] ?? null)]
  }

  private hiddenOf(row: Row): Record<string, SqlValue> {
    const out: Record<string, SqlValue> = {}
    ;(this.spec.hidden ?? []).forEach((h, i) => (out[h] = row[2 + i] as SqlValue))
    return out
  }

  private journalObj(doc: Doc): Doc {
    return maskPaths(doc, this.spec.secrets ?? [])
  }

  /** Names the doc field behind a unique-index violation, so callers can report it. */
  private explainConstraint(err: unknown, id: string): unknown {
    if (!(err instanceof ConstraintError) || err.kind !== 'unique') return err
    const column = /\.(\w+)\s*$/.exec(err.message)?.[1]
    const path = column === 'id' ? this.idField : this.columns.find(([c]) => c === column)?.[1] ?? column ?? this.idField
    return new DuplicateError(path, column === 'id' ? id : undefined)
  }
}

/** A unique field already holds this value in the domain. */
export class DuplicateError extends Error {
  constructor(
    readonly field: string,
    readonly value?: string,
  ) {
    super(`${field} already exists`)
  }
}
