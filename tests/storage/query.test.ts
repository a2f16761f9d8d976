// Filter and order semantics, compiled to SQL and run on a real libSQL file.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FieldSet } from '~/query/fields'
import { parseListParams } from '~/query/list-query'
import { openEmbeddedDb } from '~storage/db-embedded'
import type { Db } from '~storage/db'
import type { Doc } from '~storage/doc'
import type { WriteContext } from '~storage/journal'
import { migrate } from '~storage/migrate'
import { Repository } from '~storage/repository'

// one write transaction per call, as the service's write path (src/entities/unit.ts) makes them
const create = (repo: Repository, w: WriteContext, doc: Doc) => repo.db.write(() => repo.insert(w, doc))

const dir = mkdtempSync(join(tmpdir(), 'platform-query-'))
let db: Db
let repo: Repository
const shape = {
  fields: new FieldSet(['id', 'code', 'name', 'n', 'flag', 'opts.title', 'ext.ct', 'ext.lwt']),
  output: new FieldSet(['id']),
  limits: { defaultLimit: 100, maxLimit: 1000 },
}

beforeAll(async () => {
  db = openEmbeddedDb(join(dir, 'q.db'))
  await migrate(db)
  repo = new Repository(db, { table: 'projects', objtype: 'project', columns: { code: 'code' } })
  const rows = [
    { id: 'a', code: 'Alpha', name: 'first', n: 1, flag: true, opts: { title: 'T1' } },
    { id: 'b', code: 'alpha', name: 'second', n: 2, flag: false },
    { id: 'c', code: 'beta', name: 'third', n: 3, flag: true, opts: { title: '100%' } },
    { id: 'd', code: 'gamma_x', name: 'fourth', n: 3 },
  ]
  for (const r of rows)
    await create(
      repo,
      {
        domain: 'd',
        now: '2026-01-01T00:00:00.000Z',
        actor: { id: 'x', name: 'x' },
        initiator: 'user',
        requestId: 'r',
      },
      r,
    )
  await create(
    repo,
    {
      domain: 'other',
      now: '2026-01-01T00:00:00.000Z',
      actor: { id: 'x', name: 'x' },
      initiator: 'user',
      requestId: 'r',
    },
    { id: 'z', code: 'Alpha', n: 1 },
  )
})
afterAll(async () => {
  await db.close()
  rmSync(dir, { recursive: true, force: true })
})

async function ids(params: Record<string, string>): Promise<string[]> {
  const { query } = parseListParams(params, shape)
  return (await repo.list('d', query)).map((d) => d.id as string)
}
const f = (expr: unknown) => ({ filter: JSON.stringify(expr) })
const prop = (name: string) => ['property', name]

describe('filter', () => {
  const cases: [string, unknown, string[]][] = [
    ['== on a column', ['==', prop('code'), 'alpha'], ['b']],
    ['== on a JSON field', ['==', prop('name'), 'third'], ['c']],
    ['== true matches JSON true', ['==', prop('flag'), true], ['a', 'c']],
    ['== false matches JSON false only', ['==', prop('flag'), false], ['b']],
    ['!= keeps rows where the field is missing', ['!=', prop('flag'), true], ['b', 'd']],
    ['== null means missing', ['==', prop('opts.title'), null], ['b', 'd']],
    ['isnull', ['isnull', prop('flag')], ['d']],
    ['numeric comparison', ['>=', prop('n'), 2], ['b', 'c', 'd']],
    ['literal on the left', ['<', 2, prop('n')], ['c', 'd']],
    ['in', ['in', prop('n'), [1, 3]], ['a', 'c', 'd']],
    ['empty in matches nothing', ['in', prop('n'), []], []],
    ['like is case-sensitive', ['like', prop('code'), 'al%'], ['b']],
    ['like _ matches one character', ['like', prop('code'), 'bet_'], ['c']],
    ['like treats * and ? literally', ['like', prop('code'), 'gamma*'], []],
    ['ilike ignores case', ['ilike', prop('code'), 'AL%'], ['a', 'b']],
    [
      'and, or, not',
      ['and', ['or', ['==', prop('n'), 1], ['==', prop('n'), 3]], ['not', ['==', prop('code'), 'beta']]],
      ['a', 'd'],
    ],
  ]
  for (const [name, expr, expected] of cases) test(name, async () => expect(await ids(f(expr))).toEqual(expected))

  test('object filter is a conjunction', async () => {
    expect(await ids({ filter: '{"n":3,"flag":true}' })).toEqual(['c'])
  })
  test('no filter can reach another domain', async () => {
    expect(await ids(f(['or', ['==', prop('code'), 'Alpha'], ['!=', prop('code'), 'nothing']]))).not.toContain('z')
  })
})

describe('order and paging', () => {
  test('descending by a JSON field, id breaks ties in the same direction', async () => {
    expect(await ids({ order: '["-n"]' })).toEqual(['d', 'c', 'b', 'a'])
    expect(await ids({ order: '["n"]' })).toEqual(['a', 'b', 'c', 'd'])
  })
  test('ties keep a stable order across pages', async () => {
    const all = await ids({ order: '["flag"]' })
    const paged = [
      ...(await ids({ order: '["flag"]', limit: '2' })),
      ...(await ids({ order: '["flag"]', offset: '2', limit: '2' })),
    ]
    expect(paged).toEqual(all)
  })
})
