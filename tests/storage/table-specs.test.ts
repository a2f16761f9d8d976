// Table specs against the schema: every spec of the registry, and the spec of a model class, must
// describe the table that actually exists, and the columns it reads by key must be indexed.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { derivedCollections, entities, tables } from '~/entities/registry'
import type { Db } from '~storage/db'
import { openEmbeddedDb } from '~storage/db-embedded'
import { migrate } from '~storage/migrate'
import { recordTable } from '~storage/model-tables'
import { Repository } from '~storage/repository'
import { specColumns } from '~storage/table'
import { testService, type TestService } from '../helpers/service'

const dir = mkdtempSync(join(tmpdir(), 'platform-specs-'))
let db: Db
beforeAll(async () => {
  db = openEmbeddedDb(join(dir, 'specs.db'))
  await migrate(db)
})
afterAll(async () => {
  await db.close()
  rmSync(dir, { recursive: true, force: true })
})

const tableColumns = async (d: Db, table: string) =>
  (await d.all('SELECT name FROM pragma_table_info(?) ORDER BY cid', [table])).map((r) => r[0] as string)
const primaryKey = async (d: Db, table: string) =>
  (await d.all('SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk', [table])).map((r) => r[0] as string)
/** Each index of a table with its columns in order (expression columns show as null). */
async function indexesOf(
  d: Db,
  table: string,
): Promise<{ name: string; unique: boolean; columns: (string | null)[] }[]> {
  const list = await d.all('SELECT name, "unique" FROM pragma_index_list(?)', [table])
  return Promise.all(
    list.map(async ([name, unique]) => ({
      name: name as string,
      unique: unique === 1,
      columns: (await d.all('SELECT name FROM pragma_index_info(?) ORDER BY seqno', [name as string])).map(
        (r) => r[0] as string | null,
      ),
    })),
  )
}
/** Whether some index (the primary key included) leads with the column, alone or after `domain`. */
const leadsAnIndex = (indexes: { columns: (string | null)[] }[], column: string) =>
  indexes.some(
    ({ columns }) => columns[0] === column || (columns[0] === 'domain' && columns[1] === column && column !== 'domain'),
  )

describe('registry specs and migrations', () => {
  test('the registry names each table once', () => {
    const names = tables().map((s) => s.table)
    expect(names.length).toBeGreaterThan(10)
    expect(new Set(names).size).toBe(names.length)
  })

  for (const spec of tables()) {
    test(`${spec.table}: the migrated table has exactly the columns of its spec, keyed by (domain, id)`, async () => {
      expect((await tableColumns(db, spec.table)).sort()).toEqual(specColumns(spec).sort())
      expect(await primaryKey(db, spec.table)).toEqual(['domain', 'id'])
    })
  }

  test('every key column of a spec leads an index (alone or after domain)', async () => {
    const unindexed: string[] = []
    for (const spec of tables()) {
      const indexes = await indexesOf(db, spec.table)
      for (const column of Object.keys(spec.columns ?? {}))
        if (!leadsAnIndex(indexes, column)) unindexed.push(`${spec.table}.${column}`)
    }
    expect(unindexed).toEqual([]) // an unindexed key column makes LOOKUP and filters on it read the whole domain
  })

  test('every lookup field of a collection is its id or a key column of its spec', () => {
    const notColumns: string[] = []
    for (const c of [...entities(), ...derivedCollections()]) {
      const repo = new Repository(db, c.table)
      const keyColumns = new Set(['id', ...Object.keys(c.table.columns ?? {})])
      for (const field of c.lookupFields)
        if (!keyColumns.has(repo.layout.resolveField(field))) notColumns.push(`${c.table.table}: ${field}`)
    }
    expect(notColumns).toEqual([])
  })

  test('the key columns that name an entity are unique in its domain', async () => {
    // the documented (docs/api/) "unique in the domain" keys (a duplicate is a 409 only because of these indexes)
    const uniqueKeys: [table: string, columns: string[]][] = [
      ['domains', ['name']],
      ['users', ['domain', 'login']],
      ['groups', ['domain', 'code']],
      ['roles', ['domain', 'name']],
      ['sipusers', ['domain', 'login']],
      ['projects', ['domain', 'code']],
      ['svcscripts', ['domain', 'code']],
      ['classes', ['domain', 'classname']],
    ]
    for (const [table, columns] of uniqueKeys) {
      const unique = (await indexesOf(db, table)).filter((i) => i.unique).map((i) => i.columns)
      expect([table, unique]).toEqual([table, expect.arrayContaining([columns])])
    }
  })
})

describe('model class tables', () => {
  let t: TestService
  let domainId: string
  let token: string
  beforeAll(async () => {
    t = await testService()
    domainId = (await t.createDomain('specs.master')).id
    token = await t.adminIn('specs.master')
  })
  afterAll(() => t.close())

  /** Creates a class through the API and answers its runtime spec and its table's name. */
  async function classTable(body: Record<string, unknown>) {
    const res = await t.call('POST', '/rest/v1/design/classes', { token, body })
    expect(res.status).toBe(200)
    const model = (await t.deps.model.classes(domainId)).get(body.classname as string)!
    const table = recordTable(domainId, res.body.id)
    expect(model.table?.table).toBe(table)
    return { spec: model.table!, table }
  }

  test('a runtime class: the table has the columns of its spec, pdate and expires derived', async () => {
    const { spec, table } = await classTable({
      classname: 'specs/plain',
      properties: [{ name: 'n', data_type: 'long' }],
    })
    // a class that expires nothing reads without the time (answers can be kept until the next write)
    expect(spec.expiring).toBe(false)
    expect(Object.keys(spec.derived ?? {}).sort()).toEqual(['expires', 'pdate'])
    expect((await tableColumns(t.deps.db, table)).sort()).toEqual(specColumns(spec).sort())
    expect(await primaryKey(t.deps.db, table)).toEqual(['domain', 'id'])
  })

  test('a history class with an expiry: same columns; pdate and expires are indexed', async () => {
    const { spec, table } = await classTable({
      classname: 'specs/calls',
      storage_mode: 'history',
      properties: [
        { name: 'at', data_type: 'datetime', required: true },
        { name: 'ttl', data_type: 'long' },
        { name: 'kind', data_type: 'string' },
      ],
      opts: {
        partition_property: 'at',
        expires_mode: 'create',
        expires_ts_property: 'at',
        expires_ttl_property: 'ttl',
        lookup_properties: ['kind'],
      },
    })
    expect(spec.expiring).toBe(true)
    expect((await tableColumns(t.deps.db, table)).sort()).toEqual(specColumns(spec).sort())
    const indexes = await indexesOf(t.deps.db, table)
    expect(leadsAnIndex(indexes, 'pdate')).toBe(true)
    expect(leadsAnIndex(indexes, 'expires')).toBe(true)
    // a lookup property is indexed on its JSON value, after the domain
    expect(indexes.find((i) => i.name === `${table}_p_kind`)?.columns).toEqual(['domain', null, 'id'])
  })

  test('the derived columns are filled from the record on write', async () => {
    const { table } = await classTable({
      classname: 'specs/derived',
      storage_mode: 'history',
      properties: [
        { name: 'day', data_type: 'date', required: true },
        { name: 'at', data_type: 'datetime' },
        { name: 'ttl', data_type: 'long' },
      ],
      opts: {
        partition_property: 'day',
        expires_mode: 'create',
        expires_ts_property: 'at',
        expires_ttl_property: 'ttl',
      },
    })
    const at = new Date(t.clock.now()).toISOString()
    const res = await t.call('POST', '/rest/v1/model/specs/derived', {
      token,
      body: { day: '2026-03-04', at, ttl: 60 },
    })
    expect(res.status).toBe(200)
    expect(await t.deps.db.get(`SELECT pdate, expires FROM ${table} WHERE id = ?`, [res.body.id])).toEqual([
      '2026-03-04T00:00:00.000Z',
      Date.parse(at) + 60_000,
    ])
  })
})
