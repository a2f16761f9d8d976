// Every entity whose opts carry the common title and comment answers them, empty by default and
// first, as the original's examples show: on create, on read, in the journal, and after a PATCH
// that sets them to null.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let master: string
let working: string
beforeAll(async () => {
  t = await testService()
  await t.createDomain('opts.master')
  master = await t.login('master', 'admin', 'admin-Secret_1')
  working = await t.adminIn('opts.master')
})
afterAll(() => t.close())

const CASES: [path: string, body: Record<string, unknown>, as: 'master' | 'working'][] = [
  ['/rest/v1/domain/domains', { name: 'more.master' }, 'master'],
  ['/rest/v1/domain/users', { login: 'ann', pwd: 'ann-Pass1' }, 'working'],
  ['/rest/v1/domain/groups', { code: 'g1' }, 'working'],
  ['/rest/v1/domain/roles', { name: 'r1' }, 'working'],
  ['/rest/v1/uc/sipusers', { login: '101', pwd: 'sip-Pass1' }, 'working'],
  ['/rest/v1/domain/projects', { code: 'p1', name: 'P' }, 'working'],
  ['/rest/v1/reference/extobjs', { type: 't' }, 'working'],
  ['/rest/v1/service/svcscripts', { code: 's1', name: 'S', scriptdata: 'log(1)' }, 'working'],
  ['/rest/v1/service/svctasks', { name: 'T', svcscriptcode: 's1' }, 'working'],
  ['/rest/v1/service/integration_points', { code: 'c1', type: 'public' }, 'working'],
  ['/rest/v1/master/borderrules', { action: 'deny', priority: 1 }, 'master'],
]

test.each(CASES)('%s: opts.title and opts.comment are empty by default, and return to it', async (path, body, as) => {
  const token = as === 'master' ? master : working
  const created = await t.call('POST', path, { token, body })
  expect([path, created.status]).toEqual([path, 200])
  expect(created.body.opts).toMatchObject({ title: '', comment: '' })
  expect(Object.keys(created.body.opts).slice(0, 2)).toEqual(['title', 'comment'])
  const url = `${path}/${created.body.id}`
  expect((await t.call('GET', url, { token })).body.opts).toEqual(created.body.opts)
  const named = await t.call('PATCH', url, { token, body: { opts: { title: 'Named', comment: 'c' } } })
  expect(named.body.opts).toMatchObject({ title: 'Named', comment: 'c' })
  const cleared = await t.call('PATCH', url, { token, body: { opts: { title: null, comment: null } } })
  expect(cleared.body.opts).toMatchObject({ title: '', comment: '' })
})
