// The entity registry is the one list of collections: what the documentation tells readers must follow it.
import { expect, test } from 'bun:test'
import { journalObjtypes } from '~/entities/registry'

test('docs/api/journal.md lists every object type the journal records', async () => {
  const doc = await Bun.file(`${import.meta.dir}/../docs/api/journal.md`).text()
  const line = doc.split('\n- ').find((item) => item.startsWith('The journal (`/rest/v1/journal/changes`)'))!
  const listed = new Set([...line.matchAll(/`([a-z_]+(?:\/<classname>)?)`/g)].map((m) => m[1]))
  for (const objtype of journalObjtypes()) expect(listed.has(objtype) ? objtype : `missing: ${objtype}`).toBe(objtype)
  expect(listed.has('model/<classname>')).toBe(true)
})
