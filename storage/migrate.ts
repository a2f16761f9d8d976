/** Applies pending migrations, each in its own write transaction, and records them. */
import type { Db } from './db'
import { tx } from './db'
import { migrations as all } from './migrations/index'

/** Returns the ids this call applied (none when another process got there first). */
export async function migrate(db: Db, migrations = all): Promise<string[]> {
  await db.run('CREATE TABLE IF NOT EXISTS migrations (id TEXT PRIMARY KEY, applied TEXT NOT NULL)')
  const applied: string[] = []
  for (const m of migrations) {
    const done = await db.write(function* () {
      if (yield* tx.get('SELECT 1 FROM migrations WHERE id = ?', [m.id])) return false
      yield* tx.exec(m.sql)
      yield* tx.run('INSERT INTO migrations (id, applied) VALUES (?, ?)', [m.id, new Date().toISOString()])
      return true
    })
    if (done) applied.push(m.id)
  }
  return applied
}
