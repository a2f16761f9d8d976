// The service-task scheduler across two service instances sharing Redis and the database: a task runs
// on its interval exactly once per period, a restart does not run a period twice, overlap 0 waits for
// the previous run, a disabled task stops running, and a run is a handler while it runs.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { testPrefix } from '../helpers/redis'
import { testService, type TestService } from '../helpers/service'

const prefix = testPrefix()
let a: TestService
let b: TestService
let token: string
const MINUTE = 60_000
beforeAll(async () => {
  a = await testService({ driver: 'remote', kvPrefix: prefix })
  b = await testService({ driver: 'remote', kvPrefix: prefix, dataDir: a.dir, clock: a.clock })
  await a.createDomain('tasks.master')
  token = await a.adminIn('tasks.master')
  // a minute boundary, so periods of 60 s start where the test expects
  a.clock.advance(MINUTE - (a.clock.now() % MINUTE))
})
afterAll(async () => {
  await b.close()
  await a.close()
})

const call = (method: string, path: string, body?: unknown) => a.call(method, path, { token, body })
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')
/** Both instances look for due runs at the same moment. */
const tick = () => Promise.all([a.run('svc-tasks'), b.run('svc-tasks')])

async function runsOf(type: string): Promise<string[]> {
  const filter = encodeURIComponent(JSON.stringify({ type }))
  const res = await call('GET', `/rest/v1/reference/extobjs?filter=${filter}&mask=opts.title&limit=1000`)
  if (!Array.isArray(res.body)) throw new Error(res.text)
  return res.body.map((o: { opts: { title: string } }) => o.opts.title).sort()
}

/** Script runs are real time: waits until `n` runs have written their record. */
async function until(type: string, n: number): Promise<string[]> {
  for (let i = 0; i < 300 && (await runsOf(type)).length < n; i++) await Bun.sleep(10)
  return runsOf(type)
}

test('a regular task runs once per period across both instances, and not again after a restart', async () => {
  const tickScript = `await data.create('/rest/v1/reference/extobjs', { type: 'tick', opts: { title: startparam(2) } })`
  expect(
    (await call('POST', '/rest/v1/service/svcscripts', { code: 'tick', name: 'Tick', scriptdata: tickScript })).status,
  ).toBe(200)
  const start = a.clock.now()
  const task = await call('POST', '/rest/v1/service/svctasks', {
    name: 'every minute',
    svcscriptcode: 'tick',
    intervalsec: 60,
    dtstart: iso(start),
  })
  expect(task.status).toBe(200)

  await tick()
  await tick()
  expect(await until('tick', 1)).toEqual([iso(start)])
  a.clock.advance(30_000)
  await tick()
  a.clock.advance(30_000)
  await tick()
  await tick()
  expect(await until('tick', 2)).toEqual([iso(start), iso(start + MINUTE)])

  // a restarted instance finds the period claimed (stopped, not closed: close would clear the shared Redis prefix)
  await b.service.stop()
  b = await testService({ driver: 'remote', kvPrefix: prefix, dataDir: a.dir, clock: a.clock })
  await tick()
  await Bun.sleep(50)
  expect(await runsOf('tick')).toHaveLength(2)

  // disabled: no further runs
  expect((await call('PATCH', `/rest/v1/service/svctasks/${task.body.id}`, { isenabled: 0 })).status).toBe(200)
  a.clock.advance(MINUTE)
  await tick()
  await Bun.sleep(50)
  expect(await runsOf('tick')).toHaveLength(2)
})

test('overlap 0 waits for the previous run; a run is listed as a handler while it runs', async () => {
  const slow = `await data.create('/rest/v1/reference/extobjs', { type: 'slow', opts: { title: startparam(2) } }); await sleep(600000)`
  await call('POST', '/rest/v1/service/svcscripts', { code: 'slow', name: 'Slow', scriptdata: slow })
  const start = a.clock.now() - (a.clock.now() % MINUTE)
  await call('POST', '/rest/v1/service/svctasks', {
    name: 'slow',
    svcscriptcode: 'slow',
    intervalsec: 60,
    overlap: 0,
    dtstart: iso(start),
  })
  await tick()
  expect(await until('slow', 1)).toHaveLength(1)
  const running = (await call('GET', '/rest/v1/service/svcscript_runtimes')).body
  expect(running).toEqual([expect.objectContaining({ code: 'slow', name: 'Slow' })])

  a.clock.advance(MINUTE)
  await tick()
  await Bun.sleep(50)
  expect(await runsOf('slow')).toHaveLength(1) // the first still runs

  expect((await call('DELETE', `/rest/v1/service/svcscript_runtimes/${running[0].id}`)).status).toBe(204)
  for (let i = 0; i < 100 && (await call('GET', '/rest/v1/service/svcscript_runtimes')).body.length; i++)
    await Bun.sleep(10)
  a.clock.advance(MINUTE)
  await tick()
  expect(await until('slow', 2)).toHaveLength(2)
  for (const h of (await call('GET', '/rest/v1/service/svcscript_runtimes')).body)
    await call('DELETE', `/rest/v1/service/svcscript_runtimes/${h.id}`)
})

test('a handler started on one instance is listed and stopped from the other (pub/sub to its node)', async () => {
  // node records live NODE_TTL_MS of real time and nothing beats here on its own: both are renewed,
  // so the earlier tests' length on a slow machine cannot make a look gone and place the handler on b
  await Promise.all([a.run('node-heartbeat'), b.run('node-heartbeat')])
  const tokenB = await b.adminIn('tasks.master')
  await call('POST', '/rest/v1/service/svcscripts', { code: 'waits', name: 'Waits', scriptdata: 'await sleep(600000)' })
  const started = await call('POST', '/rest/v1/service/svcscript_runtimes', { code: 'waits' })
  expect(started.body.node).toBe(a.config.nodeName)
  const listedOnB = await b.call('GET', '/rest/v1/service/svcscript_runtimes', { token: tokenB })
  expect(listedOnB.body).toEqual([expect.objectContaining({ id: started.body.id, node: a.config.nodeName })])
  expect(
    (await b.call('DELETE', `/rest/v1/service/svcscript_runtimes/${started.body.id}`, { token: tokenB })).status,
  ).toBe(204)
  let ended = { status: 'running' }
  for (let i = 0; i < 100 && ended.status === 'running'; i++) {
    await Bun.sleep(10)
    ended = (await b.call('GET', `/rest/v1/service/svcscript_runtimes/${started.body.id}`, { token: tokenB })).body
  }
  expect(ended).toMatchObject({ status: 'stopped', node: a.config.nodeName })
})
