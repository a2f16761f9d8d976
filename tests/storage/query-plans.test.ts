// The hot queries keep their indexes: each is captured as the service runs it and put through
// EXPLAIN QUERY PLAN, so a change to a query or a migration can never silently turn one into a
// scan of its table.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Row, SqlValue } from '~storage/db'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
let domainId: string
/** Every statement the database ran while `capture` was on, with its arguments. */
const ran: { sql: string; args: SqlValue[] }[] = []
let capture = false
beforeAll(async () => {
  t = await testService()
  domainId = (await t.createDomain('plans.master')).id
  token = await t.adminIn('plans.master')
  const db = t.service.deps.db
  for (const method of ['all', 'get', 'getCached', 'allCached', 'allAside'] as const) {
    const original = db[method].bind(db) as (sql: string, args?: SqlValue[]) => Promise<unknown>
    ;(db as unknown as Record<string, unknown>)[method] = (sql: string, args: SqlValue[] = []) => {
      if (capture) ran.push({ sql, args })
      return original(sql, args)
    }
  }
  await t.call('POST', '/rest/v1/design/classes', {
    token,
    body: {
      classname: 'plan/items',
      properties: [
        { name: 'kind', data_type: 'string' },
        { name: 'n', data_type: 'long' },
      ],
      opts: { lookup_properties: ['kind'], indexes: [['kind', 'n']] },
    },
  })
})
afterAll(() => t.close())

/** The statements of one request, and the plan of the one that reads `table`. */
async function planOf(table: string, request: () => Promise<unknown>): Promise<string> {
  ran.length = 0
  capture = true
  await request()
  capture = false
  const hit = ran.filter((r) => new RegExp(`\\bFROM ${table}\\b`).test(r.sql)).at(-1)
  if (!hit) throw new Error(`no statement read ${table}: ${ran.map((r) => r.sql).join('\n')}`)
  const rows = (await t.service.deps.db.all(`EXPLAIN QUERY PLAN ${hit.sql}`, hit.args)) as Row[]
  return rows.map((r) => String(r[3])).join(' | ')
}

const get = (path: string) => () => t.call('GET', path, { token })
const q = (v: unknown) => encodeURIComponent(JSON.stringify(v))

test('a point read uses the primary key', async () => {
  const id = (await t.call('POST', '/rest/v1/reference/extobjs', { token, body: { type: 'p' } })).body.id
  await t.service.deps.db.run('UPDATE journal_cursors SET seq = seq') // any write: no answer from memory, the query runs
  expect(await planOf('extobjs', get(`/rest/v1/reference/extobjs/${id}`))).toMatch(
    /SEARCH extobjs USING (INDEX sqlite_autoindex_extobjs_1|PRIMARY KEY)/,
  )
})

test('a filtered extobj list uses the type index', async () => {
  expect(await planOf('extobjs', get(`/rest/v1/reference/extobjs?filter=${q({ type: 'p' })}&limit=20`))).toContain(
    'USING INDEX extobjs_type',
  )
})

test('a model list filtered and ordered by a declared index reads it, without sorting', async () => {
  const plan = await planOf(
    'rec_\\w+',
    get(`/rest/v1/model/plan/items?filter=${q({ kind: 'a' })}&order=${q(['-n'])}&limit=20`),
  )
  expect(plan).toMatch(/USING INDEX rec_\w+_i_/)
  expect(plan).not.toContain('TEMP B-TREE')
})

test('a keyset page (after=) seeks in the index instead of reading the rows before it', async () => {
  for (const n of [1, 2, 3]) await t.call('POST', '/rest/v1/model/plan/items', { token, body: { kind: 'a', n } })
  const first = await t.request(
    'GET',
    `/rest/v1/model/plan/items?filter=${q({ kind: 'a' })}&order=${q(['n'])}&limit=1`,
    {
      token,
    },
  )
  const after = first.headers.get('x-next-after')!
  const plan = await planOf(
    'rec_\\w+',
    get(`/rest/v1/model/plan/items?filter=${q({ kind: 'a' })}&order=${q(['n'])}&limit=1&after=${after}`),
  )
  expect(plan).toMatch(/SEARCH rec_\w+ USING INDEX rec_\w+_i_\w+ \(domain=\? AND <expr>=\? AND <expr>>\?\)/)
  expect(plan).not.toContain('TEMP B-TREE')
})

test('LOOKUP on a lookup property uses its index', async () => {
  const plan = await planOf('rec_\\w+', () => t.call('LOOKUP', '/rest/v1/model/plan/items', { token, body: 'a' }))
  expect(plan).toMatch(/USING (COVERING )?INDEX rec_\w+_p_kind/)
})

test('journal queries use their indexes: by object, by time', async () => {
  const byObject = q({ objtype: 'extobj', objid: '0192a3b4-0000-7000-8000-000000000001' })
  expect(await planOf('journal', get(`/rest/v1/journal/changes?params=${byObject}`))).toContain('journal_domain_object')
  const byTime = q({ dtstart: '2026-01-01T00:00:00Z', dtstop: '2026-12-31T00:00:00Z' })
  expect(await planOf('journal', get(`/rest/v1/journal/changes?params=${byTime}`))).toContain('journal_domain_dtutc')
})

test("a websocket resume and webhook enqueueing read a domain's journal by its seq index", async () => {
  const { domainJournalAfter, domainJournalBetween } = await import('~storage/journal')
  const db = t.service.deps.db
  expect(await planOf('journal', () => domainJournalAfter(db, domainId, 0, 10))).toContain('journal_domain_seq')
  expect(await planOf('journal', () => domainJournalBetween(db, domainId, 0, 10))).toContain('journal_domain_seq')
})

test("directory caches filtered by a member start from the member's edges, not from every row", async () => {
  const user = 'a-user' // the plan does not depend on who it is
  const sub = await planOf(
    'subordinations_caches',
    get(`/rest/v1/domain/subordinations_caches?filter=${q(['contains', ['property', 'sub'], user])}`),
  )
  expect(sub).not.toContain('SCAN subordinations_caches')
  expect(sub).toMatch(/SEARCH subordinations_caches USING (INDEX \w+|PRIMARY KEY) \(domain=\? AND id=\?\)/)
  const groups = await planOf(
    'groups_caches',
    get(`/rest/v1/domain/groups_caches?filter=${q(['contains', ['property', 'deep_users'], user])}`),
  )
  expect(groups).toMatch(/SEARCH groups_caches USING (INDEX \w+|PRIMARY KEY) \(domain=\? AND id=\?\)/)
  expect(groups).toContain('dir_members_usr')
})

test('a list whose mask leaves out a member list does not assemble it', async () => {
  const statement = async (mask: string) => {
    ran.length = 0
    capture = true
    await get(`/rest/v1/domain/groups_caches?mask=${mask}`)()
    capture = false
    return ran.find((r) => /\bFROM groups_caches\b/.test(r.sql))!.sql
  }
  expect(await statement('id')).not.toContain('dir_members')
  expect(await statement('id,deep_users')).toContain('dir_members')
})
