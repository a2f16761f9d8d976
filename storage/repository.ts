/**
 * The generic repository: list, get, lookup, create, update and remove for any table of the
 * standard shape (domain, id, <key columns>, doc, <detached columns>, ct, lwt, version). Every
 * statement is scoped by the domain it is given, and every mutation writes its journal record in
 * the same transaction. Its reads as transaction steps (every entity, counts) are in ./table-reads.ts.
 */
import type { Db, Row, SqlValue, TxStep } from './db'
import { ConstraintError, tx } from './db'
import { changedPaths, type Doc, getPath } from './doc'
import { JsonText } from './json-text'
import { appendJournal, type JournalEntry, type WriteContext } from './journal'
import { type ColumnRange, type ListScope, listWhere, pageSql } from './list-sql'
import type { ListQuery } from './query'
import { type TableSpec, TableLayout } from './table'
import { placeholders, TableReads } from './table-reads'
import { docOf, int, text } from './columns'

/** Rows one statement of a purge deletes: a few milliseconds of work. */
const PURGE_CHUNK = 500

export type { TableSpec } from './table'
export type { ColumnRange } from './list-sql'

/** Changes that only touch these never count as an update. */
const STAMP_PATHS = new Set(['ext.ct', 'ext.lwt'])

/** The texts of point reads' rows while the database keeps those rows (until the next write). */
const keptTexts = new WeakMap<Row, JsonText>()
/** `D`: the document type of the table (`TableSpec<D>`), which reads return. */
export class Repository<D extends Doc = Doc> extends TableReads<D> {
  private readonly sql: Record<'get' | 'insert' | 'update' | 'delete', string>
  /** The docs of a page's rows while the database keeps those rows (until the next write). */
  private readonly parsedPages = new WeakMap<Row[], D[]>()

  constructor(db: Db, spec: TableSpec<D>) {
    const layout = new TableLayout(spec)
    super(db, spec, layout)
    const t = spec.table
    const { written } = layout
    const alive = spec.expiring ? ' AND (expires IS NULL OR expires > ?)' : ''
    this.sql = {
      get: `SELECT ${layout.selected.join(', ')} FROM ${t} WHERE domain = ? AND id = ?${alive}`,
      insert: spec.bare
        ? `INSERT OR REPLACE INTO ${t} (domain, id, doc) VALUES (?, ?, ?)`
        : `INSERT INTO ${t} (domain, id, doc, ct, lwt, version${written.map((c) => `, ${c}`).join('')})
           VALUES (?, ?, ?, ?, ?, 1${written.map(() => ', ?').join('')})`,
      update: `UPDATE ${t} SET doc = ?, lwt = ?, version = version + 1${written.map((c) => `, ${c} = ?`).join('')}
               WHERE domain = ? AND id = ?`,
      delete: `DELETE FROM ${t} WHERE domain = ? AND id = ?`,
    }
  }

  /** Arguments of the point read: an expiring table also needs the time (what expired is gone). */
  private pointArgs(domain: string, id: string, now: number): SqlValue[] {
    return this.spec.expiring ? [domain, id, now] : [domain, id]
  }

  // ---- reads ----

  /** The stored JSON text of one entity: the hot point read passes it through unparsed. */
  async getText(domain: string, id: string, now = Date.now()): Promise<string | undefined> {
    return (await this.getJson(domain, id, now))?.text
  }

  /**
   * The same as JsonText, one per row the database keeps (until the next write): a point read
   * asked again sends the text made, and hashed for its ETag, the first time. Answered without a
   * promise when the row is kept in memory (the hot case).
   */
  getJson(domain: string, id: string, now = Date.now()): JsonText | undefined | Promise<JsonText | undefined> {
    // an expiring table's answer depends on the time: read it afresh; member lists (a group of
    // 100,000 users) are assembled in the reader thread
    if (this.layout.assembled.length || this.spec.expiring) return this.freshJson(domain, id, now)
    const args = [domain, id]
    const kept = this.db.keptRow?.(this.sql.get, args)
    if (kept !== undefined) return kept === null ? undefined : this.keptJson(kept)
    return this.db.getCached(this.sql.get, args).then((row) => row && this.keptJson(row))
  }

  private keptJson(row: Row): JsonText {
    let json = keptTexts.get(row)
    if (!json) {
      json = new JsonText(this.layout.docText(row))
      keptTexts.set(row, json)
    }
    return json
  }

  private async freshJson(domain: string, id: string, now: number): Promise<JsonText | undefined> {
    const row = this.layout.assembled.length
      ? (await this.db.allAside(this.sql.get, this.pointArgs(domain, id, now)))[0]
      : await this.db.get(this.sql.get, this.pointArgs(domain, id, now))
    return row && new JsonText(this.layout.docText(row))
  }

  async get(domain: string, id: string, now?: number): Promise<D | undefined> {
    const json = await this.getText(domain, id, now)
    return json === undefined ? undefined : JSON.parse(json)
  }

  /** The point read as a transaction step: the entity as the write about to change it finds it. */
  *current(domain: string, id: string, now = Date.now()): TxStep<D | undefined> {
    const row = yield* tx.get(this.sql.get, this.pointArgs(domain, id, now))
    return row && JSON.parse(this.layout.docText(row))
  }

  /** The hidden column values of one entity (e.g. a password hash). */
  async getHidden(domain: string, id: string): Promise<Record<string, SqlValue> | undefined> {
    const row = await this.db.get(this.sql.get, this.pointArgs(domain, id, Date.now()))
    return row && this.layout.hiddenOf(row)
  }

  /** Entities matching the query, without detached fields; `range` bounds a derived column, `now` hides what expired. */
  async list(domain: string, q: ListQuery, scope: ListScope = {}): Promise<D[]> {
    return (await this.listPage(domain, q, scope)).docs
  }

  /**
   * A page of a list and, when the page is full, the keyset cursor after its last row: the values
   * its order expressions had in SQL (then its id), for `after` on the next page. `readOnly`: the
   * caller only reads the docs (presents them), so a page answered from memory gives the same docs.
   * `aside`: a page that reads many rows is read in the reader thread (`db.allAside`).
   */
  async listPage(
    domain: string,
    q: ListQuery,
    scope: ListScope = {},
    readOnly = false,
    aside = false,
  ): Promise<{ docs: D[]; next: SqlValue[] | null }> {
    const args: SqlValue[] = []
    const where = listWhere(this.spec, this.layout, domain, q, scope, args)
    args.push(q.limit, q.offset)
    const sql = pageSql(this.spec, this.layout, where, q)
    // a page asked again before any write is answered from memory
    return this.pageOf(await (aside ? this.db.allAside(sql, args) : this.db.allCached(sql, args)), q.limit, readOnly)
  }

  /** The docs of the rows of a page statement (`pageSql`) and, when the page is full, the keyset cursor. */
  pageOf(rows: Row[], limit: number, readOnly = false): { docs: D[]; next: SqlValue[] | null } {
    const last = rows.at(-1)
    const next = last && rows.length === limit ? (last.slice(this.layout.listed.length) as SqlValue[]) : null
    let docs = readOnly ? this.parsedPages.get(rows) : undefined
    if (!docs) {
      docs = rows.map((r): D => JSON.parse(this.layout.listText(r)))
      if (readOnly) this.parsedPages.set(rows, docs)
    }
    return { docs, next }
  }

  /** How many entities the query's filter selects, whatever its offset and limit (X-Total-Count); `aside` as in `listPage`. */
  async countMatching(domain: string, q: ListQuery, scope: ListScope = {}, aside = false): Promise<number> {
    const args: SqlValue[] = []
    const where = listWhere(this.spec, this.layout, domain, { ...q, after: undefined }, scope, args)
    const sql = `SELECT count(*) FROM ${this.spec.table} WHERE ${where}`
    return (aside ? (await this.db.allAside(sql, args))[0] : await this.db.get(sql, args))![0] as number
  }

  /** Ids whose field equals one of `values` (a key may be stored as text or as a number). */
  async lookup(
    domain: string,
    fields: readonly string[],
    values: SqlValue[],
    now = Date.now(),
    range?: ColumnRange,
  ): Promise<string[]> {
    const cond = fields.map((f) => `${this.layout.resolveField(f)} IN (${placeholders(values.length)})`).join(' OR ')
    const alive = this.spec.expiring ? ' AND (expires IS NULL OR expires > ?)' : ''
    const within = range ? ` AND ${range.column} >= ? AND ${range.column} < ?` : ''
    const rows = await this.db.all(
      `SELECT id FROM ${this.spec.table} WHERE domain = ? AND (${cond})${alive}${within} ORDER BY id LIMIT 1000`,
      [
        domain,
        ...fields.flatMap(() => values),
        ...(this.spec.expiring ? [now] : []),
        ...(range ? [range.from, range.to] : []),
      ],
    )
    return rows.map((r) => text(r[0]))
  }

  /**
   * Entities whose field equals `value`, in one domain or (null) in every domain, with their hidden
   * values: finding an account by login, a domain by name, users by e-mail address.
   */
  async findBy(
    domain: string | null,
    field: string,
    value: SqlValue,
    limit = 1000,
  ): Promise<{ domain: string; doc: D; hidden: Record<string, SqlValue> }[]> {
    const scope = domain === null ? '' : 'domain = ? AND '
    const rows = await this.db.all(
      `SELECT domain, ${this.layout.selected.join(', ')} FROM ${this.spec.table}
       WHERE ${scope}${this.layout.resolveField(field)} = ? ORDER BY domain, id LIMIT ?`,
      domain === null ? [value, limit] : [domain, value, limit],
    )
    return rows.map((r) => {
      const row = r.slice(1)
      return {
        domain: text(r[0]),
        doc: JSON.parse(this.layout.docText(row)),
        hidden: this.layout.hiddenOf(row),
      }
    })
  }

  // ---- mutations: transaction steps ----

  *insert(w: WriteContext, input: Doc, hidden: Record<string, SqlValue> = {}): TxStep<Doc> {
    const doc = this.layout.stamp(input, w.now, w.now)
    const id = String(doc[this.layout.idField])
    const row = this.layout.rowValues(doc, hidden)
    const args = this.spec.bare ? [w.domain, id, row.doc] : [w.domain, id, row.doc, w.now, w.now, ...row.columns]
    try {
      yield* tx.run(this.sql.insert, args)
    } catch (err) {
      throw this.explainConstraint(err, id)
    }
    yield* this.journal(w, {
      cmdtype: 'create',
      objtype: this.spec.objtype,
      objid: id,
      obj: this.layout.journalObj(doc, hidden),
    })
    return this.layout.asRead(doc)
  }

  /**
   * Applies `change` to the stored entity: it returns the new doc and may set new hidden values
   * in the object it is given. An update that changes nothing writes nothing. Undefined when absent.
   */
  *update(
    w: WriteContext,
    id: string,
    change: (current: D, hidden: Record<string, SqlValue>) => Doc,
  ): TxStep<Doc | undefined> {
    const row = yield* tx.get(this.sql.get, this.pointArgs(w.domain, id, Date.parse(w.now)))
    if (!row) return undefined
    const before: D = JSON.parse(this.layout.docText(row))
    const oldHidden = this.layout.hiddenOf(row)
    const hidden = { ...oldHidden }
    const ct = getPath(before, 'ext.ct')
    const after = this.layout.stamp(change(structuredClone(before), hidden), typeof ct === 'string' ? ct : w.now, w.now)
    const changed = changedPaths(before, after, STAMP_PATHS)
    for (const h of this.layout.hidden) if (hidden[h] !== oldHidden[h]) changed.push(this.spec.hidden![h]!)
    if (changed.length === 0) return before
    const values = this.layout.rowValues(after, hidden)
    try {
      yield* tx.run(this.sql.update, [values.doc, w.now, ...values.columns, w.domain, id])
    } catch (err) {
      throw this.explainConstraint(err, id)
    }
    yield* this.journal(w, {
      cmdtype: 'update',
      objtype: this.spec.objtype,
      objid: id,
      fields: changed.join(','),
      obj: this.layout.journalObj(after, hidden),
      prev: this.layout.journalObj(before, oldHidden),
    })
    return this.layout.asRead(after)
  }

  /** Deletes one entity; returns it as it was, or undefined when absent. `check` may veto (throw) after reading it. */
  *remove(w: WriteContext, id: string, check?: (current: D) => void): TxStep<D | undefined> {
    const row = yield* tx.get(this.sql.get, this.pointArgs(w.domain, id, Date.parse(w.now)))
    if (!row) return undefined
    const before: D = JSON.parse(this.layout.docText(row))
    check?.(before)
    yield* tx.run(this.sql.delete, [w.domain, id])
    const obj = this.layout.journalObj(before, this.layout.hiddenOf(row))
    yield* this.journal(w, { cmdtype: 'delete', objtype: this.spec.objtype, objid: id, obj })
    return before
  }

  /** Deletes every entity of the domain (or, with `expiredAt`, those whose lifetime ended by then), journaling each. */
  *removeAll(w: WriteContext, expiredAt?: number, progress?: (done: number, total: number) => void): TxStep<number> {
    const due = expiredAt === undefined ? '' : ' AND expires IS NOT NULL AND expires <= ?'
    const rows = yield* tx.all(
      `SELECT id, doc FROM ${this.spec.table} WHERE domain = ?${due} ORDER BY id`,
      expiredAt === undefined ? [w.domain] : [w.domain, expiredAt],
    )
    let done = 0
    for (const [id, doc] of rows) {
      yield* tx.run(this.sql.delete, [w.domain, text(id)])
      const obj = this.layout.journalObj(docOf(doc), {})
      yield* this.journal(w, { cmdtype: 'delete', objtype: this.spec.objtype, objid: text(id), obj })
      progress?.(++done, rows.length)
    }
    return rows.length
  }

  /** Writes derived rows (a bare table's insert replaces its row) and removes the `gone` ids; not journaled. */
  *putDerived(domain: string, docs: readonly Doc[], gone: readonly string[] = []): TxStep<void> {
    if (!this.spec.bare) throw new Error(`${this.spec.table} is not derived: write it entity by entity`)
    for (const id of gone) yield* tx.run(this.sql.delete, [domain, id])
    for (const doc of docs)
      yield* this.insert({ domain, now: '', actor: { id: '', name: '' }, initiator: 'system', requestId: '' }, doc)
  }

  /**
   * Removes every row of a domain without journaling: the domain itself, journal included, is going.
   * In chunks, so that long work (a domain deletion) can pause between them.
   */
  *purge(domain: string): TxStep<void> {
    const t = this.spec.table
    const sql = `DELETE FROM ${t} WHERE rowid IN (SELECT rowid FROM ${t} WHERE domain = ? LIMIT ${PURGE_CHUNK})`
    while ((yield* tx.run(sql, [domain])).changes === PURGE_CHUNK);
  }

  /**
   * Rewrites every row, 500 at a time (long work pauses between chunks): its doc changed by `edit`
   * (properties a class dropped) and its derived columns computed again. Not journaled: the change
   * of the class it follows is.
   */
  *rewriteAll(edit: (doc: Doc) => Doc = (doc) => doc): TxStep<void> {
    const t = this.spec.table
    const set = ['doc = ?', ...this.layout.derived.map(([c]) => `${c} = ?`)].join(', ')
    for (let after = 0; ; ) {
      const rows = yield* tx.all(`SELECT rowid, doc FROM ${t} WHERE rowid > ? ORDER BY rowid LIMIT 500`, [after])
      if (rows.length === 0) return
      for (const [rowid, json] of rows) {
        const doc = edit(docOf(json))
        const derived = this.layout.derived.map(([, compute]) => compute(doc))
        yield* tx.run(`UPDATE ${t} SET ${set} WHERE rowid = ?`, [JSON.stringify(doc), ...derived, int(rowid)])
      }
      after = int(rows.at(-1)![0])
    }
  }

  /** Every set value of one hidden column, in every domain: what a change of how it is kept must rewrite. */
  async hiddenValues(column: string): Promise<{ domain: string; id: string; value: SqlValue }[]> {
    this.requireHidden(column)
    const rows = await this.db.all(
      `SELECT domain, id, ${column} FROM ${this.spec.table} WHERE ${column} IS NOT NULL ORDER BY domain, id`,
    )
    return rows.map(([domain, id, value]) => ({ domain: text(domain), id: text(id), value: value as SqlValue }))
  }

  /**
   * Replaces a hidden value by the same secret kept another way (sealed with a key): not a change of
   * the entity, so neither journaled nor a new version. Only while it still holds `expected` (a write
   * meanwhile wins); whether it did.
   */
  *rekeyHidden(domain: string, id: string, column: string, expected: SqlValue, value: SqlValue): TxStep<boolean> {
    this.requireHidden(column)
    const sql = `UPDATE ${this.spec.table} SET ${column} = ? WHERE domain = ? AND id = ? AND ${column} = ?`
    return (yield* tx.run(sql, [value, domain, id, expected])).changes === 1
  }

  // ---- helpers ----

  private requireHidden(column: string): void {
    if (!this.layout.hidden.includes(column)) throw new Error(`${this.spec.table} has no hidden column ${column}`)
  }

  private *journal(w: WriteContext, entry: JournalEntry): TxStep<void> {
    if (this.spec.journal !== false) yield* appendJournal(w, entry)
  }

  /** Names the doc field behind a unique-index violation, so callers can report it. */
  private explainConstraint(err: unknown, id: string): unknown {
    if (!(err instanceof ConstraintError) || err.kind !== 'unique') return err
    const column = /\.(\w+)\s*$/.exec(err.message)?.[1]
    return new DuplicateError(this.layout.fieldOfColumn(column), column === 'id' ? id : undefined)
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
