// Script handlers end with their domain. Two instances share Redis and the database (a cluster),
// and handlers run on `a`. A deleted domain's handler ends, and a domain created again with its id
// neither lists it nor receives its writes. A domain blocked through `b` (the change reaches `a` over
// pub/sub) ends its handler and starts none of its service tasks. A third instance on another Redis
// prefix hears of no change (a message it missed): its handler's host calls are refused once it
// reads the domain again.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ManualClock } from '~/clock'
import { createLogger } from '~/log'
import { testPrefix } from '../helpers/redis'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

const RUNTIMES = '/rest/v1/service/svcscript_runtimes'
const DOMAINS = '/rest/v1/domain/domains'
const logs: Record<string, unknown>[] = []
const prefix = testPrefix()
let a: TestService
let b: TestService
let masterB: string
let upstream: ReturnType<typeof Bun.serve>
beforeAll(async () => {
  upstream = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json({}) })
  a = await testService({
    driver: 'remote',
    kvPrefix: prefix,
    log: createLogger('info', (line) => logs.push(JSON.parse(line))),
  })
  b = await testService({ driver: 'remote', kvPrefix: prefix, dataDir: a.dir, clock: a.clock })
  masterB = await b.login('master', 'admin', ADMIN_PASSWORD)
})
afterAll(async () => {
  await b.close()
  await a.close()
  upstream.stop(true)
})

const ok = async (res: Promise<{ status: number; text: string; body: any }>, status = 200) => {
  const r = await res
  if (r.status !== status) throw new Error(`${r.status} ${r.text}`)
  return r.body
}
const script = (s: TestService, token: string, code: string, scriptdata: string) =>
  ok(s.call('POST', '/rest/v1/service/svcscripts', { token, body: { code, name: code, scriptdata } }))

/** Polls (scripts run on real time) until `done` answers something other than undefined. */
async function until<T>(what: string, done: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const value = await done()
    if (value !== undefined) return value
    await Bun.sleep(10)
  }
  throw new Error(`${what}: not within 3 s`)
}

/**
 * The nodes' records again (they last NODE_TTL_MS, 4 s, and tests run no schedule): a start placed
 * after them found no svc node in a CI run whose first test took 2.6 s.
 */
const heartbeats = () => Promise.all([a.run('node-heartbeat'), b.run('node-heartbeat')])

const endedLog = (id: string) => logs.find((l) => l.msg === 'script handler ended' && l.handler === id)

test('a deleted domain ends its handler on its node; a domain made again with its id has none of it', async () => {
  const id = crypto.randomUUID()
  const masterA = await a.login('master', 'admin', ADMIN_PASSWORD)
  await ok(a.call('POST', DOMAINS, { token: masterA, body: { id, name: 'gone.master' } }))
  const token = await a.adminIn('gone.master')
  await script(
    a,
    token,
    'writer',
    // refusals do not stop it: only its end does
    `while (true) { try { await data.create('/rest/v1/reference/extobjs', { type: 'old' }) } catch {} await sleep(5) }`,
  )
  await heartbeats()
  const started = await ok(a.call('POST', RUNTIMES, { token, body: { code: 'writer' } }))
  expect(started.node).toBe(a.config.nodeName)
  const written = () => a.call('GET', '/rest/v1/reference/extobjs?mask=id&filter={"type":"old"}', { token })
  await until('a first write', async () => ((await written()).body.length ? true : undefined))

  // on the handler's node: a write another process admitted before the deletion may still commit after it
  await ok(a.call('DELETE', `${DOMAINS}/${id}`, { token: masterA }), 204)
  expect(await until('the end of the handler', async () => endedLog(started.id))).toMatchObject({
    status: 'stopped',
  })
  await ok(a.call('POST', DOMAINS, { token: masterA, body: { id, name: 'gone.master' } }))
  const again = await a.adminIn('gone.master')
  await Bun.sleep(50) // the old handler wrote every 5 ms
  expect(await ok(a.call('GET', RUNTIMES, { token: again }))).toEqual([])
  expect(await ok(a.call('GET', `${RUNTIMES}/${started.id}`, { token: again }), 404)).toBeDefined()
  expect(await ok(a.call('GET', '/rest/v1/reference/extobjs', { token: again }))).toEqual([])
})

test('a blocked domain ends its handler and starts none of its service tasks until unblocked', async () => {
  const domain = await a.createDomain('blocked.master')
  const token = await a.adminIn('blocked.master')
  const block = (isblocked: boolean) =>
    ok(b.call('PATCH', `${DOMAINS}/${domain.id}`, { token: masterB, body: { opts: { isblocked } } }))
  await script(a, token, 'ticker', `while (true) { await emit('tick', {}); await sleep(5) }`)
  await heartbeats()
  const started = await ok(a.call('POST', RUNTIMES, { token, body: { code: 'ticker' } }))
  await block(true)
  const ended = await until('the end of the handler', async () => {
    const read = await ok(a.call('GET', `${RUNTIMES}/${started.id}`, { token }))
    return read.status === 'running' ? undefined : read
  })
  expect(ended).toMatchObject({ status: 'stopped', error: 'its domain blocked.master is blocked' })

  await script(a, token, 'waits', 'await sleep(600000)')
  await ok(a.call('POST', '/rest/v1/service/svctasks', { token, body: { name: 'w', svcscriptcode: 'waits' } }))
  await Promise.all([a.run('svc-tasks'), b.run('svc-tasks')])
  expect(await a.deps.scripts.list(domain.id)).toEqual([])
  // not even tried (a refused start would be tried again every second)
  expect(logs.filter((l) => l.msg === 'service task did not start' && l.domain === domain.id)).toEqual([])
  await heartbeats()
  expect((await ok(a.call('POST', RUNTIMES, { token, body: { code: 'waits' } }), 403)).error_message).toBe(
    'no handler starts: its domain blocked.master is blocked',
  )
  await block(false)
  await Promise.all([a.run('svc-tasks'), b.run('svc-tasks')])
  const running = await a.deps.scripts.list(domain.id)
  expect(running).toEqual([expect.objectContaining({ code: 'waits' })])
  await ok(a.call('DELETE', `${RUNTIMES}/${running[0]!.id}`, { token }), 204)
})

for (const change of ['blocked', 'deleted and made again'] as const) {
  test(`a node that missed it refuses host calls of a handler whose domain was ${change}; its heartbeat ends it`, async () => {
    const told: Record<string, unknown>[] = []
    const c = await testService({
      driver: 'remote',
      log: createLogger('info', (line) => told.push(JSON.parse(line))),
      dataDir: a.dir,
      clock: new ManualClock(Date.now()),
      env: { SCRIPT_HTTP_ALLOW: '127.0.0.1/32' },
    })
    try {
      const id = crypto.randomUUID()
      const name = change === 'blocked' ? 'missed-block.master' : 'missed-delete.master'
      await ok(b.call('POST', DOMAINS, { token: masterB, body: { id, name } }))
      const token = await c.adminIn(name)
      await script(
        c,
        token,
        'refused',
        `let refused
        while (!refused) { try { await emit('tick', {}) } catch (e) { refused = e.message } await sleep(5) }
        const after = { refused }
        try { await http({ url: startparam(1) }) } catch (e) { after.http = e.message }
        try { await data.list('/rest/v1/reference/extobjs') } catch (e) { after.data = e.message }
        try { await call('refused', []) } catch (e) { after.call = e.message }
        log('info', 'refusals', JSON.stringify(after))`,
      )
      const started = await ok(
        c.call('POST', RUNTIMES, {
          token,
          body: { code: 'refused', startparam1: `http://127.0.0.1:${upstream.port}/` },
        }),
      )
      await script(c, token, 'sleeper', 'while (true) await sleep(5)')
      const sleeper = await ok(c.call('POST', RUNTIMES, { token, body: { code: 'sleeper' } }))
      if (change === 'blocked')
        await ok(b.call('PATCH', `${DOMAINS}/${id}`, { token: masterB, body: { opts: { isblocked: true } } }))
      else {
        await ok(b.call('DELETE', `${DOMAINS}/${id}`, { token: masterB }), 204)
        a.clock.advance(1) // a creation time of its own
        await ok(b.call('POST', DOMAINS, { token: masterB, body: { id, name } }))
      }
      await Bun.sleep(30)
      expect(await c.deps.scripts.isRunning(id, started.id)).toBe(true) // c was told nothing
      c.clock.advance(31_000) // its cached view of the domain lapses
      const why = change === 'blocked' ? `its domain ${name} is blocked` : 'its domain was deleted'
      // what the script saw, from its log (a deleted domain's outcome is not kept)
      const line = await until('the refusals', async () =>
        told.find((l) => l.handler === started.id && String(l.message).startsWith('refusals ')),
      )
      expect(JSON.parse(String(line.message).slice('refusals '.length))).toEqual({
        refused: `emit: ${why}`,
        http: `http: ${why}`,
        data: `data.list: ${why}`,
        call: `call: ${why}`,
      })
      // a handler that calls nothing ends at the next heartbeat
      await c.run('node-heartbeat')
      const ended = await until('the end of the sleeper', async () =>
        told.find((l) => l.msg === 'script handler ended' && l.handler === sleeper.id),
      )
      expect(ended).toMatchObject({ status: 'stopped' })
      expect(await c.deps.scripts.isRunning(id, sleeper.id)).toBe(false)
    } finally {
      await c.close()
    }
  })
}
