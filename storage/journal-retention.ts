/**
 * Journal retention: the oldest records go in small batches (each its own short write transaction,
 * so writers wait a moment at most), by age across the journal and by count per domain. A record
 * the event pump has not yet published (after the lowest journal cursor) is never removed. Each
 * domain's horizon — the newest record removed — is kept, so readers can be told what is gone.
 */
import type { Db, SqlValue, TxStep } from './db'
import { tx } from './db'
import { int, text } from './columns'

export interface Horizon {
  seq: number
  dtutc: string
}

/** Records the pump has published: the lowest cursor (or everything, when no consumer exists yet). */
function* publishedUpTo(): TxStep<number> {
  const row = yield* tx.get('SELECT MIN(seq) FROM journal_cursors')
  return (row?.[0] as number | null) ?? Number.MAX_SAFE_INTEGER
}

/** Deletes the given records and moves their domains' horizons; answers how many went. */
function* removeRecords(where: string, args: SqlValue[]): TxStep<number> {
  const gone = yield* tx.all(`DELETE FROM journal WHERE seq IN (${where}) RETURNING domain, seq, dtutc`, args)
  const newest = new Map<string, Horizon>()
  for (const [domain, seq, dtutc] of gone) {
    const had = newest.get(text(domain))
    if (!had || int(seq) > had.seq) newest.set(text(domain), { seq: int(seq), dtutc: text(dtutc) })
  }
  for (const [domain, h] of newest)
    yield* tx.run(
      `INSERT INTO journal_horizons (domain, seq, dtutc) VALUES (?, ?, ?)
       ON CONFLICT (domain) DO UPDATE SET seq = MAX(seq, excluded.seq), dtutc = MAX(dtutc, excluded.dtutc)`,
      [domain, h.seq, h.dtutc],
    )
  return gone.length
}

/**
 * One batch of records older than `cutoff` (ISO time). The journal grows in time order, so the oldest
 * are at its start: the batch looks at the first `batch` records only, whatever the journal's size.
 */
export function sweepOlderThan(db: Db, cutoff: string, batch: number): Promise<number> {
  return db.write(function* () {
    const safe = yield* publishedUpTo()
    return yield* removeRecords(
      'SELECT seq FROM (SELECT seq, dtutc FROM journal ORDER BY seq LIMIT ?) WHERE dtutc < ? AND seq <= ?',
      [batch, cutoff, safe],
    )
  })
}

/** One batch of a domain's records beyond its newest `keep` (found through the domain's seq index). */
export function sweepBeyondCount(db: Db, domain: string, keep: number, batch: number): Promise<number> {
  return db.write(function* () {
    const boundary = yield* tx.get('SELECT seq FROM journal WHERE domain = ? ORDER BY seq DESC LIMIT 1 OFFSET ?', [
      domain,
      keep,
    ])
    if (!boundary) return 0
    const upTo = Math.min(int(boundary[0]), yield* publishedUpTo())
    return yield* removeRecords('SELECT seq FROM journal WHERE domain = ? AND seq <= ? ORDER BY seq LIMIT ?', [
      domain,
      upTo,
      batch,
    ])
  })
}

/** Every domain's id, for the count sweep. */
export async function domainIds(db: Db): Promise<string[]> {
  return (await db.all('SELECT id FROM domains')).map((r) => text(r[0]))
}

/** The domain's horizon: the newest record retention removed, or null when nothing was. */
export async function journalHorizon(db: Db, domain: string): Promise<Horizon | null> {
  const row = await db.get('SELECT seq, dtutc FROM journal_horizons WHERE domain = ?', [domain])
  return row ? { seq: int(row[0]), dtutc: text(row[1]) } : null
}
