// The embedded driver keeps what it acknowledged when the process dies right after (SIGKILL).
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openEmbeddedDb } from '~storage/db-embedded'

const dir = mkdtempSync(join(tmpdir(), 'platform-db-crash-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('the embedded driver keeps acknowledged writes across a crash of the process', async () => {
  const file = join(dir, 'crash.db')
  const script = `
    import { openEmbeddedDb } from '${join(import.meta.dir, '../../storage/db-embedded.ts')}'
    const db = openEmbeddedDb('${file}')
    await db.run('CREATE TABLE t (k TEXT)')
    await db.run("INSERT INTO t VALUES ('acknowledged')")
    await Promise.all([1, 2, 3].map((n) => db.write(function* () { yield { kind: 'run', sql: 'INSERT INTO t VALUES (?)', args: ['group ' + n] } })))
    process.kill(process.pid, 'SIGKILL')`
  const proc = Bun.spawn([process.execPath, '-e', script], { stdout: 'ignore', stderr: 'ignore' })
  expect(await proc.exited).not.toBe(0)
  const db = openEmbeddedDb(file)
  expect(await db.all('SELECT k FROM t')).toEqual([['acknowledged'], ['group 1'], ['group 2'], ['group 3']])
  await db.close()
})
