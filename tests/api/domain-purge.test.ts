// Deleting a domain leaves no row of it in any table that has a `domain` column (whatever the
// table), drops its model record tables, and leaves every other domain's data as it was.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { strToU8, zipSync } from 'fflate'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { entities } from '~/entities/registry'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let master: string
let doomed: { id: string; name: string }
let kept: { id: string; name: string }
/** Row counts of the kept domain in every table, taken before the deletion. */
let keptBefore: Record<string, number>

/** Tables that have a `domain` column, found in the schema itself rather than in any list of ours. */
async function domainTables(): Promise<string[]> {
  const names = (await t.deps.db.all("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")).map(
    (r) => r[0] as string,
  )
  const out: string[] = []
  for (const name of names) {
    const columns = await t.deps.db.all("SELECT 1 FROM pragma_table_info(?) WHERE name = 'domain'", [name])
    if (columns.length) out.push(name)
  }
  return out
}

const rowsOf = async (table: string, domainId: string) =>
  (await t.deps.db.get(`SELECT count(*) FROM "${table}" WHERE domain = ?`, [domainId]))![0] as number
/** The record tables of a domain's model classes (named rec_<domain hex>_<class hex>). */
const recordTablesOf = async (domainId: string) =>
  (
    await t.deps.db.all("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB ?", [
      `rec_${domainId.replace(/-/g, '')}_*`,
    ])
  ).map((r) => r[0] as string)
/** Whether a table holds rows of one domain only: another domain's record tables are not expected to hold ours. */
const isOtherDomainsRecords = (table: string, domainId: string) =>
  table.startsWith('rec_') && !table.startsWith(`rec_${domainId.replace(/-/g, '')}_`)

async function countsOf(domainId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {}
  for (const table of await domainTables())
    if (!isOtherDomainsRecords(table, domainId)) counts[table] = await rowsOf(table, domainId)
  return counts
}

/** Data of every kind in a domain, made through the API as an administrator working in it. */
async function populate(domain: { id: string; name: string }): Promise<void> {
  const token = await t.adminIn(domain.name)
  const post = async (path: string, body: unknown) => {
    const res = await t.call('POST', path, { token, body })
    if (res.status !== 200) throw new Error(`POST ${path}: ${res.status} ${res.text}`)
    return res.body
  }
  const role = await post('/rest/v1/domain/roles', {
    name: 'viewer',
    routes: [{ path: '/rest/v1/**', methods: ['GET'] }],
  })
  const group = await post('/rest/v1/domain/groups', { code: 'staff', name: 'Staff', roles: [role.name] })
  const user = await post('/rest/v1/domain/users', {
    login: 'ann',
    name: 'Ann',
    pwd: 'ann-Pass1',
    groups: [group.id],
    roles: ['user'],
    opts: { email: `ann@${domain.name}` },
  })
  await post('/rest/v1/uc/sipusers', { login: '1001', phonenumber: '1001', iduser: user.id, pwd: 'sip-secret' })
  await post('/rest/v1/domain/projects', { code: 'p1', name: 'Project 1' })
  await post('/rest/v1/reference/extobjs', { type: 'note', value: { text: 'hi' } })
  await post('/rest/v1/service/svcscripts', { code: 'sync', name: 'Sync', scriptdata: 'log("hi")' })
  await post('/rest/v1/service/svctasks', { name: 'Nightly sync', svcscriptcode: 'sync' })
  await t.run('svc-tasks') // its first run is due at once: a claimed run
  await post('/rest/v1/service/integration_points', { code: 'crm', type: 'public' })
  for (const classname of ['purge/items', 'purge/log']) {
    await post('/rest/v1/design/classes', { classname, properties: [{ name: 'n', data_type: 'long' }] })
    await post(`/rest/v1/model/${classname}`, { n: 1 })
    await post(`/rest/v1/model/${classname}`, { n: 2 })
  }
  // the built-in class every working domain has (callback orders) holds records too
  const order = { boxPhoneNumber: '1001', abonentPhoneNumber: '1002', dateTime: '2026-03-10T10:00:00Z' }
  await post('/rest/v1/model/telephony/CallbackRequests', order)
  const setting = await t.call('PATCH', '/rest/v1/domain/settings/password_policy', {
    token,
    body: { value: { min_length: 9 } },
  })
  expect(setting.status).toBe(200)
  // a pending password reset, and its mail waiting in the queue (RESEND_API_KEY is set, nothing delivers it)
  const reset = await t.call('POST', '/rest/v1/iam/pwd_reset_requests', { body: { key: 'ann', domain: domain.name } })
  expect(reset.status).toBe(200)
  // a product-layer order, registered and queued (no worker runs in these tests unless asked)
  expect((await t.call('POST', '/rest/v1/domain/product_layer', { token, body: { prefix: 'purge' } })).status).toBe(200)
  // a channel file: the domain's running total of its files
  const file = await t.call('PUT', '/rest/v1/fs/targets/token/purge.txt', { token, raw: 'bytes' })
  expect(file.status).toBe(204)
  // what journal retention leaves behind once it removed some of the domain's records
  await t.service.deps.db.run('INSERT INTO journal_horizons (domain, seq, dtutc) VALUES (?, 1, ?)', [
    domain.id,
    '2026-01-01T00:00:00.000Z',
  ])
}

beforeAll(async () => {
  t = await testService({
    // mail is queued for delivery, to a port nothing listens on; no test runs the mail worker
    env: { RESEND_API_KEY: 're_dummy_key', RESEND_BASE_URL: 'http://127.0.0.1:9' },
  })
  const layers = join(t.dir, 'layers')
  mkdirSync(layers, { recursive: true })
  writeFileSync(
    join(layers, 'purge_1.zip'),
    zipSync({ 'extobjs/a.json': strToU8(JSON.stringify({ type: 'layered', value: 1 })) }),
  )
  master = await t.login('master', 'admin', 'admin-Secret_1')
  doomed = await t.createDomain('doomed.master')
  kept = await t.createDomain('kept.master')
  await populate(doomed)
  await populate(kept)
  keptBefore = await countsOf(kept.id)
})
afterAll(() => t.close())

describe('before the deletion', () => {
  test('the domain has rows in every table with a domain column (but those of master-only collections)', async () => {
    const counts = await countsOf(doomed.id)
    // a working domain never holds rows of these (domains, border rules)
    const masterOnly = new Set(
      entities()
        .filter((e) => e.domainKind === 'master')
        .map((e) => e.table.table),
    )
    expect(masterOnly.has('domains')).toBe(true)
    const empty = Object.entries(counts)
      .filter(([table, n]) => !masterOnly.has(table) && n === 0)
      .map(([table]) => table)
    expect(empty).toEqual([])
    // the kinds the test means to cover are all there, model records and queued work included
    expect(Object.keys(counts)).toEqual(
      expect.arrayContaining([
        'users',
        'groups',
        'roles',
        'sipusers',
        'projects',
        'extobjs',
        'svcscripts',
        'svctasks',
        'svctask_runs',
        'integration_points',
        'classes',
        'settings',
        'users_caches',
        'groups_caches',
        'subordinations_caches',
        'iam_requests',
        'queue',
        'product_layers',
        'journal',
      ]),
    )
    expect(await recordTablesOf(doomed.id)).toHaveLength(3) // purge/items, purge/log, telephony/CallbackRequests
    const queued = await t.deps.db.all('SELECT kind, status FROM queue WHERE domain = ? ORDER BY kind', [doomed.id])
    expect(queued).toEqual([
      ['layer-order', 'pending'],
      ['mail', 'pending'],
    ])
  })
})

describe('deleting the domain', () => {
  beforeAll(async () => {
    const res = await t.call('DELETE', `/rest/v1/domain/domains/${doomed.id}`, { token: master })
    expect(res.status).toBe(204)
  })

  test('no table with a domain column keeps a row of it', async () => {
    const left = Object.entries(await countsOf(doomed.id)).filter(([, n]) => n > 0)
    expect(left).toEqual([])
  })

  test('the domain itself is gone from the domains table', async () => {
    expect(await t.deps.db.all('SELECT name FROM domains WHERE id = ? OR domain = ?', [doomed.id, doomed.id])).toEqual(
      [],
    )
  })

  test('its model record tables are dropped, their indexes with them', async () => {
    expect(await recordTablesOf(doomed.id)).toEqual([])
    const leftovers = await t.deps.db.all('SELECT type, name FROM sqlite_master WHERE name GLOB ?', [
      `rec_${doomed.id.replace(/-/g, '')}_*`,
    ])
    expect(leftovers).toEqual([])
  })

  test("another domain's rows are all still there", async () => {
    expect(await countsOf(kept.id)).toEqual(keptBefore)
    expect(await recordTablesOf(kept.id)).toHaveLength(3)
  })

  test('another domain still answers for its data', async () => {
    const token = await t.login(kept.name, 'ann', 'ann-Pass1')
    const records = await t.call('GET', '/rest/v1/model/purge/items?mask=n&order=["n"]', { token })
    expect(records.body).toEqual([{ n: 1 }, { n: 2 }])
    expect((await t.call('GET', '/rest/v1/domain/projects?mask=code', { token })).body).toEqual([{ code: 'p1' }])
  })
})
