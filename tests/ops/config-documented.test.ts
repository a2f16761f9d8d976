// Every configuration variable the service reads is in the configuration table of docs/operations.md.
import { expect, test } from 'bun:test'
import { EnvSchema } from '~/config'

test('docs/operations.md documents every environment variable', async () => {
  const doc = await Bun.file(`${import.meta.dir}/../../docs/operations.md`).text()
  const rows = doc.split('\n').filter((l) => l.startsWith('| `'))
  for (const name of Object.keys(EnvSchema.entries)) {
    const row = rows.find((l) => l.split(' | ')[0]?.includes(`\`${name}\``))
    expect(row ? name : `missing: ${name}`).toBe(name)
  }
})
