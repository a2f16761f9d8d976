// Where a service task runs: three services on three sites sharing the database and Redis, each
// site mode of the original against them (the run's claim records its site and node), and when:
// the original's example task (schedule work) and afterhours, moved by the shared ManualClock.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { testPrefix } from '../helpers/redis'
import { testService, type TestService } from '../helpers/service'

const prefix = testPrefix()
let a: TestService
let b: TestService
let c: TestService
let token: string
const HOUR = 3_600_000
beforeAll(async () => {
  a = await testService({ driver: 'remote', kvPrefix: prefix, env: { SITE: 's1', NODE_NAME: 'n1' } })
  const same = { driver: 'remote' as const, kvPrefix: prefix, dataDir: a.dir, clock: a.clock }
  b = await testService({ ...same, env: { SITE: 's2', NODE_NAME: 'n2' } })
  c = await testService({ ...same, env: { SITE: 's3', NODE_NAME: 'n3' } })
  await a.createDomain('sites.master')
  token = await a.adminIn('sites.master')
  // Monday 2026-03-02 10:00 UTC: within the default working hours (Mon-Fri 09:00-18:00 UTC)
  a.clock.advance(Date.parse('2026-03-02T10:00:00Z') - a.clock.now())
  const script = { code: 'noop', name: 'Noop', scriptdata: 'const x = 1' }
  expect((await call('POST', '/rest/v1/service/svcscripts', script)).status).toBe(200)
})
afterAll(async () => {
  await c.close()
  await b.close()
  await a.close()
})

const call = (method: string, path: string, body?: unknown) => a.call(method, path, { token, body })
const tick = () => Promise.all([a.run('svc-tasks'), b.run('svc-tasks'), c.run('svc-tasks')])
/**
 * Ticks until `n` claims of the task are there: a run refused for a passing reason (the domain's
 * handlers at their cap while earlier runs, real script threads, end) is tried again on each tick.
 */
async function ticksUntil(task: string, n: number): Promise<void> {
  // bounded by time, not by a count of ticks: on a loaded machine the runs it waits for end slowly
  // (a CI run gave up after 200 ticks, about 4 s, with 2 of 3 claims)
  for (const until = Date.now() + 6000; Date.now() < until; ) {
    await tick()
    if ((await runs(task)).length >= n) return
    await Bun.sleep(10)
  }
}

async function make(body: Record<string, unknown>): Promise<string> {
  const res = await call('POST', '/rest/v1/service/svctasks', { svcscriptcode: 'noop', isenabled: 1, ...body })
  expect(res.status).toBe(200)
  return res.body.id
}

/** The runs of a task: [claim site, node], sorted. */
async function runs(task: string): Promise<[string, string][]> {
  const rows = await a.deps.db.all('SELECT site, node FROM svctask_runs WHERE task = ? ORDER BY node', [task])
  return rows.map((r) => [String(r[0]), String(r[1])])
}

test('each site mode runs a period where it says, once', async () => {
  const all = await make({ name: 'all', sitemode: 'all', sites: 's2' }) // sites is not read by all
  const any = await make({ name: 'any', sitemode: 'any' })
  const alllisted = await make({ name: 'alllisted', sitemode: 'alllisted', sites: 's3,s2,s9' })
  const anylisted = await make({ name: 'anylisted', sitemode: 'anylisted', sites: 's2,s3' })
  const firstsite = await make({ name: 'firstsite', sitemode: 'firstsite', sites: 's3' })
  await tick()
  await tick()
  expect(await runs(all)).toEqual([
    ['s1', 'n1'],
    ['s2', 'n2'],
    ['s3', 'n3'],
  ])
  expect(await runs(alllisted)).toEqual([
    ['s2', 'n2'],
    ['s3', 'n3'],
  ])
  expect(await runs(firstsite)).toEqual([['s1', 'n1']]) // n1's site is first in the cluster's order
  // one run for the period, on whichever node claimed it first, among the sites the mode allows
  const [anyRun] = await runs(any)
  expect([await runs(any), ['n1', 'n2', 'n3']]).toEqual([[['*', anyRun![1]]], expect.arrayContaining([anyRun![1]])])
  const [listedRun] = await runs(anylisted)
  expect((await runs(anylisted)).length).toBe(1)
  expect(['n2', 'n3']).toContain(listedRun![1])
  for (const id of [all, any, alllisted, anylisted, firstsite])
    await call('PATCH', `/rest/v1/service/svctasks/${id}`, { isenabled: 0 })
})

test("the original's example task runs as written within working hours; afterhours outside them", async () => {
  // the create example, less its id and times, with dates moved to now and enabled
  const work = await make({
    name: 'Debtor calls',
    isenabled: 1,
    svcscriptcode: 'noop',
    sitemode: 'all',
    sites: '',
    isregular: 1,
    overlap: 1,
    intervalsec: 3600,
    dtstart: '2026-03-02T08:00:00Z',
    dtstop: '2027-03-02T08:00:00Z',
    schedule: 'work',
    periods: [],
    opts: { title: '', comment: '' },
  })
  const after = await make({ name: 'after hours', sitemode: 'firstsite', intervalsec: 3600, schedule: 'afterhours' })
  const periods = async (task: string) => {
    const rows = await a.deps.db.all('SELECT period FROM svctask_runs WHERE task = ? ORDER BY node', [task])
    return [...new Set(rows.map((r) => String(r[0])))].sort()
  }
  await ticksUntil(work, 3) // Monday 10:00: working hours
  expect(await periods(work)).toEqual(['2026-03-02T10:00:00Z'])
  expect((await runs(work)).length).toBe(3) // on every site
  expect(await periods(after)).toEqual([])
  a.clock.advance(9 * HOUR) // Monday 19:00
  await ticksUntil(after, 1)
  expect(await periods(work)).toEqual(['2026-03-02T10:00:00Z'])
  expect(await periods(after)).toEqual(['2026-03-02T19:00:00Z'])
  a.clock.advance(14 * HOUR) // Tuesday 09:00
  await ticksUntil(work, 6)
  expect(await periods(work)).toEqual(['2026-03-02T10:00:00Z', '2026-03-03T09:00:00Z'])
  expect(await periods(after)).toEqual(['2026-03-02T19:00:00Z'])
}, 30_000) // three waits of up to 6 s each
