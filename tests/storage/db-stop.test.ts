// A stop of the service ends a long write (db.stopLong): the one running ends before its next
// statement (embedded: at its next pause), rolled back; later ones are refused; other writes go on.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Db, Stopping, tx } from '~storage/db'
import { openEmbeddedDb } from '~storage/db-embedded'
import { openRemoteDb } from '~storage/db-remote'

const dir = mkdtempSync(join(tmpdir(), 'platform-db-stop-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test.each([
  ['embedded', (f: string): Db => openEmbeddedDb(f)],
  ['remote (file:)', (f: string): Db => openRemoteDb(`file:${f}`)],
] as const)(
  '%s: the long write running ends rolled back, later ones are refused, other writes go on',
  async (_, open) => {
    const db = open(join(dir, `${crypto.randomUUID()}.db`))
    await db.run('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)')
    const reason = new Stopping()
    let asked: Promise<unknown> | undefined
    let cleanedUp = false
    let ran = 0
    const long = db.writeLong(function* () {
      try {
        // bounded, so a stop that is not heard fails the test instead of hanging it
        for (ran = 0; ran < 200_000; ran++) {
          if (ran === 500) {
            asked = db.write(() => tx.run('INSERT INTO t VALUES (?, ?)', ['asked meanwhile', 1]))
            db.stopLong!(reason)
          }
          yield* tx.run('INSERT INTO t VALUES (?, ?)', [`long ${ran}`, ran])
        }
      } finally {
        cleanedUp = true
      }
    })
    await expect(long).rejects.toBe(reason)
    expect(ran).toBeLessThan(200_000)
    expect(cleanedUp).toBe(true)
    await asked
    expect(await db.all('SELECT k FROM t')).toEqual([['asked meanwhile']])
    await expect(db.writeLong(() => tx.run('INSERT INTO t VALUES (?, ?)', ['later', 2]))).rejects.toBe(reason)
    await db.write(() => tx.run('INSERT INTO t VALUES (?, ?)', ['short', 3]))
    expect(await db.get('SELECT count(*) FROM t')).toEqual([2])
    await db.close()
  },
  30_000,
)
