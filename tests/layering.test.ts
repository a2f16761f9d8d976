// Imports go routes -> src -> storage, never back; route files hold no SQL.
import { expect, test } from 'bun:test'
import { Glob } from 'bun'
import { join } from 'node:path'

const root = join(import.meta.dir, '..')
const files = (dir: string) =>
  [...new Glob('**/*.ts').scanSync(join(root, dir))].map((f) => [f, join(root, dir, f)] as const)
const imports = async (path: string) =>
  [...(await Bun.file(path).text()).matchAll(/from ['"]([^'"]+)['"]/g)].map((m) => m[1]!)

test('storage/ imports nothing from src/ or routes/', async () => {
  for (const [name, path] of files('storage')) {
    for (const spec of await imports(path)) expect(`${name}: ${spec}`).not.toMatch(/: (~\/|(\.\.\/)+(src|routes)\/)/)
  }
})

test('src/ imports nothing from routes/', async () => {
  for (const [name, path] of files('src')) {
    for (const spec of await imports(path)) expect(`${name}: ${spec}`).not.toMatch(/: (\.\.\/)+routes\//)
  }
})

test('route files import only from src/ (no storage, no SQL)', async () => {
  for (const [name, path] of files('routes')) {
    if (name.startsWith('_')) continue
    for (const spec of await imports(path)) expect(`${name}: ${spec}`).toMatch(/: ~\//)
    expect(await Bun.file(path).text()).not.toMatch(/\b(select|insert into|delete from|update \w+ set)\b/i)
  }
})
