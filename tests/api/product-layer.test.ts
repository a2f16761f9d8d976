// Product layers: archives of classes, scripts, extobjs and settings installed in one transaction,
// re-installed (identical), updated, broken (nothing changes), deleted and cleared.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { strToU8, zipSync } from 'fflate'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
const URL = '/rest/v1/domain/product_layer'
const EXTOBJ = '0192a3b4-0000-7000-8000-0000000000e1'

function archive(name: string, files: Record<string, unknown>): void {
  const dir = join(t.dir, 'layers')
  mkdirSync(dir, { recursive: true })
  const entries = Object.fromEntries(
    Object.entries(files).map(([path, v]) => [path, strToU8(typeof v === 'string' ? v : JSON.stringify(v))]),
  )
  writeFileSync(join(dir, name), zipSync(entries))
}

const v1 = {
  'classes/base.json': {
    id: '0192a3b4-0000-7000-8000-0000000000c1',
    classname: 'crm/base',
    storage_mode: 'abstract',
    properties: [{ name: 'code', data_type: 'string' }],
  },
  'classes/deals.json': {
    classname: 'crm/deals',
    parent_id: '0192a3b4-0000-7000-8000-0000000000c1',
    properties: [{ name: 'amount', data_type: 'float' }],
  },
  'svcscripts/all.json': [{ code: 'crm_sync', name: 'CRM sync', scriptdata: 'log("hi")' }],
  'extobjs/config.json': { id: EXTOBJ, type: 'crm_config', value: { url: 'https://crm.example' } },
  'settings/alerts.json': {
    key: 'alertcall_defaults',
    value: {
      attemptcount: 3,
      attempttimeoutsec: 10,
      callerid: 'CRM',
      callername: 'CRM',
      calltimeout: 30,
      trunkcount: 1,
    },
  },
}

beforeAll(async () => {
  t = await testService()
  await t.createDomain('layer.master')
  token = await t.adminIn('layer.master')
})
afterAll(() => t.close())
const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token, body })
const domainId = async () => (await t.deps.db.get("SELECT id FROM domains WHERE name = 'layer.master'"))![0] as string
const settle = () => t.run('layer-orders')
const listing = async () => (await call('GET', URL)).body

describe('install', () => {
  test('{prefix} installs the greatest archive of the prefix: the order answers registered, then the layer is installed', async () => {
    archive('crm_2026.01.zip', v1)
    archive('crm_2025.12.zip', { 'classes/old.json': { classname: 'crm/old' } })
    const res = await call('POST', URL, { prefix: 'crm' })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      operation: 'install',
      prefix: 'crm',
      mode: 'default',
      file: 'crm_2026.01.zip',
      site: 'site1',
      status: 'registered',
      kind: 'current',
      order: 0,
    })
    expect(res.body.dt).toMatch(/Z$/)
    await settle()
    const [current] = await listing()
    expect(current).toMatchObject({
      status: 'installed',
      kind: 'current',
      order: 0,
      file: 'crm_2026.01.zip',
      mode: 'default',
      site: 'site1',
    })
    expect(current.md5).toMatch(/^[0-9A-F]{32}$/)
    expect(current.trace).toBe('crm_2026.01.zip: 2 classes, 1 svcscripts, 1 extobjs, 1 settings')
    expect(Object.keys(current).sort()).toEqual([
      'dt',
      'file',
      'kind',
      'md5',
      'mode',
      'order',
      'site',
      'status',
      'trace',
    ])
  })

  test('what the layer holds is there, journaled like any change', async () => {
    const deal = await call('POST', '/rest/v1/model/crm/deals', { code: 'D1', amount: 100 })
    expect(deal.status).toBe(200)
    expect((await call('LOOKUP', '/rest/v1/service/svcscripts', 'crm_sync')).status).toBe(200)
    expect((await call('GET', `/rest/v1/reference/extobjs/${EXTOBJ}`)).body.value).toEqual({
      url: 'https://crm.example',
    })
    expect((await call('GET', '/rest/v1/domain/settings/alertcall_defaults')).body.value.callerid).toBe('CRM')
    const objtypes = (await t.journal(await domainId())).map((r) => r.objtype)
    for (const kind of ['class', 'svcscript', 'extobj', 'setting']) expect(objtypes).toContain(kind)
  })

  test('the same archive again is identical: an attempt, the current state unchanged', async () => {
    await call('POST', URL, { prefix: 'crm' })
    await settle()
    const rows = await listing()
    expect(rows.map((r: { status: string; kind: string; order: number }) => [r.status, r.kind, r.order])).toEqual([
      ['installed', 'current', 0],
      ['identical', 'attempt', 1],
    ])
  })

  test('a newer archive installs over it; records stay; update re-applies even when identical', async () => {
    archive('crm_2026.02.zip', {
      ...v1,
      'classes/deals.json': {
        ...v1['classes/deals.json'],
        properties: [
          { name: 'amount', data_type: 'float' },
          { name: 'stage', data_type: 'string' },
        ],
      },
    })
    await call('POST', URL, { operation: 'install', prefix: 'crm', mode: 'default' })
    await settle()
    expect((await listing())[0]).toMatchObject({ status: 'installed', kind: 'current', file: 'crm_2026.02.zip' })
    expect((await call('GET', '/rest/v1/model/crm/deals')).body).toHaveLength(1)
    expect((await call('POST', '/rest/v1/model/crm/deals', { code: 'D2', stage: 'won' })).status).toBe(200)
    await call('POST', URL, { operation: 'update', prefix: 'crm' })
    await settle()
    expect((await listing()).map((r: { status: string }) => r.status)).toEqual(['installed'])
  })

  test('a broken archive leaves the domain unchanged and its record says why', async () => {
    const before = (await t.journal(await domainId())).length
    archive('crm_2026.03.zip', {
      ...v1,
      'svcscripts/all.json': [{ code: 'crm_new', name: 'New', scriptdata: 'x' }],
      'classes/zz.json': { classname: 'crm/broken', properties: [{ name: 'x', data_type: 'text' }] },
    })
    await call('POST', URL, { prefix: 'crm' })
    await settle()
    const rows = await listing()
    expect(rows.map((r: { status: string; kind: string }) => [r.status, r.kind])).toEqual([
      ['installed', 'current'],
      ['failure', 'attempt'],
    ])
    expect(rows[1].trace).toContain('classes/zz.json')
    expect(rows[1].trace).toContain('data_type')
    expect((await call('LOOKUP', '/rest/v1/service/svcscripts', 'crm_new')).status).toBe(404)
    expect((await t.journal(await domainId())).length).toBe(before)
    archive('crm_2026.04.zip', { 'classes/x.json': '{not json' })
    await call('POST', URL, { prefix: 'crm' })
    await settle()
    expect((await listing()).at(-1).trace).toContain('classes/x.json: not valid JSON')
    // an archive that says it inflates past MAX_INFLATED_BYTES (a zip bomb) is not inflated at all
    const bomb = zipSync({ 'classes/a.json': strToU8('{}') })
    const central = Buffer.from(bomb).indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]))
    new DataView(bomb.buffer, bomb.byteOffset).setUint32(central + 24, 0x40000000, true) // declared: 1 GiB
    writeFileSync(join(t.dir, 'layers', 'crm_2026.045.zip'), bomb)
    await call('POST', URL, { prefix: 'crm' })
    await settle()
    expect((await listing()).at(-1).trace).toContain('holds more than 268435456 bytes once inflated')
    // a value storage cannot keep is the layer's fault, said as such (not an internal error)
    const deep = `${'['.repeat(1000)}${']'.repeat(1000)}`
    archive('crm_2026.05.zip', { 'extobjs/deep.json': `{"id":"${EXTOBJ}","type":"deep","value":${deep}}` })
    await call('POST', URL, { prefix: 'crm' })
    await settle()
    const trace = (await listing()).at(-1).trace as string
    expect([trace.startsWith('internal error'), trace]).toEqual([false, expect.stringContaining('nested deeper')])
  })
})

describe('delete and clear', () => {
  test('delete removes what the layer installed, keeping classes that hold records', async () => {
    archive('crm_2026.05.zip', v1)
    await call('POST', URL, { prefix: 'crm' })
    await settle()
    const res = await call('POST', URL, { operation: 'delete' })
    expect(res.body).toMatchObject({ operation: 'delete', prefix: 'crm', status: 'registered' })
    await settle()
    const [current] = await listing()
    expect(current).toMatchObject({
      status: 'deleted',
      kind: 'current',
      trace: 'kept classes that hold records: crm/deals, crm/base',
    })
    expect((await call('LOOKUP', '/rest/v1/service/svcscripts', 'crm_sync')).status).toBe(404)
    expect((await call('GET', `/rest/v1/reference/extobjs/${EXTOBJ}`)).status).toBe(404)
    expect((await call('GET', '/rest/v1/domain/settings/alertcall_defaults')).body.value.callerid).toBe('')
    expect((await call('GET', '/rest/v1/model/crm/deals')).body).toHaveLength(2)
    expect((await call('POST', URL, { operation: 'delete' })).status).toBe(409)
  })

  test('two delete orders at once: the second ends as a failure saying why', async () => {
    await call('POST', URL, { prefix: 'crm', operation: 'update' })
    await settle()
    const [first, second] = await Promise.all([
      call('POST', URL, { operation: 'delete' }),
      call('POST', URL, { operation: 'delete' }),
    ])
    expect([first.status, second.status]).toEqual([200, 200])
    await settle()
    const rows = await listing()
    expect(rows.map((r: { status: string }) => r.status)).toEqual(['deleted', 'failure'])
    expect(rows[1].trace).toBe('no product layer crm is installed any more')
  })

  test('clear removes the classes with their records', async () => {
    await call('POST', URL, { prefix: 'crm' })
    await settle()
    await call('POST', URL, { operation: 'clear' })
    await settle()
    expect((await listing())[0]).toMatchObject({ status: 'cleared', trace: 'removed' })
    expect((await call('GET', '/rest/v1/model/crm/deals')).status).toBe(404)
    expect((await call('LOOKUP', '/rest/v1/design/classes', 'crm/base')).status).toBe(404)
  })
})

test('bad orders are refused, naming the field', async () => {
  const cases: [unknown, number, string][] = [
    [{}, 400, 'prefix'],
    [{ operation: 'update' }, 400, 'prefix'],
    [{ prefix: 'nothing_like_it' }, 400, 'prefix'],
    [{ prefix: '../etc' }, 400, 'prefix'],
    [{ prefix: 'crm', operation: 'reinstall' }, 400, 'operation'],
    [{ prefix: 'crm', mode: 'fast' }, 400, 'mode'],
  ]
  for (const [body, status, field] of cases) {
    const res = await call('POST', URL, body)
    expect([field, res.status, res.body.error_details?.field]).toEqual([field, status, field])
  }
})

test("a layer's script that does not parse fails its order, naming the script; nothing is installed", async () => {
  archive('erp_2026.01.zip', {
    'classes/things.json': { classname: 'erp/things', properties: [{ name: 'n', data_type: 'float' }] },
    'svcscripts/all.json': [
      { code: 'erp_good', name: 'Good', scriptdata: 'return 1' },
      { code: 'erp_bad', name: 'Bad', scriptdata: 'const a = 1\nfoo(\nreturn a' },
    ],
  })
  expect((await call('POST', URL, { prefix: 'erp' })).status).toBe(200)
  await settle()
  const row = (await listing()).find((r: { file: string }) => r.file === 'erp_2026.01.zip')
  expect(row.status).toBe('failure')
  expect(row.trace).toStartWith('svcscripts/all.json item 1: script erp_bad: the script does not parse: SyntaxError')
  expect(row.trace).toContain('(line 3)')
  expect((await call('LOOKUP', '/rest/v1/design/classes', 'erp/things')).status).toBe(404)
  expect((await call('LOOKUP', '/rest/v1/service/svcscripts', 'erp_good')).status).toBe(404)
})
