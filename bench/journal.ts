/**
 * `bun bench/journal.ts [rows]`: journal queries over a large journal (default 10,000,000 rows over
 * 100 domains): p50 and p99 of a search by object and of a search by time, as the journal route runs
 * them. The rows are seeded straight into a temp database file, in large transactions.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openEmbeddedDb } from '~storage/db-embedded'
import { searchJournal } from '~storage/journal'
import { migrate } from '~storage/migrate'
import { percentile } from './service-process'

const ROWS = Number(process.argv[2] ?? 10_000_000)
const DOMAINS = 100
const OBJECTS_PER_DOMAIN = 10_000
const dir = mkdtempSync(join(tmpdir(), 'platform-bench-journal-'))
try {
  const db = openEmbeddedDb(join(dir, 'journal.db'))
  await migrate(db)
  const domain = (d: number) => `00000000-0000-7000-8000-${String(d).padStart(12, '0')}`
  const object = (o: number) => `01000000-0000-7000-8000-${String(o).padStart(12, '0')}`
  const start = Date.parse('2026-01-01T00:00:00.000Z')
  const seeded = performance.now()
  const BATCH = 50_000
  for (let at = 0; at < ROWS; at += BATCH) {
    await db.write(function* () {
      for (let i = at; i < Math.min(ROWS, at + BATCH); i++)
        yield {
          kind: 'run' as const,
          sql: `INSERT INTO journal (domain, dtutc, cmdtype, objtype, objid, modifierid, modifiername, obj)
                VALUES (?, ?, 'update', 'extobj', ?, 'u', 'user', '{"type":"t"}')`,
          args: [domain(i % DOMAINS), new Date(start + i * 1000).toISOString(), object(i % OBJECTS_PER_DOMAIN)],
        }
    })
  }
  console.log(`seeded ${ROWS} journal rows in ${((performance.now() - seeded) / 1000).toFixed(1)} s`)
  const list = { filter: null, order: [], offset: 0, limit: 100 }
  const measure = async (name: string, search: (i: number) => Parameters<typeof searchJournal>[2]) => {
    const times: number[] = []
    let found = 0
    for (let i = 0; i < 1000; i++) {
      const t0 = performance.now()
      found += (await searchJournal(db, domain(i % DOMAINS), search(i), list)).length
      times.push(performance.now() - t0)
    }
    console.log(`${name}: ${(found / 1000).toFixed(1)} records per query`)
    times.sort((a, b) => a - b)
    console.log(`${name}: p50 ${percentile(times, 0.5).toFixed(3)} ms, p99 ${percentile(times, 0.99).toFixed(3)} ms`)
  }
  // an object of the domain the query asks in: row i belongs to domain i % 100 and object i % 10,000
  await measure('by object (objtype + objid)', (i) => ({
    objtype: 'extobj',
    objid: object((((i * 7919) % 100) * DOMAINS + (i % DOMAINS)) % OBJECTS_PER_DOMAIN),
    offset: 0,
    limit: 1000,
  }))
  await measure('by time (one hour of a domain)', (i) => {
    const from = start + ((i * 104729) % ROWS) * 1000
    return {
      dtstart: new Date(from).toISOString(),
      dtstop: new Date(from + 3_600_000).toISOString(),
      offset: 0,
      limit: 1000,
    }
  })
  await db.close()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
