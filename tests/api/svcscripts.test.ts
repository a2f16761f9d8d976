// /rest/v1/service/svcscripts: service scripts, `code` unique per domain. Each write is checked in the
// response, in the script read back through the API, and in the journal.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
let domain: { id: string; name: string }
const base = '/rest/v1/service/svcscripts'
const NIL_UUID = '00000000-0000-0000-0000-000000000000'
const FOUR_MB = 4 * 1024 * 1024
beforeAll(async () => {
  // the file makes more scripts than the evaluation licence allows (tests/api/licence-limits checks the limit)
  t = await testService({ licence: { svcscripts: 100 } })
  domain = await t.createDomain('scripts.master')
  token = await t.adminIn('scripts.master')
})
afterAll(() => t.close())

const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token, body })
const lastJournal = async () => (await t.journal(domain.id)).at(-1)!
const journalLength = async () => (await t.journal(domain.id)).length
/** A valid create body for the code, with any field replaced or added. */
const script = (code: string, extra: Record<string, unknown> = {}) => ({
  code,
  name: `Script ${code}`,
  scriptdata: `log("${code}")`,
  ...extra,
})
const create = async (code: string, extra: Record<string, unknown> = {}) => {
  const res = await call('POST', base, script(code, extra))
  if (res.status !== 200) throw new Error(`create ${code}: ${res.status} ${res.text}`)
  return res.body
}
const byCode = (code: string) => `${base}?filter=${encodeURIComponent(JSON.stringify({ code }))}`

describe('create', () => {
  test('answers 200 with the stored script; it reads back the same; the journal records the create', async () => {
    const res = await call(
      'POST',
      base,
      script('greet', { opts: { title: 'Greeting', comment: 'says hello' }, ext: { origin: 'test' } }),
    )
    expect(res.status).toBe(200)
    const s = res.body
    expect(s.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(s).toEqual({
      id: s.id,
      code: 'greet',
      name: 'Script greet',
      scriptdata: 'log("greet")',
      projectid: NIL_UUID,
      opts: { title: 'Greeting', comment: 'says hello' },
      ext: { origin: 'test', ct: s.ext.ct, lwt: s.ext.ct },
    })
    expect(s.ext.ct).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect((await call('GET', `${base}/${s.id}`)).body).toEqual(s)
    expect(await lastJournal()).toMatchObject({
      cmdtype: 'create',
      objtype: 'svcscript',
      objid: s.id,
      fields: null,
      obj: s,
      modifiername: 'Administrator',
    })
  })

  test('projectid defaults to the nil UUID', async () => {
    const s = await create('no-project')
    expect(s.projectid).toBe(NIL_UUID)
    expect((await call('GET', `${base}/${s.id}`)).body.projectid).toBe(NIL_UUID)
    expect((await lastJournal()).obj.projectid).toBe(NIL_UUID)
  })

  test('a projectid names a project of this domain (kept lower-cased); anything else is 400 naming it', async () => {
    const project = { id: '0192a3b4-0000-7000-8000-00000000000a', code: 'scripts-project', name: 'P' }
    expect((await call('POST', '/rest/v1/domain/projects', project)).status).toBe(200)
    const elsewhere = await t.createDomain('other-scripts.master')
    const foreign = await t.call('POST', '/rest/v1/domain/projects', {
      token: await t.adminIn('other-scripts.master'),
      body: { code: 'theirs', name: 'Theirs' },
    })
    expect(elsewhere.id).not.toBe(domain.id)
    for (const projectid of [foreign.body.id, '0192a3b4-0000-7000-8000-00000000000b']) {
      const refused = await call('POST', base, script('wrong-project', { projectid }))
      expect([refused.status, refused.body.error_details]).toEqual([400, { field: 'projectid' }])
    }
    const s = await create('in-project', { projectid: '0192A3B4-0000-7000-8000-00000000000A' })
    expect(s.projectid).toBe('0192a3b4-0000-7000-8000-00000000000a')
    expect((await call('GET', `${base}/${s.id}`)).body.projectid).toBe('0192a3b4-0000-7000-8000-00000000000a')
    expect((await lastJournal()).obj.projectid).toBe('0192a3b4-0000-7000-8000-00000000000a')
    const bad = await call('POST', base, script('bad-project', { projectid: 'project-1' }))
    expect([bad.status, bad.body.error_details]).toEqual([400, { field: 'projectid' }])
  })

  test('code, name and scriptdata are required: 400 naming the missing one, nothing journaled', async () => {
    const before = await journalLength()
    for (const field of ['code', 'name', 'scriptdata']) {
      const body: Record<string, unknown> = script('required')
      delete body[field]
      const res = await call('POST', base, body)
      expect([field, res.status, res.body.error_details]).toEqual([field, 400, { field }])
    }
    expect(await journalLength()).toBe(before)
  })

  test('a code of other characters than letters, digits, _ . - is 400 naming code; nothing stored or journaled', async () => {
    const before = await journalLength()
    for (const code of ['has space', 'a/b', 'a:b', 'ümlaut', 'semi;colon', 'q"uote', '']) {
      const res = await call('POST', base, script(code))
      expect([code, res.status, res.body.error_code, res.body.error_details]).toEqual([
        code,
        400,
        1400,
        { field: 'code' },
      ])
      if (code) expect([code, (await call('LOOKUP', base, code)).status]).toEqual([code, 404])
    }
    expect(await journalLength()).toBe(before)
  })

  test('a code is up to 128 characters: 129 is 400 naming code', async () => {
    const longest = `Az09_.-${'x'.repeat(121)}`
    expect(longest).toHaveLength(128)
    expect((await create(longest)).code).toBe(longest)
    const res = await call('POST', base, script(`${longest}x`))
    expect([res.status, res.body.error_details]).toEqual([400, { field: 'code' }])
  })

  test("scriptdata in the original's object form and opts.loglevel, opts.variables are stored and round-trip", async () => {
    const form = { objects: [{ id: 1, type: 'start', next: 2 }], variables: [{ name: 'var1' }], scriptVersion: 170105 }
    const s = await create('visual', { scriptdata: form, opts: { loglevel: 0, variables: { var1: 0 } } })
    expect(s.scriptdata).toEqual(form)
    expect(s.opts).toEqual({ title: '', comment: '', loglevel: 0, variables: { var1: 0 } })
    expect((await call('GET', `${base}/${s.id}`)).body).toEqual(s)
    const patched = await call('PATCH', `${base}/${s.id}`, { scriptdata: 'log(1)', opts: { variables: { var2: 'x' } } })
    expect([patched.body.scriptdata, patched.body.opts.variables]).toEqual(['log(1)', { var2: 'x' }])
    for (const [body, field] of [
      [{ scriptdata: 12 }, 'scriptdata'],
      [{ scriptdata: ['log(1)'] }, 'scriptdata'],
      [{ opts: { loglevel: 1.5 } }, 'opts.loglevel'],
      [{ opts: { loglevel: -1 } }, 'opts.loglevel'],
      [{ opts: { variables: [1] } }, 'opts.variables'],
    ] as const) {
      const res = await call('PATCH', `${base}/${s.id}`, body)
      expect([field, res.status, res.body.error_details?.field]).toEqual([field, 400, field])
    }
  })

  test('scriptdata of exactly 4 MB is stored whole', async () => {
    const s = await create('four-mb', { scriptdata: 'x'.repeat(FOUR_MB) })
    expect(s.scriptdata).toHaveLength(FOUR_MB)
    expect((await call('GET', `${base}/${s.id}`)).body.scriptdata).toHaveLength(FOUR_MB)
    expect((await lastJournal()).objid).toBe(s.id)
  })

  test('scriptdata over 4 MB is 400 naming scriptdata; nothing stored or journaled', async () => {
    const before = await journalLength()
    const res = await call('POST', base, script('too-big', { scriptdata: 'x'.repeat(FOUR_MB + 1) }))
    expect(res.status).toBe(400)
    expect(res.body.error_code).toBe(1400)
    expect(res.body.error_details).toEqual({ field: 'scriptdata' })
    expect((await call('LOOKUP', base, 'too-big')).status).toBe(404)
    expect(await journalLength()).toBe(before)
  })

  test('a second script with a code the domain already holds is 409 naming code; nothing stored or journaled', async () => {
    const first = await create('dup')
    const before = await journalLength()
    const res = await call('POST', base, script('dup', { name: 'Another' }))
    expect(res.status).toBe(409)
    expect(res.body.error_code).toBe(1409)
    expect(res.body.error_details).toEqual({ field: 'code' })
    expect((await call('LOOKUP', base, 'dup')).body).toEqual([first.id])
    expect((await call('GET', `${base}/${first.id}`)).body.name).toBe('Script dup')
    expect(await journalLength()).toBe(before)
  })

  test('the same code in another domain is a script of its own', async () => {
    const mine = await create('shared-code')
    const other = await t.createDomain('scripts2.master')
    const otherToken = await t.adminIn('scripts2.master')
    const res = await t.call('POST', base, { token: otherToken, body: script('shared-code', { name: 'Theirs' }) })
    expect(res.status).toBe(200)
    expect(res.body.id).not.toBe(mine.id)
    expect((await t.call('LOOKUP', base, { token: otherToken, body: 'shared-code' })).body).toEqual([res.body.id])
    expect((await call('LOOKUP', base, 'shared-code')).body).toEqual([mine.id])
    expect((await call('GET', `${base}/${mine.id}`)).body.name).toBe('Script shared-code')
    expect((await t.journal(other.id)).at(-1)).toMatchObject({
      cmdtype: 'create',
      objtype: 'svcscript',
      objid: res.body.id,
    })
  })
})

describe('list', () => {
  test('items hold the list fields only: id, code, name, projectid, opts.title, ext.lwt, ext.ct (no scriptdata)', async () => {
    const s = await create('listed', { opts: { title: 'Listed', comment: 'not in the list' }, ext: { origin: 'x' } })
    const res = await call('GET', byCode('listed'))
    expect(res.status).toBe(200)
    expect(res.body).toEqual([
      {
        id: s.id,
        code: 'listed',
        name: 'Script listed',
        projectid: NIL_UUID,
        opts: { title: 'Listed' },
        ext: { lwt: s.ext.lwt, ct: s.ext.ct },
      },
    ])
    for (const item of (await call('GET', base)).body) expect(item.scriptdata).toBeUndefined()
  })

  test('filter by expression and mask: only the matching scripts, only the masked fields', async () => {
    const a = await create('filt-a', { name: 'Alpha' })
    const b = await create('filt-b', { name: 'Beta' })
    await create('other-c', { name: 'Gamma' })
    const filter = encodeURIComponent('["like", ["property", "code"], "filt-%"]')
    const res = await call('GET', `${base}?filter=${filter}&mask=id,name&order=["-code"]`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual([
      { id: b.id, name: 'Beta' },
      { id: a.id, name: 'Alpha' },
    ])
  })

  test('scriptdata cannot be asked for in a list mask: 400 naming mask', async () => {
    const res = await call('GET', `${base}?mask=code,scriptdata`)
    expect([res.status, res.body.error_details?.field]).toEqual([400, 'mask'])
  })
})

describe('lookup', () => {
  let s: { id: string; code: string }
  beforeAll(async () => {
    s = await create('look-me-up')
  })

  test('LOOKUP by code answers the id', async () => {
    const res = await call('LOOKUP', base, 'look-me-up')
    expect([res.status, res.body]).toEqual([200, [s.id]])
  })

  test('LOOKUP by id answers the id (in any letter case)', async () => {
    expect((await call('LOOKUP', base, s.id)).body).toEqual([s.id])
    expect((await call('LOOKUP', base, s.id.toUpperCase())).body).toEqual([s.id])
  })

  test('LOOKUP of an unknown code or id is 404 lookup failed', async () => {
    for (const key of ['no-such-script', '0192a3b4-0000-7000-8000-0000000000ff']) {
      const res = await call('LOOKUP', base, key)
      expect([key, res.status, res.body.error_code, res.body.error_message]).toEqual([key, 404, 1404, 'lookup failed'])
    }
  })
})

describe('patch', () => {
  test('PATCH answers the whole script; the change reads back; the journal names the changed fields', async () => {
    const s = await create('to-patch', { opts: { title: 'Old', comment: 'kept' } })
    t.clock.advance(1000)
    const res = await call('PATCH', `${base}/${s.id}`, {
      name: 'Patched',
      scriptdata: 'log("new")',
      opts: { title: 'New' },
    })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      ...s,
      name: 'Patched',
      scriptdata: 'log("new")',
      opts: { title: 'New', comment: 'kept' },
      ext: { ct: s.ext.ct, lwt: res.body.ext.lwt },
    })
    expect(res.body.ext.lwt > s.ext.ct).toBe(true)
    expect((await call('GET', `${base}/${s.id}`)).body).toEqual(res.body)
    expect(await lastJournal()).toMatchObject({
      cmdtype: 'update',
      objtype: 'svcscript',
      objid: s.id,
      fields: 'name,opts.title,scriptdata',
      obj: res.body,
    })
  })

  test('PATCH to a code another script holds is 409 naming code; neither script changes, nothing journaled', async () => {
    const taken = await create('taken')
    const s = await create('mine')
    const before = await journalLength()
    const res = await call('PATCH', `${base}/${s.id}`, { code: 'taken' })
    expect([res.status, res.body.error_details]).toEqual([409, { field: 'code' }])
    expect((await call('GET', `${base}/${s.id}`)).body.code).toBe('mine')
    expect((await call('LOOKUP', base, 'taken')).body).toEqual([taken.id])
    expect(await journalLength()).toBe(before)
  })

  test('PATCH with a code of other characters is 400 naming code; the script keeps its code', async () => {
    const s = await create('keeps-code')
    const before = await journalLength()
    const res = await call('PATCH', `${base}/${s.id}`, { code: 'no spaces' })
    expect([res.status, res.body.error_details]).toEqual([400, { field: 'code' }])
    expect((await call('GET', `${base}/${s.id}`)).body.code).toBe('keeps-code')
    expect(await journalLength()).toBe(before)
  })

  test('PATCH of scriptdata over 4 MB is 400 naming scriptdata; the script keeps its text', async () => {
    const s = await create('grows')
    const before = await journalLength()
    const res = await call('PATCH', `${base}/${s.id}`, { scriptdata: 'x'.repeat(FOUR_MB + 1) })
    expect([res.status, res.body.error_details]).toEqual([400, { field: 'scriptdata' }])
    expect((await call('GET', `${base}/${s.id}`)).body.scriptdata).toBe('log("grows")')
    expect(await journalLength()).toBe(before)
  })

  test('PATCH of an unknown id is 404, nothing journaled', async () => {
    const before = await journalLength()
    const res = await call('PATCH', `${base}/0192a3b4-0000-7000-8000-0000000000fe`, { name: 'x' })
    expect([res.status, res.body.error_code]).toEqual([404, 1404])
    expect(await journalLength()).toBe(before)
  })
})

describe('delete', () => {
  test('DELETE answers 204; the script is then 404 to GET and LOOKUP; the journal records the delete', async () => {
    const s = await create('to-delete')
    const res = await call('DELETE', `${base}/${s.id}`)
    expect([res.status, res.text]).toEqual([204, ''])
    expect((await call('GET', `${base}/${s.id}`)).status).toBe(404)
    expect((await call('LOOKUP', base, 'to-delete')).status).toBe(404)
    expect(await lastJournal()).toMatchObject({ cmdtype: 'delete', objtype: 'svcscript', objid: s.id, obj: s })
  })

  test('the code of a deleted script can be used again', async () => {
    const s = await create('reused')
    await call('DELETE', `${base}/${s.id}`)
    const again = await call('POST', base, script('reused'))
    expect(again.status).toBe(200)
    expect((await call('LOOKUP', base, 'reused')).body).toEqual([again.body.id])
  })

  test('DELETE of an unknown id is 404, nothing journaled', async () => {
    const before = await journalLength()
    const res = await call('DELETE', `${base}/0192a3b4-0000-7000-8000-0000000000fd`)
    expect([res.status, res.body.error_code]).toEqual([404, 1404])
    expect(await journalLength()).toBe(before)
  })
})

describe('access', () => {
  test('a user whose roles grant no svcscripts route gets 403 for every method; nothing changes', async () => {
    const s = await create('guarded')
    const created = await call('POST', '/rest/v1/domain/users', { login: 'plain', pwd: 'plain-Pass1', roles: ['user'] })
    expect(created.status).toBe(200)
    const user = await t.login('scripts.master', 'plain', 'plain-Pass1')
    const before = await journalLength()
    const attempts: [string, string, unknown][] = [
      ['GET', base, undefined],
      ['POST', base, script('intruder')],
      ['LOOKUP', base, 'guarded'],
      ['GET', `${base}/${s.id}`, undefined],
      ['PATCH', `${base}/${s.id}`, { name: 'hijacked' }],
      ['DELETE', `${base}/${s.id}`, undefined],
    ]
    for (const [method, path, body] of attempts) {
      const res = await t.call(method, path, { token: user, body })
      expect([method, path, res.status, res.body.error_code]).toEqual([method, path, 403, 1403])
    }
    expect((await call('GET', `${base}/${s.id}`)).body).toEqual(s)
    expect((await call('LOOKUP', base, 'intruder')).status).toBe(404)
    expect(await journalLength()).toBe(before)
  })

  test('a script of one domain is not found from another', async () => {
    const s = await create('walled')
    await t.createDomain('scripts3.master')
    const other = await t.adminIn('scripts3.master')
    expect((await t.call('GET', `${base}/${s.id}`, { token: other })).status).toBe(404)
    expect((await t.call('LOOKUP', base, { token: other, body: 'walled' })).status).toBe(404)
    expect((await t.call('DELETE', `${base}/${s.id}`, { token: other })).status).toBe(404)
    expect((await call('GET', `${base}/${s.id}`)).status).toBe(200)
  })
})
