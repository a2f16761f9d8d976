/**
 * Seeds a model class with many records straight through the repository (the service must not be
 * running: it holds its database file exclusively). Used by bench/run.ts for the 100k-record list.
 * Usage: bun bench/seed-model.ts <DATA_DIR> <classname> <count>
 */
import { join } from 'node:path'
import { buildModels } from '~/model/registry'
import { openEmbeddedDb } from '~storage/db-embedded'
import { findMasterDomain } from '~storage/directory'
import { classDocs } from '~storage/model-tables'
import { Repository } from '~storage/repository'

const [dataDir, classname, countArg] = process.argv.slice(2)
const count = Number(countArg)
const db = openEmbeddedDb(join(dataDir!, 'platform.db'))
const master = (await findMasterDomain(db))!
const model = buildModels(master.id, await classDocs(db, master.id)).get(classname!)!
const repo = new Repository(db, model.table!)
const w = {
  domain: master.id,
  now: new Date().toISOString(),
  actor: { id: '00000000-0000-0000-0000-000000000000', name: 'bench', type: 'system' as const },
  requestId: 'bench-seed',
}
const started = performance.now()
const BATCH = 5000
for (let done = 0; done < count; done += BATCH) {
  await db.write(function* () {
    for (let i = done; i < Math.min(count, done + BATCH); i++) {
      yield* repo.insert(w, {
        id: Bun.randomUUIDv7(),
        name: `record ${i}`,
        kind: `k${i % 20}`,
        n: (i * 7919) % 100_000,
        at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
      })
    }
  })
}
await db.close()
console.log(`seeded ${count} records in ${Math.round(performance.now() - started)} ms`)
