// Migration 0017 masks the channel tokens the journal recorded before it masked them: a recorded
// token_local is the channel's live token.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openEmbeddedDb } from '~storage/db-embedded'
import { migrate } from '~storage/migrate'
import { migrations } from '~storage/migrations/index'

const dir = mkdtempSync(join(tmpdir(), 'platform-migration-0017-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('0017 masks the tokens of journaled channels, and nothing else', async () => {
  const db = openEmbeddedDb(join(dir, 'old.db'))
  await migrate(
    db,
    migrations.slice(
      0,
      migrations.findIndex((m) => m.id === '0017_journal_channel_tokens'),
    ),
  )
  const channel = { id: 'c1', code: 'adm', token_local: 'cf749b20', token_remote: '', url: 'http://x' }
  const rows: [string, object, object | null][] = [
    ['integration_point', channel, null],
    ['integration_point', { ...channel, url: 'http://y' }, channel],
    ['extobj', { id: 'e1', token_local: 'kept', value: 1 }, null],
  ]
  for (const [objtype, obj, prev] of rows)
    await db.run(
      `INSERT INTO journal (domain, dtutc, cmdtype, objtype, objid, modifierid, modifiername, obj, prev)
       VALUES ('d1', '2026-01-01T00:00:00.000Z', 'create', ?, 'x', 'm', 'm', ?, ?)`,
      [objtype, JSON.stringify(obj), prev === null ? null : JSON.stringify(prev)],
    )
  await migrate(db)
  const read = (await db.all('SELECT obj, prev FROM journal ORDER BY seq')).map(([obj, prev]) => [
    JSON.parse(obj as string),
    prev === null ? null : JSON.parse(prev as string),
  ])
  const masked = { ...channel, token_local: '***', token_remote: '***' }
  expect(read).toEqual([
    [masked, null],
    [{ ...masked, url: 'http://y' }, masked],
    [{ id: 'e1', token_local: 'kept', value: 1 }, null],
  ])
  await db.close()
})
