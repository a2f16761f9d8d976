// /rest/v1/master/borderrules and the rule checker: a master-domain collection over HTTP.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
const base = '/rest/v1/master/borderrules'
const check = '/rest/v1/master/borderrules_check'
beforeAll(async () => {
  t = await testService()
  token = await t.login('master', 'admin', ADMIN_PASSWORD)
})
afterAll(() => t.close())

const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token, body })
const row = async (id: string) => {
  const r = await t.deps.db.get('SELECT doc FROM borderrules WHERE domain = ? AND id = ?', [t.master.id, id])
  return r && JSON.parse(r[0] as string)
}
const lastJournal = async () => (await t.journal(t.master.id)).at(-1)!

/** The original documentation's example, less the id and times. */
const EXAMPLE = {
  enabled: 1,
  priority: 91,
  site: '*',
  service: 'sip',
  domain: 'docs[.]rootdomain[.]ru',
  username: '',
  useragent: '',
  remoteipmask: '0.0.0.0/0',
  action: 'allow',
  opts: { title: '', comment: '' },
}

describe('CRUD', () => {
  test('create, read, list, lookup, patch, delete: responses, rows and journal', async () => {
    const created = await call('POST', base, EXAMPLE)
    expect(created.status).toBe(200)
    const r = created.body
    expect(r).toEqual({ id: r.id, ...EXAMPLE, ext: { ct: r.ext.ct, lwt: r.ext.ct } })
    expect(await row(r.id)).toEqual(r)
    expect(await lastJournal()).toMatchObject({ cmdtype: 'create', objtype: 'borderrule', objid: r.id, obj: r })

    expect((await call('GET', `${base}/${r.id}`)).body).toEqual(r)
    expect((await call('GET', `${base}/${r.id}?mask=id,action&flat=true`)).body).toEqual({ id: r.id, action: 'allow' })
    const { opts: _opts, ext, ...listed } = r
    expect((await call('GET', base)).body).toEqual([
      { ...listed, opts: { title: '' }, ext: { lwt: ext.lwt, ct: ext.ct } },
    ])
    expect((await call('LOOKUP', base, r.id)).body).toEqual([r.id])

    t.clock.advance(1000)
    const patched = await call('PATCH', `${base}/${r.id}`, { priority: 7, action: 'drop', opts: { comment: null } })
    expect(patched.status).toBe(200)
    const after = {
      ...r,
      priority: 7,
      action: 'drop',
      opts: { title: '', comment: '' }, // comment: null returns it to its default
      ext: { ...r.ext, lwt: patched.body.ext.lwt },
    }
    expect(patched.body).toEqual(after)
    expect(after.ext.lwt > r.ext.lwt).toBe(true)
    expect(await row(r.id)).toEqual(after)
    expect(await lastJournal()).toMatchObject({ cmdtype: 'update', objtype: 'borderrule', objid: r.id, obj: after })

    expect((await call('DELETE', `${base}/${r.id}`)).status).toBe(204)
    expect(await row(r.id)).toBeUndefined()
    expect(await lastJournal()).toMatchObject({ cmdtype: 'delete', objtype: 'borderrule', objid: r.id })
    expect((await call('GET', `${base}/${r.id}`)).status).toBe(404)
    expect((await call('DELETE', `${base}/${r.id}`)).status).toBe(404)
    expect((await call('PATCH', `${base}/${r.id}`, { priority: 1 })).status).toBe(404)
  })

  test('defaults: enabled 1, site *, service sip, empty patterns and mask, action allow; members in the documented order', async () => {
    const res = await call('POST', base, { priority: 3 })
    expect(res.status).toBe(200)
    const { id, ext } = res.body
    expect(res.body).toEqual({
      id,
      enabled: 1,
      priority: 3,
      site: '*',
      service: 'sip',
      domain: '',
      username: '',
      useragent: '',
      remoteipmask: '',
      action: 'allow',
      opts: { title: '', comment: '' },
      ext,
    })
    expect(Object.keys(res.body)).toEqual([
      'id',
      'enabled',
      'priority',
      'site',
      'service',
      'domain',
      'username',
      'useragent',
      'remoteipmask',
      'action',
      'opts',
      'ext',
    ])
    await call('DELETE', `${base}/${id}`)
  })

  test('a client may choose the id; LOOKUP finds ids only (404 1404 "lookup failed" otherwise)', async () => {
    const id = '0190a0b0-0000-7000-8000-000000000001'
    expect((await call('POST', base, { id, priority: 1, action: 'allow' })).body.id).toBe(id)
    expect((await call('LOOKUP', base, id.toUpperCase())).body).toEqual([id])
    for (const key of ['0190a0b0-0000-7000-8000-000000000002', 'allow', 1]) {
      const res = await call('LOOKUP', base, key)
      expect([key, res.status, res.body]).toEqual([key, 404, { error_code: 1404, error_message: 'lookup failed' }])
    }
    await call('DELETE', `${base}/${id}`)
  })

  test('lists filter and order on the rule fields (domain is the pattern, not the tenant)', async () => {
    const a = (await call('POST', base, { priority: 20, action: 'deny', domain: 'a[.]example' })).body
    const b = (await call('POST', base, { priority: 10, action: 'allow', enabled: 0 })).body
    const filter = encodeURIComponent(JSON.stringify({ domain: 'a[.]example' }))
    expect((await call('GET', `${base}?filter=${filter}&mask=id`)).body).toEqual([{ id: a.id }])
    expect((await call('GET', `${base}?order=["priority"]&mask=id,priority,enabled`)).body).toEqual([
      { id: b.id, enabled: 0, priority: 10 },
      { id: a.id, enabled: 1, priority: 20 },
    ])
    expect((await call('GET', `${base}?mask=opts.comment`)).status).toBe(400) // beyond the list fields
    for (const r of [a, b]) await call('DELETE', `${base}/${r.id}`)
  })
})

describe('invalid fields: 400 naming the field, on create and on patch (the rule unchanged)', () => {
  const valid = { priority: 50, action: 'deny', remoteipmask: '10.0.0.0/8', domain: 'x[.]example' }
  // [field, value]; undefined removes the field (create only)
  const cases: [field: string, value: unknown][] = [
    ['enabled', 2],
    ['enabled', true],
    ['enabled', '1'],
    ['priority', undefined],
    ['priority', 1.5],
    ['priority', '5'],
    ['priority', null],
    ['site', 5],
    ['site', 's'.repeat(256)],
    ['service', ''],
    ['service', 7],
    ['action', 'reject'],
    ['action', 'ALLOW'],
    ['domain', '('],
    ['domain', 'a'.repeat(256)],
    ['domain', 5],
    ['username', '[abc'],
    ['useragent', '*scanner'],
    ['useragent', 'a)|(b'],
    ['useragent', '(a+)+$'],
    ['domain', '([a-z]+[.])*example[.]com'],
    ['username', '(a|ab)*'],
    ['remoteipmask', '10.0.0.0/33'],
    ['remoteipmask', '::/129'],
    ['remoteipmask', '1.2.3'],
    ['remoteipmask', '1.2.3.4+'],
    ['remoteipmask', '255.255.255.250+10'],
    ['remoteipmask', 'abc'],
    ['remoteipmask', '10.0.0.0/'],
    ['remoteipmask', '10.0.0.0/ 8'],
    ['remoteipmask', '10.0.0.1-10.0.0.9'],
    ['remoteipmask', '*'],
    ['remoteipmask', 167772161],
    ['opts.color', 'red'],
    ['nope', 1],
  ]
  const bodyWith = (field: string, value: unknown) => {
    if (field.startsWith('opts.')) return { opts: { [field.slice(5)]: value } }
    return { [field]: value }
  }

  test('create', async () => {
    for (const [field, value] of cases) {
      const body: Record<string, unknown> = { ...valid, ...bodyWith(field, value) }
      if (value === undefined) delete body[field]
      const res = await call('POST', base, body)
      expect([field, value, res.status, res.body.error_details]).toEqual([field, value, 400, { field }])
    }
    expect((await call('GET', base)).body).toEqual([])
  })

  test('patch', async () => {
    const rule = (await call('POST', base, valid)).body
    const journaled = (await t.journal(t.master.id)).length
    for (const [field, value] of cases) {
      if (value === undefined) continue
      const res = await call('PATCH', `${base}/${rule.id}`, bodyWith(field, value))
      expect([field, value, res.status, res.body.error_details]).toEqual([field, value, 400, { field }])
    }
    expect((await call('PATCH', `${base}/${rule.id}`, { id: '0190a0b0-0000-7000-8000-00000000000f' })).status).toBe(400)
    expect(await row(rule.id)).toEqual(rule)
    expect((await t.journal(t.master.id)).length).toBe(journaled)
    await call('DELETE', `${base}/${rule.id}`)
  })

  test('the message says why a pattern or a mask is refused', async () => {
    const pattern = await call('POST', base, { ...valid, domain: '(' })
    expect(pattern.body.error_message).toStartWith('domain: not a valid regular expression')
    const mask = await call('POST', base, { ...valid, remoteipmask: '1.2.3' })
    expect(mask.body.error_message).toContain('CIDR')
  })
})

describe('outside the master domain', () => {
  test('every endpoint, the checker included, is 403 before any lookup', async () => {
    const domain = await t.createDomain('edge.master')
    await t.createUser(domain.id, 'wadmin', 'wadmin-Pass1', ['admin'])
    const others = {
      'master admin switched into a working domain': await t.adminIn('edge.master'),
      'working-domain admin': await t.login('edge.master', 'wadmin', 'wadmin-Pass1'),
    }
    const rule = (await call('POST', base, { priority: 1, action: 'deny' })).body
    const missing = '0190a0b0-0000-7000-8000-0000000000ff'
    const calls: [string, string, unknown?][] = [
      ['GET', base],
      ['POST', base, { priority: 2, action: 'allow' }],
      ['LOOKUP', base, rule.id],
      ['LOOKUP', base, missing],
      ['GET', `${base}/${rule.id}`],
      ['GET', `${base}/${missing}`],
      ['PATCH', `${base}/${rule.id}`, { priority: 9 }],
      ['DELETE', `${base}/${rule.id}`],
      ['DELETE', `${base}/${missing}`],
      ['GET', `${check}?ip=10.0.0.1`],
      ['GET', check],
    ]
    for (const [who, other] of Object.entries(others))
      for (const [method, path, body] of calls) {
        const res = await t.call(method, path, { token: other, body })
        expect([who, method, path, res.status, res.body.error_message]).toEqual([
          who,
          method,
          path,
          403,
          'this endpoint is served in the master domain only',
        ])
      }
    expect(await row(rule.id)).toEqual(rule)
    await call('DELETE', `${base}/${rule.id}`)
  })

  test('a master-domain user without a role granting it is refused too', async () => {
    await t.createUser(t.master.id, 'plain', 'plain-Pass1', ['user'])
    const plain = await t.login('master', 'plain', 'plain-Pass1')
    for (const path of [base, `${check}?ip=10.0.0.1`])
      expect((await t.call('GET', path, { token: plain })).status).toBe(403)
  })
})

describe('the rule checker', () => {
  const ask = async (query: string) => call('GET', `${check}?${query}`)
  const rules: Record<string, { id: string; action: string }> = {}

  beforeAll(async () => {
    for (const r of (await call('GET', `${base}?mask=id&limit=1000`)).body) await call('DELETE', `${base}/${r.id}`)
  })

  test('no rules: allow', async () => {
    expect((await ask('ip=10.0.0.1')).body).toEqual({ action: 'allow', check: null, rule: null })
  })

  test('the first enabled matching rule by priority answers with the whole rule', async () => {
    const make = async (name: string, body: Record<string, unknown>) => {
      const res = await call('POST', base, body)
      expect(res.status).toBe(200)
      rules[name] = res.body
    }
    await make('net', { priority: 10, remoteipmask: '10.0.0.0/8', action: 'deny' })
    await make('scanner', { priority: 5, remoteipmask: '10.0.0.250+10', useragent: 'friendly-scanner', action: 'drop' })
    await make('off', { priority: 1, enabled: 0, action: 'deny' })
    await make('site2', { priority: 20, site: 'site2', action: 'deny' })
    await make('docs', { priority: 7, username: 'abcde', domain: 'docs[.]rootdomain[.]ru', action: 'allow' })
    await make('v6', { priority: 8, remoteipmask: '2001:db8::/32', action: 'drop' })

    // net, site2 and v6 filter by address alone: they decide in the first check (check: address)
    const cases: [query: string, rule: string | null, check?: 'address' | 'all'][] = [
      ['ip=10.1.2.3', 'net', 'address'],
      ['ip=::ffff:10.1.2.3', 'net', 'address'],
      // the scanner rule has a higher priority, but net denies 10.0.0.0/8 in the first check
      ['ip=10.0.1.4&useragent=Friendly-Scanner', 'net', 'address'],
      ['ip=10.0.1.4', 'net', 'address'],
      ['ip=11.0.0.1', null],
      ['ip=11.0.0.1&site=site2', 'site2', 'address'],
      [`ip=11.0.0.1&site=${t.config.site}`, null],
      ['ip=11.0.0.1&username=ABCDE&domain=docs.rootdomain.ru', 'docs', 'all'],
      ['ip=11.0.0.1&username=abcde&domain=www.docs.rootdomain.ru', 'docs', 'all'], // a pattern matches a part
      ['ip=11.0.0.1&username=abcde&domain=docs.example.ru', null],
      ['ip=10.1.2.3&service=ws', null],
      ['ip=2001:db8:0:0::1', 'v6', 'address'],
      ['ip=2001:db9::1', null],
    ]
    for (const [query, name, check] of cases) {
      const res = await ask(query)
      const expected =
        name === null
          ? { action: 'allow', check: null, rule: null }
          : { action: rules[name]!.action, check, rule: rules[name] }
      expect([query, res.status, res.body]).toEqual([query, 200, expected])
    }
  })

  test('enabling a rule and changing priorities change the answer', async () => {
    await call('PATCH', `${base}/${rules.off!.id}`, { enabled: 1 })
    expect((await ask('ip=10.1.2.3')).body.rule.id).toBe(rules.off!.id)
    await call('PATCH', `${base}/${rules.off!.id}`, { priority: 10 }) // ties with net: the smaller id wins
    const [first] = [rules.off!.id, rules.net!.id].sort()
    expect((await ask('ip=10.1.2.3')).body.rule.id).toBe(first)
  })

  test('ip is required and must be an address; unknown parameters are refused', async () => {
    const bad: [query: string, field: string][] = [
      ['', 'ip'],
      ['ip=', 'ip'],
      ['ip=abc', 'ip'],
      ['ip=10.0.0.0/8', 'ip'],
      ['ip=10.0.0.1+1', 'ip'],
      ['ip=%2010.0.0.1', 'ip'],
      ['useragent=x', 'ip'],
      ['ip=10.0.0.1&mask=id', 'mask'],
      [`ip=10.0.0.1&useragent=${'a'.repeat(1025)}`, 'useragent'],
    ]
    for (const [query, field] of bad) {
      const res = await ask(query)
      expect([query, res.status, res.body.error_details]).toEqual([query, 400, { field }])
    }
  })
  test('a slow pattern the check at create lets through is cut off (422 naming the rules); the service answers meanwhile', async () => {
    for (const r of (await call('GET', `${base}?mask=id&limit=1000`)).body) await call('DELETE', `${base}/${r.id}`)
    // polynomial, of a degree the static check passes (two `.*` in a row, matched anywhere: cubic),
    // each some 100 ms on the longest value: together the time limit stops them
    const made = await call('POST', base, { priority: 1, useragent: '.*.*x', action: 'deny' })
    expect(made.status).toBe(200)
    for (const c of 'yzw') expect((await call('POST', base, { priority: 2, useragent: `.*.*${c}` })).status).toBe(200)
    const started = performance.now()
    const done: string[] = []
    const slow = ask(`ip=10.0.0.1&useragent=${'a'.repeat(1024)}`).then((r) => {
      done.push('check')
      return r
    })
    // the main thread is free: a request sent meanwhile is answered before the check gives up
    const health = t.call('GET', '/healthz').then((r) => {
      done.push('healthz')
      return r
    })
    expect((await health).status).toBe(200)
    const res = await slow
    expect(done).toEqual(['healthz', 'check'])
    expect([res.status, res.body.error_details]).toEqual([422, { field: 'rules' }])
    expect(performance.now() - started).toBeLessThan(2000)
    // the next check runs on a new thread
    await call('PATCH', `${base}/${made.body.id}`, { useragent: 'a+' })
    expect((await ask(`ip=10.0.0.1&useragent=${'a'.repeat(40)}`)).body.rule.id).toBe(made.body.id)
  })
})
