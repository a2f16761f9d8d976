/**
 * A table's reads as transaction steps (run on their own with `db.read`, or inside a write): every
 * entity of a domain, some by id, which values exist, counts. The repository (./repository.ts)
 * adds the point read, lists and the mutations.
 */
import type { Db, SqlValue, TxStep } from './db'
import { tx } from './db'
import type { Doc } from './doc'
import type { TableLayout, TableSpec } from './table'
import { int, text } from './columns'

export const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(',')

/** `D`: the spec's document type (the parsed doc of a row of this table is one: see `TableSpec`). */
export class TableReads<D extends Doc = Doc> {
  constructor(
    readonly db: Db,
    readonly spec: TableSpec<D>,
    readonly layout: TableLayout,
  ) {}

  /** Every entity of a domain, by id. */
  *all(domain: string): TxStep<D[]> {
    const rows = yield* tx.all(`SELECT doc FROM ${this.spec.table} WHERE domain = ? ORDER BY id`, [domain])
    return rows.map((r) => JSON.parse(text(r[0])))
  }

  /** The entities of a domain with these ids, by id. */
  *getMany(domain: string, ids: readonly string[]): TxStep<D[]> {
    if (ids.length === 0) return []
    const rows = yield* tx.all(
      `SELECT doc FROM ${this.spec.table} WHERE domain = ? AND id IN (${placeholders(ids.length)}) ORDER BY id`,
      [domain, ...ids],
    )
    return rows.map((r) => JSON.parse(text(r[0])))
  }

  /** Which of the given values a field holds in a domain (ids that exist, role names that exist). */
  *existing(domain: string, field: string, values: readonly string[]): TxStep<Set<string>> {
    if (values.length === 0) return new Set()
    const expr = this.layout.resolveField(field)
    const rows = yield* tx.all(
      `SELECT ${expr} FROM ${this.spec.table} WHERE domain = ? AND ${expr} IN (${placeholders(values.length)})`,
      [domain, ...values],
    )
    return new Set(rows.map((r) => text(r[0])))
  }

  /** Ids of the entities whose field equals the value (SIP accounts of a user). */
  *idsWhere(domain: string, field: string, value: SqlValue): TxStep<string[]> {
    const rows = yield* tx.all(
      `SELECT id FROM ${this.spec.table} WHERE domain = ? AND ${this.layout.resolveField(field)} = ? ORDER BY id`,
      [domain, value],
    )
    return rows.map((r) => text(r[0]))
  }

  /** Ids of the entities whose array field contains the value (users in a group, groups under a parent). */
  *idsContaining(domain: string, field: string, value: string): TxStep<string[]> {
    const rows = yield* tx.all(
      `SELECT id FROM ${this.spec.table} WHERE domain = ?
       AND EXISTS (SELECT 1 FROM json_each(doc, '$.${field}') WHERE value = ?) ORDER BY id`,
      [domain, value],
    )
    return rows.map((r) => text(r[0]))
  }

  /** The domains that hold an entity whose field equals the value (across every domain). */
  async domainsWhere(field: string, value: SqlValue): Promise<string[]> {
    const rows = await this.db.all(
      `SELECT DISTINCT domain FROM ${this.spec.table} WHERE ${this.layout.resolveField(field)} = ?`,
      [value],
    )
    return rows.map((r) => text(r[0]))
  }

  /** The number of entities in a domain. */
  *count(domain: string): TxStep<number> {
    return int((yield* tx.get(`SELECT count(*) FROM ${this.spec.table} WHERE domain = ?`, [domain]))![0])
  }

  /** The number of entities across the installation, optionally leaving out one domain's (licence limits). */
  *countAll(exceptDomain?: string): TxStep<number> {
    const [where, args] = exceptDomain === undefined ? ['', []] : [' WHERE domain <> ?', [exceptDomain]]
    return int((yield* tx.get(`SELECT count(*) FROM ${this.spec.table}${where}`, args))![0])
  }

  /** The number of entities across the installation whose field (a key column: no doc is read) equals the value. */
  *countAllWhere(field: string, value: SqlValue): TxStep<number> {
    const row = yield* tx.get(`SELECT count(*) FROM ${this.spec.table} WHERE ${this.layout.resolveField(field)} = ?`, [
      value,
    ])
    return int(row![0])
  }
}
