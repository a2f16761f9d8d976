/**
 * The tables of model classes: one per class, of the standard shape plus `pdate` (the partition
 * date of history and transactionlog classes) and `expires` (ms since the epoch, for records with
 * a lifetime). Created, migrated and dropped inside the transaction that changes the class; their
 * rows are read and written through the repository like any other table.
 */
import type { Db, TxStep } from './db'
import { tx } from './db'
import type { Doc } from './doc'
import { jsonField } from './query'
import { docOf, int, text } from './columns'

/** The table of a class: both ids in hex, so names are unique and safe to splice into SQL. */
export function recordTable(domain: string, classId: string): string {
  return `rec_${domain.replace(/-/g, '')}_${classId.replace(/-/g, '')}`
}

export function* createRecordTable(table: string): TxStep<void> {
  yield* tx.exec(`CREATE TABLE IF NOT EXISTS ${table} (
    domain TEXT NOT NULL, id TEXT NOT NULL, doc TEXT NOT NULL, ct TEXT NOT NULL, lwt TEXT NOT NULL,
    version INTEGER NOT NULL, pdate TEXT, expires INTEGER, PRIMARY KEY (domain, id));
  CREATE INDEX IF NOT EXISTS ${table}_pdate ON ${table} (domain, pdate, id);
  CREATE INDEX IF NOT EXISTS ${table}_expires ON ${table} (expires) WHERE expires IS NOT NULL;`)
}

export function* dropRecordTable(table: string): TxStep<void> {
  yield* tx.exec(`DROP TABLE IF EXISTS ${table}`)
}

/**
 * The indexes of a class table: one per lookup property, and one per composite the class asks for
 * (properties in order, then the id), so filtered and ordered lists read only what they return.
 * Indexes no longer asked for are dropped.
 */
export function* indexProperties(
  table: string,
  lookups: readonly string[],
  composites: readonly (readonly string[])[] = [],
): TxStep<void> {
  const wanted = new Map<string, readonly string[]>()
  for (const p of lookups) wanted.set(`${table}_p_${p}`, [p])
  // hashed: joined names could collide (["a_b"] and ["a", "b"])
  for (const c of composites)
    wanted.set(`${table}_i_${new Bun.CryptoHasher('sha1').update(JSON.stringify(c)).digest('hex').slice(0, 16)}`, c)
  // GLOB, not LIKE: LIKE's `_` matches any character, so `<table>_p_%` also matched `<table>_pdate`
  const rows = yield* tx.all(
    `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND (name GLOB ? OR name GLOB ?)`,
    [table, `${table}_p_*`, `${table}_i_*`],
  )
  for (const [name] of rows) if (!wanted.has(text(name))) yield* tx.exec(`DROP INDEX IF EXISTS ${String(name)}`)
  for (const [name, props] of wanted) {
    yield* tx.exec(
      `CREATE INDEX IF NOT EXISTS ${name} ON ${table} (domain, ${props.map((p) => jsonField('doc', p)).join(', ')}, id)`,
    )
  }
}

/**
 * The records of a domain in id order, `limit` at a time after `after` (the first page with ''): a
 * migration reads a large table in chunks, so no one statement holds the process for long.
 */
export function* recordsAfter(table: string, domain: string, after: string, limit: number): TxStep<Doc[]> {
  const rows = yield* tx.all(`SELECT doc FROM ${table} WHERE domain = ? AND id > ? ORDER BY id LIMIT ?`, [
    domain,
    after,
    limit,
  ])
  return rows.map((r) => docOf(r[0]))
}

/** Records without a partition date (a history class needs one in every record). */
export function* countUndated(table: string, domain: string): TxStep<number> {
  return int((yield* tx.get(`SELECT count(*) FROM ${table} WHERE domain = ? AND pdate IS NULL`, [domain]))![0])
}

/** Record tables of a domain (for deleting the domain). */
export function* recordTablesOf(domain: string): TxStep<string[]> {
  const rows = yield* tx.all(`SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB ?`, [
    `rec_${domain.replace(/-/g, '')}_*`,
  ])
  return rows.map((r) => text(r[0]))
}

/**
 * The partitions of a class table that hold live records: the first `length` characters of their
 * partition date (10 a day, 7 a month, 4 a year), newest first, with how many records each holds.
 */
export async function partitionsOf(
  db: Db,
  table: string,
  domain: string,
  length: number,
  now: number,
): Promise<{ partition: string; records: number }[]> {
  const rows = await db.all(
    `SELECT substr(pdate, 1, ?) AS p, count(*) FROM ${table}
     WHERE domain = ? AND pdate IS NOT NULL AND (expires IS NULL OR expires > ?) GROUP BY p ORDER BY p DESC`,
    [length, domain, now],
  )
  return rows.map(([partition, records]) => ({ partition: text(partition), records: int(records) }))
}
