// /rest/v1/design/classes: definitions validated, storage created, migrated and dropped with them.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { recordTable } from '~storage/model-tables'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
let domain: { id: string; name: string }
const base = '/rest/v1/design/classes'
beforeAll(async () => {
  t = await testService()
  domain = await t.createDomain('model.master')
  token = await t.adminIn('model.master')
})
afterAll(() => t.close())
const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token, body })
const tableExists = async (classId: string) =>
  Boolean(
    await t.deps.db.get("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [
      recordTable(domain.id, classId),
    ]),
  )

describe('create', () => {
  test('defaults of the spec, the journal record, the table, lookup by id and classname', async () => {
    const res = await call('POST', base, {
      classname: 'crm/contacts',
      name: 'Contacts',
      properties: [{ name: 'name', data_type: 'string', caption: 'NAME' }],
    })
    expect(res.status).toBe(200)
    const c = res.body
    expect(c).toMatchObject({
      classname: 'crm/contacts',
      name: 'Contacts',
      description: '',
      parent_id: '00000000-0000-0000-0000-000000000000',
      storage_mode: 'runtime',
      integrity_mode: 'sync_fast_notify',
      cache_mode: 'temp',
      opts: {
        check_required_fill_defaults: true,
        expires_mode: 'none',
        max_limit: 100,
        lookup_properties: [],
        max_mask: [],
        max_size: 1000000,
      },
    })
    expect(await tableExists(c.id)).toBe(true)
    expect((await t.journal(domain.id)).at(-1)).toMatchObject({ cmdtype: 'create', objtype: 'class', objid: c.id })
    expect((await call('LOOKUP', base, 'crm/contacts')).body).toEqual([c.id])
    expect((await call('LOOKUP', base, c.id)).body).toEqual([c.id])
    const listed = (await call('GET', `${base}?filter=${encodeURIComponent('{"classname":"crm/contacts"}')}`)).body[0]
    expect(Object.keys(listed).sort()).toEqual([
      'cache_mode',
      'classname',
      'description',
      'ext',
      'id',
      'integrity_mode',
      'name',
      'opts',
      'parent_id',
      'properties',
      'storage_mode',
    ])
    expect(Object.keys(listed.opts).sort()).toEqual(['comment', 'title'])
    expect((await call('GET', `${base}/${c.id}?mask=classname,opts.max_limit&flat=true`)).body).toEqual({
      classname: 'crm/contacts',
      'opts.max_limit': 100,
    })
  })

  test('every value list is checked, naming the field', async () => {
    const p = (over: Record<string, unknown>) => ({ name: 'x', data_type: 'string', ...over })
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'classname'],
      [{ classname: '/leading' }, 'classname'],
      [{ classname: 'a//b' }, 'classname'],
      [{ classname: 'logs/2026-01-01' }, 'classname'],
      [{ classname: 'c1', storage_mode: 'memory' }, 'storage_mode'],
      [{ classname: 'c1', integrity_mode: 'eventual' }, 'integrity_mode'],
      [{ classname: 'c1', cache_mode: 'all' }, 'cache_mode'],
      [{ classname: 'c1', properties: [p({ data_type: 'text' })] }, 'properties.0.data_type'],
      [{ classname: 'c1', properties: [p({ name: '9lives' })] }, 'properties.0.name'],
      [{ classname: 'c1', properties: [p({ name: 'id' })] }, 'properties.0.name'],
      [{ classname: 'c1', properties: [p({}), p({})] }, 'properties.1.name'],
      [{ classname: 'c1', properties: [p({ data_type: 'enum' })] }, 'properties.0.items'],
      [{ classname: 'c1', properties: [p({ items: ['a'] })] }, 'properties.0.items'],
      [{ classname: 'c1', properties: [p({ data_type: 'int', default: 'seven' })] }, 'properties.0.default'],
      [{ classname: 'c1', properties: [p({ colour: 'red' })] }, 'properties.0.colour'],
      [{ classname: 'c1', opts: { expires_mode: 'later' } }, 'opts.expires_mode'],
      [{ classname: 'c1', opts: { partition_interval: 'week' } }, 'opts.partition_interval'],
      [{ classname: 'c1', opts: { max_limit: 0 } }, 'opts.max_limit'],
      [{ classname: 'c1', opts: { whatever: 1 } }, 'opts.whatever'],
      [{ classname: 'c1', opts: { lookup_properties: ['nope'] } }, 'opts.lookup_properties'],
      [{ classname: 'c1', opts: { max_mask: ['nope'] } }, 'opts.max_mask'],
      [{ classname: 'c1', storage_mode: 'history', properties: [p({})] }, 'opts.partition_property'],
      [
        { classname: 'c1', storage_mode: 'history', properties: [p({})], opts: { partition_property: 'x' } },
        'opts.partition_property',
      ],
      [
        {
          classname: 'c1',
          properties: [p({ data_type: 'long' })],
          opts: { expires_mode: 'create', expires_ts_property: 'x' },
        },
        'opts.expires_ttl_property',
      ],
      [{ classname: 'c1', parent_id: '0192a3b4-0000-7000-8000-000000000001' }, 'parent_id'],
      [{ classname: 'c1', parent_id: 'nope' }, 'parent_id'],
    ]
    for (const [body, field] of cases) {
      const res = await call('POST', base, body)
      expect([field, res.status, res.body.error_details?.field]).toEqual([field, 400, field])
    }
    expect((await call('POST', base, { classname: 'crm/contacts' })).body).toMatchObject({
      error_code: 1409,
      error_details: { field: 'classname' },
    })
  })
})

describe('inheritance', () => {
  test("a child has its ancestors' properties first; a clash with one is refused; cycles too", async () => {
    const base1 = (
      await call('POST', base, {
        classname: 'inh/base',
        storage_mode: 'abstract',
        properties: [{ name: 'code', data_type: 'string', required: true }],
      })
    ).body
    const child = (
      await call('POST', base, {
        classname: 'inh/child',
        parent_id: base1.id,
        properties: [{ name: 'qty', data_type: 'int' }],
      })
    ).body
    expect(await tableExists(base1.id)).toBe(false)
    expect((await call('POST', '/rest/v1/model/inh/child', { qty: 1 })).body.error_details).toEqual({ field: 'code' })
    expect((await call('POST', '/rest/v1/model/inh/child', { code: 'a', qty: 1 })).status).toBe(200)
    expect((await call('POST', '/rest/v1/model/inh/base', { code: 'a' })).status).toBe(400)
    expect(
      (
        await call('POST', base, {
          classname: 'inh/bad',
          parent_id: base1.id,
          properties: [{ name: 'code', data_type: 'int' }],
        })
      ).body.error_details,
    ).toEqual({ field: 'properties' })
    expect((await call('PATCH', `${base}/${base1.id}`, { parent_id: child.id })).body.error_details).toEqual({
      field: 'parent_id',
    })
    // a property added to the parent reaches the child's records
    await call('PATCH', `${base}/${base1.id}`, {
      properties: [
        { name: 'code', data_type: 'string', required: true },
        { name: 'note', data_type: 'string' },
      ],
    })
    expect((await call('POST', '/rest/v1/model/inh/child', { code: 'b', note: 'hello' })).status).toBe(200)
    expect((await call('DELETE', `${base}/${base1.id}`)).status).toBe(409)
  })
})

describe('changes and deletion', () => {
  test('adding and removing properties keeps the records; removed values leave them', async () => {
    const c = (
      await call('POST', base, {
        classname: 'mig/items',
        properties: [
          { name: 'a', data_type: 'string' },
          { name: 'b', data_type: 'int' },
        ],
      })
    ).body
    const r = (await call('POST', '/rest/v1/model/mig/items', { a: 'x', b: 1 })).body
    await call('PATCH', `${base}/${c.id}`, {
      properties: [
        { name: 'a', data_type: 'string' },
        { name: 'c', data_type: 'boolean', default: false },
      ],
    })
    // the new property's default fills the record (check_required_fill_defaults is on by default)
    expect((await call('GET', `/rest/v1/model/mig/items/${r.id}`)).body).toEqual({ id: r.id, a: 'x', c: false })
    expect((await call('PATCH', `/rest/v1/model/mig/items/${r.id}`, { c: true })).body).toEqual({
      id: r.id,
      a: 'x',
      c: true,
    })
    expect((await call('POST', '/rest/v1/model/mig/items', { a: 'y', b: 2 })).body.error_details).toEqual({
      field: 'b',
    })
    expect(
      (await call('PATCH', `${base}/${c.id}`, { id: '0192a3b4-0000-7000-8000-000000000001' })).body.error_details,
    ).toEqual({ field: 'id' })
  })

  test('renaming a class moves its records to the new path', async () => {
    const c = (await call('POST', base, { classname: 'ren/old', properties: [{ name: 'a', data_type: 'string' }] }))
      .body
    const r = (await call('POST', '/rest/v1/model/ren/old', { a: 'kept' })).body
    await call('PATCH', `${base}/${c.id}`, { classname: 'ren/new' })
    expect((await call('GET', `/rest/v1/model/ren/new/${r.id}`)).body.a).toBe('kept')
    expect((await call('GET', '/rest/v1/model/ren/old')).status).toBe(404)
  })

  test('a class whose records have no date cannot become a history class', async () => {
    const c = (await call('POST', base, { classname: 'hist/later', properties: [{ name: 'd', data_type: 'string' }] }))
      .body
    await call('POST', '/rest/v1/model/hist/later', {}) // no d: nothing to convert, and no date
    const res = await call('PATCH', `${base}/${c.id}`, {
      storage_mode: 'history',
      properties: [{ name: 'd', data_type: 'datetime' }],
      opts: { partition_property: 'd' },
    })
    expect(res.status).toBe(409)
    expect(res.body.error_details).toEqual({ field: 'opts.partition_property' })
    expect((await call('GET', `${base}/${c.id}`)).body.storage_mode).toBe('runtime')
  })

  test('a class with records cannot become abstract; one without can', async () => {
    const c = (await call('POST', base, { classname: 'abs/x', properties: [{ name: 'a', data_type: 'string' }] })).body
    const r = (await call('POST', '/rest/v1/model/abs/x', { a: '1' })).body
    expect((await call('PATCH', `${base}/${c.id}`, { storage_mode: 'abstract' })).status).toBe(409)
    await call('DELETE', `/rest/v1/model/abs/x/${r.id}`)
    expect((await call('PATCH', `${base}/${c.id}`, { storage_mode: 'abstract' })).status).toBe(200)
    expect(await tableExists(c.id)).toBe(false)
  })

  test('DELETE removes the class, its table and its records, journaling each', async () => {
    const c = (await call('POST', base, { classname: 'del/me', properties: [{ name: 'a', data_type: 'string' }] })).body
    const ids = [
      (await call('POST', '/rest/v1/model/del/me', { a: '1' })).body.id,
      (await call('POST', '/rest/v1/model/del/me', { a: '2' })).body.id,
    ]
    expect((await call('DELETE', `${base}/${c.id}`)).status).toBe(204)
    expect(await tableExists(c.id)).toBe(false)
    const tail = (await t.journal(domain.id)).slice(-3)
    expect(tail.map((r) => [r.cmdtype, r.objtype, r.objid])).toEqual([
      ['delete', 'class', c.id],
      ['delete', 'model/del/me', ids[0]],
      ['delete', 'model/del/me', ids[1]],
    ])
    expect((await call('GET', '/rest/v1/model/del/me')).status).toBe(404)
  })
})

test('opts.indexes creates composite indexes, and drops them when they go', async () => {
  const c = (
    await call('POST', base, {
      classname: 'idx/items',
      properties: [
        { name: 'kind', data_type: 'string' },
        { name: 'n', data_type: 'int' },
      ],
      opts: { indexes: [['kind', 'n']], lookup_properties: ['kind'] },
    })
  ).body
  const indexes = async () =>
    (
      await t.deps.db.all("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? ORDER BY name", [
        recordTable(domain.id, c.id),
      ])
    ).map((r) => r[0])
  const table = recordTable(domain.id, c.id)
  expect(await indexes()).toEqual(expect.arrayContaining([`${table}_p_kind`]))
  expect((await indexes()).filter((n) => String(n).startsWith(`${table}_i_`))).toHaveLength(1)
  await call('PATCH', `${base}/${c.id}`, { opts: { indexes: [], lookup_properties: [] } })
  expect((await indexes()).filter((n) => String(n).includes('_i_') || String(n).includes('_p_'))).toEqual([])
  expect((await call('PATCH', `${base}/${c.id}`, { opts: { indexes: [['nope']] } })).body.error_details).toEqual({
    field: 'opts.indexes',
  })
})

test('SYNC answers once every class is loaded and its storage ready', async () => {
  const res = await call('SYNC', base)
  expect(res.status).toBe(200)
  expect(res.body.ready).toBe(true)
  expect(res.body.classnames).toContain('crm/contacts')
  expect(res.body.classes).toBe(res.body.classnames.length)
  expect((await call('SYNC', base, { timeout_ms: 'soon' })).body.error_details).toEqual({ field: 'timeout_ms' })
})
