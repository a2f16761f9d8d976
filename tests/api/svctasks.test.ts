// /rest/v1/service/svctasks (any domain) and the domain setting working_hours. Each write is checked
// in the response, the row and the journal; every field's refusal names it, on create and on patch.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
let domain: { id: string; name: string }
const base = '/rest/v1/service/svctasks'
beforeAll(async () => {
  t = await testService()
  domain = await t.createDomain('tasks.master')
  token = await t.adminIn('tasks.master')
})
afterAll(() => t.close())

const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token, body })
const row = async (id: string) => {
  const r = await t.deps.db.get('SELECT doc FROM svctasks WHERE domain = ? AND id = ?', [domain.id, id])
  return r && JSON.parse(r[0] as string)
}
/** A task as stored: its answer less the computed next_run. */
const storedOf = ({ next_run: _, ...stored }: Record<string, unknown>) => stored
const journal = () => t.journal(domain.id)
const lastJournal = async () => (await journal()).at(-1)!
const remove = async (id: string) => expect((await call('DELETE', `${base}/${id}`)).status).toBe(204)

/** The original documentation's example, less the id and times (its script does not exist here). */
const EXAMPLE = {
  name: 'Debtor calls',
  isenabled: 0,
  svcscriptcode: 'dialByCallList',
  sitemode: 'all',
  sites: '',
  isregular: 1,
  overlap: 1,
  intervalsec: 3600,
  dtstart: '2019-02-20T08:00:00Z',
  dtstop: '2020-02-20T08:00:00Z',
  schedule: 'work',
  periods: [],
  opts: { title: '', comment: '' },
}
const MINIMAL = { name: 'Nightly', svcscriptcode: 'cleardata' }

describe('CRUD', () => {
  test('create, read, list, lookup, patch, delete: responses, rows and journal', async () => {
    const created = await call('POST', base, EXAMPLE)
    expect(created.status).toBe(200)
    const r = created.body
    // disabled, and its dtstop long passed: no next run
    expect(r).toEqual({ id: r.id, ...EXAMPLE, ext: { ct: r.ext.ct, lwt: r.ext.ct }, next_run: null })
    expect(await row(r.id)).toEqual(storedOf(r))
    expect(await lastJournal()).toMatchObject({ cmdtype: 'create', objtype: 'svctask', objid: r.id, obj: storedOf(r) })

    expect((await call('GET', `${base}/${r.id}`)).body).toEqual(r)
    expect((await call('GET', `${base}/${r.id}?mask=id,sites,periods&flat=true`)).body).toEqual({
      id: r.id,
      sites: '',
      periods: [],
    })
    expect((await call('LOOKUP', base, r.id)).body).toEqual([r.id])

    t.clock.advance(1000)
    const changes = { isenabled: 1, schedule: 'periods', periods: [{ days: [6, 7], from: '10:00', to: '12:00' }] }
    const patched = await call('PATCH', `${base}/${r.id}`, { ...changes, opts: { comment: null } })
    expect(patched.status).toBe(200)
    const after = { ...r, ...changes, opts: { title: '', comment: '' }, ext: { ...r.ext, lwt: patched.body.ext.lwt } }
    expect(patched.body).toEqual(after)
    expect(after.ext.lwt > r.ext.lwt).toBe(true)
    expect(await row(r.id)).toEqual(storedOf(after))
    expect(await lastJournal()).toMatchObject({
      cmdtype: 'update',
      objtype: 'svctask',
      objid: r.id,
      obj: storedOf(after),
    })

    await remove(r.id)
    expect(await row(r.id)).toBeUndefined()
    expect(await lastJournal()).toMatchObject({ cmdtype: 'delete', objtype: 'svctask', objid: r.id })
    expect((await call('GET', `${base}/${r.id}`)).status).toBe(404)
    expect((await call('DELETE', `${base}/${r.id}`)).status).toBe(404)
    expect((await call('PATCH', `${base}/${r.id}`, { name: 'x' })).status).toBe(404)
  })

  test('defaults, in the order of the original example; the script need not exist', async () => {
    const res = await call('POST', base, MINIMAL)
    expect(res.status).toBe(200)
    const { id, ext } = res.body
    expect(res.body).toEqual({
      id,
      name: 'Nightly',
      isenabled: 1,
      svcscriptcode: 'cleardata',
      sitemode: 'all',
      sites: '',
      isregular: 1,
      overlap: 0,
      intervalsec: 3600,
      dtstart: '',
      dtstop: '',
      schedule: 'all',
      periods: [],
      opts: { title: '', comment: '' },
      ext,
      // hourly from the epoch at any time: the next hour
      next_run: new Date(Math.floor(t.clock.now() / 3_600_000 + 1) * 3_600_000).toISOString().replace('.000Z', 'Z'),
    })
    expect(Object.keys(res.body)).toEqual(['id', ...Object.keys(EXAMPLE), 'ext', 'next_run'])
    await remove(id)
  })

  test('times are stored in UTC without fractions; sites as a string, from either form', async () => {
    const cases: [input: Record<string, unknown>, stored: Record<string, unknown>][] = [
      [
        { dtstart: '2026-03-02T11:00:00.750+03:00', dtstop: '2026-03-02t08:00:01z' },
        { dtstart: '2026-03-02T08:00:00Z', dtstop: '2026-03-02T08:00:01Z' },
      ],
      [{ sites: ' site1 , site2' }, { sites: 'site1,site2' }],
      [{ sites: ['site2', ' site1'] }, { sites: 'site2,site1' }],
      [{ sites: [] }, { sites: '' }],
      [
        { sitemode: 'firstsite', sites: 'msk' },
        { sitemode: 'firstsite', sites: 'msk' },
      ],
      [
        { isregular: 0, dtstart: '2026-03-02T08:00:00Z' },
        { isregular: 0, dtstart: '2026-03-02T08:00:00Z', dtstop: '' },
      ],
      [
        { schedule: 'periods', periods: [{ from: '22:00', to: '24:00' }] },
        { periods: [{ from: '22:00', to: '24:00' }] },
      ],
    ]
    for (const [input, stored] of cases) {
      const res = await call('POST', base, { ...MINIMAL, ...input })
      expect([input, res.status, res.body]).toEqual([input, 200, expect.objectContaining(stored)])
      expect(await row(res.body.id)).toMatchObject(stored)
      await remove(res.body.id)
    }
  })

  test('LOOKUP finds ids only (404 1404 "lookup failed" otherwise); a client may choose the id', async () => {
    const id = '0190a0b0-0000-7000-8000-0000000000a1'
    expect((await call('POST', base, { id, ...MINIMAL })).body.id).toBe(id)
    expect((await call('LOOKUP', base, id.toUpperCase())).body).toEqual([id])
    for (const key of ['0190a0b0-0000-7000-8000-0000000000a2', 'Nightly', 'cleardata', 1]) {
      const res = await call('LOOKUP', base, key)
      expect([key, res.status, res.body]).toEqual([key, 404, { error_code: 1404, error_message: 'lookup failed' }])
    }
    await remove(id)
  })

  test("the list shows the spec's list fields only; masks beyond them are refused", async () => {
    const task = (await call('POST', base, { ...EXAMPLE, sites: 'a,b', opts: { title: 'T' } })).body
    const listed = (await call('GET', base)).body
    expect(listed).toEqual([
      {
        id: task.id,
        name: 'Debtor calls',
        isenabled: 0,
        svcscriptcode: 'dialByCallList',
        sitemode: 'all',
        isregular: 1,
        overlap: 1,
        intervalsec: 3600,
        dtstart: '2019-02-20T08:00:00Z',
        dtstop: '2020-02-20T08:00:00Z',
        schedule: 'work',
        ext: { lwt: task.ext.lwt, ct: task.ext.ct },
      },
    ])
    for (const mask of ['sites', 'periods', 'opts.title'])
      expect([mask, (await call('GET', `${base}?mask=${mask}`)).status]).toEqual([mask, 400])
    const filter = encodeURIComponent(JSON.stringify({ svcscriptcode: 'dialByCallList', isenabled: 0 }))
    expect((await call('GET', `${base}?filter=${filter}&mask=id,name`)).body).toEqual([
      { id: task.id, name: 'Debtor calls' },
    ])
    await remove(task.id)
  })

  test('served in the master domain too (as the scripts)', async () => {
    const master = await t.login('master', 'admin', ADMIN_PASSWORD)
    const res = await t.call('POST', base, { token: master, body: MINIMAL })
    expect(res.status).toBe(200)
    expect((await t.call('GET', base, { token: master })).body.map((x: { id: string }) => x.id)).toEqual([res.body.id])
    expect((await t.journal(t.master.id)).at(-1)).toMatchObject({ cmdtype: 'create', objtype: 'svctask' })
    expect((await call('GET', `${base}/${res.body.id}`)).status).toBe(404) // another domain's task
  })
})

describe('invalid fields: 400 naming the field, on create and on patch (the task unchanged)', () => {
  const window = { from: '09:00', to: '10:00' }
  // [field in the body, value, field named by the error (default: the body field)]; undefined leaves it out
  const cases: [field: string, value: unknown, named?: string][] = [
    ['name', undefined],
    ['name', ''],
    ['name', '   '],
    ['name', 5],
    ['name', 'n'.repeat(256)],
    ['svcscriptcode', undefined],
    ['svcscriptcode', ''],
    ['svcscriptcode', 'has space'],
    ['svcscriptcode', 7],
    ['isenabled', 2],
    ['isenabled', true],
    ['isenabled', '1'],
    ['isregular', -1],
    ['isregular', null],
    ['overlap', 0.5],
    ['intervalsec', 0],
    ['intervalsec', -60],
    ['intervalsec', 1.5],
    ['intervalsec', '3600'],
    ['intervalsec', 366 * 86400 + 1],
    ['intervalsec', null],
    ['dtstart', '2019-02-20'],
    ['dtstart', '2019-02-30T08:00:00Z'],
    ['dtstart', '2019-02-20T08:00:00'],
    ['dtstart', '2019-02-20 08:00:00Z'],
    ['dtstart', 1550649600],
    ['dtstop', 'tomorrow'],
    ['dtstop', null],
    ['sitemode', 'onelisted'],
    ['sitemode', 'alllisted', 'sites'], // the listed modes need sites
    ['sitemode', 'anylisted', 'sites'],
    ['sitemode', 'ALL'],
    ['sitemode', 1],
    ['sites', 5],
    ['sites', { a: 1 }],
    ['sites', 'a,,b'],
    ['sites', 'a,'],
    ['sites', 'a,b,a'],
    ['sites', ['a', 'b,c']],
    ['sites', ['']],
    ['sites', [5]],
    ['sites', 's'.repeat(65)],
    ['sites', Array.from({ length: 101 }, (_, i) => `s${i}`)],
    ['schedule', 'never'],
    ['schedule', 'WORK'],
    ['schedule', 'after'],
    ['periods', 'weekdays'],
    ['periods', {}],
    ['periods', Array.from({ length: 101 }, () => window)],
    ['periods', ['x'], 'periods.0'],
    ['periods', [{ to: '10:00' }], 'periods.0.from'],
    ['periods', [{ from: '10:00', to: '09:00' }], 'periods.0.to'],
    ['periods', [{ from: '10:00', to: '10:00' }], 'periods.0.to'],
    ['periods', [{ from: '10:00', to: '24:01' }], 'periods.0.to'],
    ['periods', [{ from: '24:00', to: '24:00' }], 'periods.0.from'],
    ['periods', [{ from: '9:00', to: '10:00' }], 'periods.0.from'],
    ['periods', [window, { ...window, days: [] }], 'periods.1.days'],
    ['periods', [{ ...window, days: [0] }], 'periods.0.days.0'],
    ['periods', [{ ...window, days: [8] }], 'periods.0.days.0'],
    ['periods', [{ ...window, days: [1, 1] }], 'periods.0.days'],
    ['periods', [{ ...window, tz: 'UTC' }], 'periods.0.tz'],
    ['opts', { color: 'red' }, 'opts.color'],
    ['nope', 1],
  ]

  test('create', async () => {
    for (const [field, value, named = field] of cases) {
      const body: Record<string, unknown> = { ...MINIMAL, [field]: value }
      if (value === undefined) delete body[field]
      const res = await call('POST', base, body)
      expect([field, value, res.status, res.body.error_details]).toEqual([field, value, 400, { field: named }])
    }
    expect((await call('GET', base)).body).toEqual([])
  })

  test('patch', async () => {
    const task = (await call('POST', base, MINIMAL)).body
    const journaled = (await journal()).length
    for (const [field, value, named = field] of cases) {
      if (value === undefined) continue
      const res = await call('PATCH', `${base}/${task.id}`, { [field]: value })
      expect([field, value, res.status, res.body.error_details]).toEqual([field, value, 400, { field: named }])
    }
    expect((await call('PATCH', `${base}/${task.id}`, { id: '0190a0b0-0000-7000-8000-00000000000f' })).status).toBe(400)
    expect(await row(task.id)).toEqual(storedOf(task))
    expect((await journal()).length).toBe(journaled)
    await remove(task.id)
  })

  test('checks across fields, on create and on the whole task after a patch', async () => {
    const created: [body: Record<string, unknown>, named: string][] = [
      [{ isregular: 0 }, 'dtstart'],
      [{ isregular: 0, dtstart: '', dtstop: '2026-03-02T08:00:00Z' }, 'dtstart'],
      [{ dtstart: '2026-03-02T10:00:00Z', dtstop: '2026-03-02T10:00:00Z' }, 'dtstop'],
      [{ dtstart: '2026-03-02T10:00:00Z', dtstop: '2026-03-02T12:59:59+03:00' }, 'dtstop'],
      [{ schedule: 'periods' }, 'periods'],
      [{ schedule: 'periods', periods: [] }, 'periods'],
    ]
    for (const [body, named] of created) {
      const res = await call('POST', base, { ...MINIMAL, ...body })
      expect([body, res.status, res.body.error_details]).toEqual([body, 400, { field: named }])
    }

    const bounded = { dtstart: '2026-03-02T10:00:00Z', dtstop: '2026-03-03T10:00:00Z' }
    const task = (await call('POST', base, { ...MINIMAL, ...bounded })).body
    const journaled = (await journal()).length
    const patches: [body: Record<string, unknown>, named: string][] = [
      [{ dtstop: '2026-03-01T00:00:00Z' }, 'dtstop'],
      [{ dtstart: '2026-03-04T00:00:00Z' }, 'dtstop'],
      [{ isregular: 0, dtstart: '' }, 'dtstart'],
      [{ schedule: 'periods' }, 'periods'],
    ]
    for (const [body, named] of patches) {
      const res = await call('PATCH', `${base}/${task.id}`, body)
      expect([body, res.status, res.body.error_details, res.body.error_message]).toEqual([
        body,
        400,
        { field: named },
        expect.stringContaining(named),
      ])
    }
    expect(await row(task.id)).toEqual(storedOf(task))
    expect((await journal()).length).toBe(journaled)

    // made consistent together, then each half alone cannot undo it
    const periods = [{ days: [1, 2, 3, 4, 5], from: '08:00', to: '12:30' }]
    expect((await call('PATCH', `${base}/${task.id}`, { schedule: 'periods', periods })).status).toBe(200)
    expect((await call('PATCH', `${base}/${task.id}`, { periods: [] })).body.error_details).toEqual({
      field: 'periods',
    })
    expect((await call('PATCH', `${base}/${task.id}`, { dtstop: '' })).body.dtstop).toBe('')
    expect((await call('PATCH', `${base}/${task.id}`, { isregular: 0 })).body).toMatchObject({
      isregular: 0,
      ...bounded,
      dtstop: '',
    })
    await remove(task.id)
  })
})

describe('the domain setting working_hours', () => {
  const path = '/rest/v1/domain/settings/working_hours'
  const DEFAULT = { timezone: 'UTC', days: [1, 2, 3, 4, 5], from: '09:00', to: '18:00' }

  test('reads as the default; PATCH merges, answers the whole setting, stores and journals it', async () => {
    expect((await call('GET', path)).body).toEqual({ key: 'working_hours', value: DEFAULT })
    const res = await call('PATCH', path, { value: { timezone: 'Europe/Berlin', days: [1, 2, 3, 4] } })
    const expected = { key: 'working_hours', value: { ...DEFAULT, timezone: 'Europe/Berlin', days: [1, 2, 3, 4] } }
    expect([res.status, res.body]).toEqual([200, expected])
    expect((await call('GET', path)).body).toEqual(expected)
    const stored = await t.deps.db.get('SELECT doc FROM settings WHERE domain = ? AND id = ?', [
      domain.id,
      'working_hours',
    ])
    expect(JSON.parse(stored![0] as string)).toEqual(expected)
    expect(await lastJournal()).toMatchObject({
      cmdtype: 'create',
      objtype: 'setting',
      objid: 'working_hours',
      obj: expected,
    })
    expect((await call('PATCH', path, { value: { to: '24:00' } })).body.value).toEqual({
      ...expected.value,
      to: '24:00',
    })
  })

  test('values are validated, naming the member; a refused value changes nothing', async () => {
    const before = (await call('GET', path)).body
    const journaled = (await journal()).length
    const cases: [value: unknown, named: string][] = [
      [{ timezone: 'Mars/Olympus' }, 'value.timezone'],
      [{ timezone: '' }, 'value.timezone'],
      [{ timezone: 3 }, 'value.timezone'],
      [{ days: [] }, 'value.days'],
      [{ days: [1, 1] }, 'value.days'],
      [{ days: [0] }, 'value.days.0'],
      [{ days: ['mon'] }, 'value.days.0'],
      [{ days: null }, 'value.days'],
      [{ from: '9:00' }, 'value.from'],
      [{ from: '24:00' }, 'value.from'],
      [{ to: '25:00' }, 'value.to'],
      [{ from: '18:00', to: '09:00' }, 'value.to'],
      [{ from: '10:00', to: '10:00' }, 'value.to'],
      [{ lunch: '13:00' }, 'value.lunch'],
      ['09:00-18:00', 'value'],
    ]
    for (const [value, named] of cases) {
      const res = await call('PATCH', path, { value })
      expect([value, res.status, res.body.error_details]).toEqual([value, 400, { field: named }])
    }
    expect((await call('GET', path)).body).toEqual(before)
    expect((await journal()).length).toBe(journaled)
  })

  test("a task's next_run follows its schedule in these hours; it is read-only and never stored", async () => {
    await call('PATCH', path, { value: { timezone: 'UTC', days: [1, 2, 3, 4, 5, 6, 7], from: '00:00', to: '24:00' } })
    const task = (await call('POST', base, { ...MINIMAL, intervalsec: 86_400, schedule: 'afterhours' })).body
    expect(task.next_run).toBeNull() // the hours are all of every day: never after hours
    const midnight = new Date(Math.floor(t.clock.now() / 86_400_000 + 1) * 86_400_000).toISOString()
    const work = (await call('PATCH', `${base}/${task.id}`, { schedule: 'work' })).body
    expect(work.next_run).toBe(midnight.replace('.000Z', 'Z')) // today's run has come: tomorrow's
    expect((await call('GET', `${base}/${task.id}`)).body.next_run).toBe(work.next_run)
    expect((await call('PATCH', `${base}/${task.id}`, { isenabled: 0 })).body.next_run).toBeNull()
    const refused = await call('PATCH', `${base}/${task.id}`, { next_run: midnight })
    expect([refused.status, refused.body.error_details]).toEqual([400, { field: 'next_run' }])
    expect(await row(task.id)).not.toHaveProperty('next_run')
    await remove(task.id)
  })

  test("a task's ETag leaves its next_run out: the clock passing a run does not refuse an If-Match", async () => {
    const task = (await call('POST', base, { ...MINIMAL, isenabled: 1, intervalsec: 60, schedule: 'all' })).body
    const url = `${base}/${task.id}`
    const read = await t.call('GET', url, { token })
    const tag = read.headers.get('etag')!
    t.clock.advance(150_000) // past its next run: the answer's next_run moves, the task did not change
    const later = await t.call('GET', url, { token, headers: { 'if-none-match': tag } })
    expect(later.status).toBe(200) // a text with a live member is answered whole, never 304
    expect(later.body.next_run).not.toBe(read.body.next_run)
    expect(later.headers.get('etag')).toBe(tag)
    const changed = await t.call('PATCH', url, { token, body: { name: 'Renamed' }, headers: { 'if-match': tag } })
    expect(changed.status).toBe(200)
    const stale = await t.call('PATCH', url, { token, body: { name: 'Again' }, headers: { 'if-match': tag } })
    expect(stale.status).toBe(412)
    expect((await t.call('GET', url, { token })).headers.get('etag')).toBe(changed.headers.get('etag'))
    await remove(task.id)
  })
})
