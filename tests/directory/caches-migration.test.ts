// Migration 0016 converts caches stored whole (member lists inside the documents) into edges: the
// caches read afterwards are the ones stored before, and the role holders are known.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { computeCaches } from '~/directory/caches'
import { groupsCaches, subordinationsCaches, usersCaches } from '~/directory/cache-collections'
import { openEmbeddedDb } from '~storage/db-embedded'
import { roleHolders } from '~storage/directory-edges'
import type { Doc } from '~storage/doc'
import { migrate } from '~storage/migrate'
import { migrations } from '~storage/migrations/index'
import { Repository } from '~storage/repository'

const dir = mkdtempSync(join(tmpdir(), 'platform-cache-migration-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('0016 turns stored member lists into edges and reads back the same caches', async () => {
  const db = openEmbeddedDb(join(dir, 'old.db'))
  const at = migrations.findIndex((m) => m.id === '0016_directory_edges')
  await migrate(db, migrations.slice(0, at))
  // company > sales > north; ann in company, bob in sales and north, cid in north
  const caches = computeCaches(
    [
      { id: 'ann', groups: ['company'], roles: ['boss', 'user'] },
      { id: 'bob', groups: ['sales', 'north'], roles: ['user'] },
      { id: 'cid', groups: ['north'], roles: [] },
      { id: 'dan', groups: [], roles: ['boss'] },
    ],
    [
      { id: 'company', parents: [], roles: ['staff'] },
      { id: 'sales', parents: ['company'], roles: [] },
      { id: 'north', parents: ['sales', 'company'], roles: ['seller'] },
    ],
  )
  const specs = [usersCaches.table, groupsCaches.table, subordinationsCaches.table]
  const docs = [caches.users, caches.groups, caches.subordinations]
  for (const domain of ['d1', 'd2'])
    await db.write(function* () {
      // as the caches were stored before: whole documents
      for (const [i, spec] of specs.entries())
        yield* new Repository(db, { ...spec, assembled: undefined }).putDerived(domain, docs[i]!)
    })
  await migrate(db)
  const all = { filter: null, order: [], offset: 0, limit: 100 }
  for (const domain of ['d1', 'd2'])
    for (const [i, spec] of specs.entries()) {
      const repo = new Repository(db, spec)
      const key = spec.idField ?? 'id'
      const want = [...docs[i]!].sort((a: Doc, b: Doc) => ((a[key] as string) < (b[key] as string) ? -1 : 1))
      expect(await repo.list(domain, { ...all, order: [{ field: key, desc: false }] })).toEqual(want)
      for (const doc of want) expect(await repo.get(domain, doc[key] as string)).toEqual(doc)
    }
  expect(await db.read(() => roleHolders('d1', 'boss'))).toEqual(['ann', 'dan'])
  expect(await db.read(() => roleHolders('d2', 'user'))).toEqual(['ann', 'bob'])
  await db.close()
})
