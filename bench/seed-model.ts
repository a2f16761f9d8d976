/**
 * Seeds a model class with many records through the service's write path (the service must not be
 * running: it holds its database file exclusively). Used by bench/run.ts for the 100k-record list.
 * Usage: bun bench/seed-model.ts <DATA_DIR> <classname> <count>
 */
import { join } from 'node:path'
import { systemClock } from '~/clock'
import { loadConfig } from '~/config'
import { systemCtx } from '~/context'
import { compose } from '~/compose'
import { findMasterDomain } from '~/directory/domains'
import { commit } from '~/entities/unit'
import { createLogger } from '~/log'
import { openEmbeddedDb } from '~storage/db-embedded'
import { createMemoryKv } from '~storage/kv/memory'
import { Repository } from '~storage/repository'
import { sealedSecretCount } from '~/integration/channels'
import { openSecretBox } from '~/ops/secrets-key'

const [dataDir, classname, countArg] = process.argv.slice(2)
const count = Number(countArg)
const db = openEmbeddedDb(join(dataDir!, 'platform.db'))
const config = loadConfig({ DATA_DIR: dataDir })
const log = createLogger('error')
// the key the service made at its first start (this seeds no channel, but the deps carry it)
const secrets = await openSecretBox(config, db, log, () =>
  sealedSecretCount({ db, repo: (t) => new Repository(db, t) }),
)
const { deps } = compose({ config, db, kv: createMemoryKv(), clock: systemClock, log, routes: [], secrets })
const master = (await findMasterDomain(deps))!
const model = (await deps.model.classes(master.id)).get(classname!)!
const repo = deps.repo(model.table!)
const ctx = systemCtx(deps, master.id, 'bench-seed')
const started = performance.now()
const BATCH = 5000
for (let done = 0; done < count; done += BATCH) {
  await commit(ctx, function* (u) {
    for (let i = done; i < Math.min(count, done + BATCH); i++) {
      yield* repo.insert(u.w, {
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
