// /rest/v1/domain/settings: a fixed catalog with defaults; PATCH stores and journals; key cannot change.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { SETTINGS } from '~/settings/settings'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
const base = '/rest/v1/domain/settings'
beforeAll(async () => {
  t = await testService()
  token = await t.login('master', 'admin', 'admin-Secret_1')
})
afterAll(() => t.close())
const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token, body })

test('the list shows every key of the catalog, key only by default, value on request', async () => {
  const res = await call('GET', base)
  expect(res.body).toEqual(
    Object.keys(SETTINGS)
      .sort()
      .map((key) => ({ key })),
  )
  const masked = await call('GET', `${base}?mask=key,value&filter=${encodeURIComponent('{"key":"password_policy"}')}`)
  expect(masked.body).toEqual([{ key: 'password_policy', value: { min_length: 8 } }])
  expect((await call('GET', `${base}?limit=2&order=["-key"]`)).body).toEqual(
    Object.keys(SETTINGS)
      .sort()
      .reverse()
      .slice(0, 2)
      .map((key) => ({ key })),
  )
})

test('GET one shows the default until the domain changes it; unknown keys are 404', async () => {
  expect((await call('GET', `${base}/alertcall_defaults`)).body).toEqual({
    key: 'alertcall_defaults',
    value: SETTINGS.alertcall_defaults!.default,
  })
  expect((await call('GET', `${base}/alertcall_defaults?mask=value.calltimeout&flat=true`)).body).toEqual({
    'value.calltimeout': 30,
  })
  expect((await call('GET', `${base}/no_such_key`)).status).toBe(404)
})

test('PATCH merges an object value, answers the whole setting, stores and journals it', async () => {
  const res = await call('PATCH', `${base}/alertcall_defaults`, { value: { calltimeout: 60, callerid: '100' } })
  expect(res.status).toBe(200)
  const expected = {
    key: 'alertcall_defaults',
    value: { ...(SETTINGS.alertcall_defaults!.default as object), calltimeout: 60, callerid: '100' },
  }
  expect(res.body).toEqual(expected)
  expect((await call('GET', `${base}/alertcall_defaults`)).body).toEqual(expected)
  const row = await t.deps.db.get('SELECT doc FROM settings WHERE domain = ? AND id = ?', [
    t.master.id,
    'alertcall_defaults',
  ])
  expect(JSON.parse(row![0] as string)).toEqual(expected)
  expect((await t.journal(t.master.id)).at(-1)).toMatchObject({
    cmdtype: 'create',
    objtype: 'setting',
    objid: 'alertcall_defaults',
    obj: expected,
  })
  await call('PATCH', `${base}/alertcall_defaults`, { value: { trunkcount: 2 } })
  expect((await t.journal(t.master.id)).at(-1)).toMatchObject({
    cmdtype: 'update',
    objid: 'alertcall_defaults',
    fields: 'value.trunkcount',
  })
})

test('PATCH replaces a scalar value', async () => {
  expect((await call('PATCH', `${base}/self_register_allowed`, { value: true })).body).toEqual({
    key: 'self_register_allowed',
    value: true,
  })
  expect(
    (await call('GET', `${base}?mask=key,value&filter=${encodeURIComponent('{"key":"self_register_allowed"}')}`)).body,
  ).toEqual([{ key: 'self_register_allowed', value: true }])
})

test("key cannot change; values are validated against the key's shape", async () => {
  const moved = await call('PATCH', `${base}/password_policy`, { key: 'other' })
  expect(moved.status).toBe(400)
  expect(moved.body.error_details).toEqual({ field: 'key' })
  expect(
    (await call('PATCH', `${base}/password_policy`, { key: 'password_policy', value: { min_length: 10 } })).status,
  ).toBe(200)
  const cases: [string, unknown, string][] = [
    ['password_policy', { value: { min_length: 2 } }, 'value.min_length'],
    ['password_policy', { value: { min_length: 10, max: 3 } }, 'value.max'],
    ['self_register_allowed', { value: 'yes' }, 'value'],
    ['alertcall_defaults', { value: { calltimeout: 'long' } }, 'value.calltimeout'],
    ['alertcall_defaults', { other: 1 }, 'other'],
  ]
  for (const [key, body, field] of cases) {
    const res = await call('PATCH', `${base}/${key}`, body)
    expect(res.status).toBe(400)
    expect(res.body.error_details.field).toBe(field)
  }
  expect((await call('PATCH', `${base}/no_such_key`, { value: 1 })).status).toBe(404)
})

test("names of Object.prototype's members are unknown settings, like any other unknown key", async () => {
  await t.createDomain('proto-settings.master')
  const working = await t.adminIn('proto-settings.master')
  const keys = ['constructor', 'toString', '__proto__', '%5F%5Fproto%5F%5F', 'hasOwnProperty', 'valueOf']
  for (const tok of [token, working])
    for (const key of keys) {
      const patched = await t.call('PATCH', `${base}/${key}`, { token: tok, body: { value: { a: 1 } } })
      expect([key, patched.status]).toEqual([key, 404])
      expect([key, (await t.call('GET', `${base}/${key}`, { token: tok })).status]).toEqual([key, 404])
    }
})
