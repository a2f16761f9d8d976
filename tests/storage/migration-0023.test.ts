// Migration 0023 keeps the meaning of stored values whose meaning changed: border rule patterns
// (matched against the whole value before, found anywhere now) and service tasks' `all` and
// `firstsite` with a sites list (which those modes now ignore).
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compilePattern } from '~/master/border-match'
import { placement, type TaskSites } from '~/scripts/task-schedule'
import { openEmbeddedDb } from '~storage/db-embedded'
import { migrate } from '~storage/migrate'
import { migrations } from '~storage/migrations/index'

const dir = mkdtempSync(join(tmpdir(), 'platform-migration-0023-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('0023 anchors stored border patterns and moves tasks listing sites to the listed modes', async () => {
  const db = openEmbeddedDb(join(dir, 'old.db'))
  await migrate(
    db,
    migrations.slice(
      0,
      migrations.findIndex((m) => m.id === '0023_border_patterns_task_sites'),
    ),
  )
  const insert = (table: string, id: string, doc: object) =>
    db.run(
      `INSERT INTO ${table} (domain, id, doc, ct, lwt, version) VALUES ('d1', ?, ?, '2026-01-01', '2026-01-01', 1)`,
      [id, JSON.stringify(doc)],
    )
  const rule = { action: 'allow', remoteipmask: '', domain: '', username: '', useragent: '' }
  await insert('borderrules', 'r1', { ...rule, username: '100' })
  await insert('borderrules', 'r2', { ...rule, domain: 'docs[.]rootdomain[.]ru', useragent: 'a|b' })
  await insert('borderrules', 'r3', { ...rule, remoteipmask: '10.0.0.0/8' })
  const tasks: [string, TaskSites][] = [
    ['t1', { sitemode: 'all', sites: 's2,s3' }],
    ['t2', { sitemode: 'firstsite', sites: 's3,s2' }],
    ['t3', { sitemode: 'all', sites: '' }],
    ['t4', { sitemode: 'firstsite', sites: '' }],
    ['t5', { sitemode: 'anylisted', sites: 's1' }],
  ]
  for (const [id, t] of tasks) await insert('svctasks', id, { code: id, ...t })
  await migrate(db)
  const docs = async (table: string) =>
    Object.fromEntries(
      (await db.all(`SELECT id, doc, version FROM ${table} ORDER BY id`)).map(([id, doc, version]) => [
        id as string,
        { ...JSON.parse(doc as string), version },
      ]),
    )
  const rules = await docs('borderrules')
  expect(rules).toEqual({
    r1: { ...rule, username: '^(?:100)$', version: 2 },
    r2: { ...rule, domain: '^(?:docs[.]rootdomain[.]ru)$', useragent: '^(?:a|b)$', version: 3 },
    r3: { ...rule, remoteipmask: '10.0.0.0/8', version: 1 },
  })
  // matched anywhere, as now, each matches what it matched against the whole value before
  const matches = (p: string, v: string) => compilePattern(p)?.test(v)
  expect(['100', '1001', '2100'].map((v) => matches(rules.r1.username, v))).toEqual([true, false, false])
  expect(['docs.rootdomain.ru', 'www.docs.rootdomain.ru'].map((v) => matches(rules.r2.domain, v))).toEqual([
    true,
    false,
  ])
  expect(['a', 'b', 'ab', 'xa'].map((v) => matches(rules.r2.useragent, v))).toEqual([true, true, false, false])

  const migrated = await docs('svctasks')
  const modes = Object.fromEntries(Object.entries(migrated).map(([id, t]) => [id, [t.sitemode, t.sites, t.version]]))
  expect(modes).toEqual({
    t1: ['alllisted', 's2,s3', 2],
    t2: ['anylisted', 's3,s2', 2],
    t3: ['all', '', 1],
    t4: ['firstsite', '', 1],
    t5: ['anylisted', 's1', 1],
  })
  // before: `all` ran on each listed site that has a node, `firstsite` once on one of them
  const available = ['s1', 's2', 's3']
  expect(placement(migrated.t1, available)).toEqual({ sites: ['s2', 's3'], once: false })
  expect(placement(migrated.t2, ['s1', 's2'])).toEqual({ sites: ['s2'], once: true })
  expect(placement(migrated.t2, available)).toEqual({ sites: ['s3', 's2'], once: true })
  await db.close()
})
