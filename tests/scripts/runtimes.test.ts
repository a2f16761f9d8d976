// /rest/v1/service/svcscript_runtimes: scripts that use every host API call, started, listed, stopped
// (with and without onStop), their outcomes, limits breached while the service keeps answering, the
// per-domain cap, and tenant walls.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import type { PlatformEvent } from '~/events/event'
import { createLogger } from '~/log'
import { testService, type TestService } from '../helpers/service'

const BASE = '/rest/v1/service/svcscript_runtimes'
const logs: Record<string, unknown>[] = []
let t: TestService
let token: string
let domain: { id: string; name: string }
let upstream: ReturnType<typeof Bun.serve>
beforeAll(async () => {
  upstream = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: async (r) => Response.json({ echo: await r.text() }) })
  t = await testService({
    env: { SCRIPT_HTTP_ALLOW: '127.0.0.1/32', SCRIPT_CPU_SEC: '1', SCRIPT_MAX_PER_DOMAIN: '3' },
    licence: { svcscripts: 20 },
    log: createLogger('info', (line) => logs.push(JSON.parse(line))),
  })
  domain = await t.createDomain('scr.master')
  token = await t.adminIn('scr.master')
})
afterAll(async () => {
  await t.close()
  upstream.stop(true)
})

const call = (method: string, path: string, body?: unknown, as = token) => t.call(method, path, { token: as, body })
const script = async (code: string, scriptdata: string) =>
  expect((await call('POST', '/rest/v1/service/svcscripts', { code, name: `Script ${code}`, scriptdata })).status).toBe(
    200,
  )

/** Polls (a script runs on real time) until the handler has ended; answers its outcome. */
async function outcome(id: string, as = token) {
  for (let i = 0; i < 400; i++) {
    const res = await call('GET', `${BASE}/${id}`, undefined, as)
    if (res.body.status !== 'running') return res.body
    await Bun.sleep(10)
  }
  throw new Error(`handler ${id} did not end`)
}

describe('the host API', () => {
  test('a script using every call: params, log, emit, nested call, http, data, sleep', async () => {
    await script('inner', `return { doubled: startparam(1) * 2 }`)
    await script(
      'everything',
      `
      log('info', 'hello from', startparam(1))
      await emit('greeted', { who: startparam(1) }, [{ type: 'sipuser', value: '101' }])
      const nested = await call('inner', [21])
      const res = await http({ url: startparam(2), method: 'POST', body: { ping: 1 } })
      const made = await data.create('/rest/v1/reference/extobjs', { type: 'from-script', value: { n: 1 } })
      const read = await data.read('/rest/v1/reference/extobjs', made.id)
      await data.update('/rest/v1/reference/extobjs', made.id, { value: { n: 2 } })
      const found = await data.lookup('/rest/v1/reference/extobjs', 'from-script')
      const listed = await data.list('/rest/v1/reference/extobjs', { filter: { type: 'from-script' }, mask: ['id'] })
      await sleep(20)
      await data.delete('/rest/v1/reference/extobjs', made.id)
      let missing
      try { await data.read('/rest/v1/reference/extobjs', made.id) } catch (e) { missing = e.message }
      let refused
      try { await http({ url: 'http://10.1.2.3/' }) } catch (e) { refused = e.message }
      return { nested, echo: JSON.parse(res.body).echo, same: read.id === made.id, found, listed, missing, refused }
    `,
    )
    const events: PlatformEvent[] = []
    const off = t.deps.bus.on((e) => e.class === 'customevents' && events.push(e))
    const started = await call('POST', BASE, {
      code: 'everything',
      startparam1: 'ann',
      startparam2: `http://127.0.0.1:${upstream.port}/echo`,
    })
    expect(started.status).toBe(200)
    expect(started.body).toEqual({
      id: expect.any(String),
      site: t.config.site,
      node: t.config.nodeName,
      domain: 'scr.master',
      type: 'svc',
      code: 'everything',
    })
    const done = await outcome(started.body.id)
    off()
    expect(done).toMatchObject({ status: 'done', code: 'everything', name: 'Script everything' })
    const result = done.result
    expect(result).toMatchObject({
      nested: { doubled: 42 },
      echo: '{"ping":1}',
      same: true,
      missing: expect.stringContaining('1404'),
    })
    expect(result.found).toHaveLength(1)
    expect(result.listed).toEqual([{ id: result.found[0] }])
    expect(result.refused).toContain('is not among the hosts')
    expect(events).toEqual([
      expect.objectContaining({
        event: 'greeted',
        domain: domain.id,
        data: { who: 'ann' },
        objects: [{ type: 'sipuser', value: '101' }],
      }),
    ])
    expect(logs).toContainEqual(
      expect.objectContaining({ msg: 'script', handler: started.body.id, message: 'hello from ann' }),
    )
    // data calls are journaled as the script: initiator script, the handler as modifier
    const rows = await t.deps.db.all(
      "SELECT cmdtype, initiator, modifierid FROM journal WHERE objtype = 'extobj' AND domain = ? ORDER BY seq",
      [domain.id],
    )
    expect(rows).toEqual([
      ['create', 'script', started.body.id],
      ['update', 'script', started.body.id],
      ['delete', 'script', started.body.id],
    ])
  })

  test("a handler's page holds what its script logged, a nested call's too, running and ended; its first 200 lines", async () => {
    await script('logs-inner', `log('debug', 'inner got', startparam(1))`)
    await script(
      'logs',
      `log('info', 'hello', startparam(1), { n: 1 })
      await call('logs-inner', ['x'])
      log('not a level', 2)
      let stopping = false
      onStop(() => { stopping = true })
      while (!stopping) await sleep(10)
      for (let i = 0; i < 250; i++) log('info', 'line', i) // no await: lines wait apart from other calls`,
    )
    const { id } = (await call('POST', BASE, { code: 'logs', startparam1: 'ann' })).body
    const messages = (body: { log: { message: string }[] }) => body.log.map((l) => l.message)
    let running = (await call('GET', `${BASE}/${id}`)).body
    for (let i = 0; i < 400 && running.log.length < 3; i++) {
      await Bun.sleep(10)
      running = (await call('GET', `${BASE}/${id}`)).body
    }
    expect(running.status).toBe('running')
    expect(messages(running)).toEqual(['hello ann {"n":1}', 'inner got x', 'not a level 2'])
    expect(running.log.map((l: { level: string }) => l.level)).toEqual(['info', 'debug', 'info'])
    expect(running.log[0].time).toMatch(/^\d{4}-\d\d-\d\dT/)
    expect((await call('DELETE', `${BASE}/${id}`)).status).toBe(204)
    const done = await outcome(id)
    expect(done).toMatchObject({ status: 'done' })
    expect(done.log).toHaveLength(201)
    expect(done.log[199].message).toBe('line 196') // the 200th line kept
    expect(messages(done).slice(3, 5)).toEqual(['line 0', 'line 1'])
    expect(done.log.at(-1)).toMatchObject({ level: 'warn', message: expect.stringContaining('service log only') })
    // a large value is cut, never the script's failure
    await script('logs-big', `log('info', 'big', 'x'.repeat(20000), { y: 'y'.repeat(5000) }); return 'after log'`)
    const big = await outcome((await call('POST', BASE, { code: 'logs-big' })).body.id)
    expect(big).toMatchObject({ status: 'done', result: 'after log' })
    expect(big.log[0].message).toStartWith('big xxxx') // kept up to a line's 2,000 characters
    // the list stays the spec's fields
    expect((await call('GET', BASE)).body.every((h: object) => !('log' in h))).toBe(true)
  })

  test('emit refuses a payload webhook deliveries could not keep (nested past 100 levels, a lone surrogate)', async () => {
    await script(
      'odd-emit',
      `
      const refused = []
      for (const payload of [{ deep: JSON.parse('['.repeat(150) + ']'.repeat(150)) }, { lone: '\\ud800' }])
        try { await emit('odd', payload) } catch (e) { refused.push(e.message) }
      return refused
    `,
    )
    const started = await call('POST', BASE, { code: 'odd-emit' })
    const done = await outcome(started.body.id)
    expect(done.result).toEqual([expect.stringContaining('nested deeper'), expect.stringContaining('surrogate')])
  })

  test('an unknown code is a 404 error body; a bad body names the field', async () => {
    expect((await call('POST', BASE, { code: 'nope' })).body).toMatchObject({ error_code: 1404 })
    expect((await call('POST', BASE, { code: 'inner', startparam10: 1 })).body.error_details).toEqual({
      field: 'startparam10',
    })
  })

  test("a script stored in the original's visual form (an object) is kept but not run: a 409 naming scriptdata", async () => {
    const form = { objects: [{ id: 1, type: 'start' }], variables: [], scriptVersion: 170105 }
    const made = await call('POST', '/rest/v1/service/svcscripts', { code: 'visual', name: 'Visual', scriptdata: form })
    expect(made.status).toBe(200)
    const res = await call('POST', BASE, { code: 'visual' })
    expect(res.status).toBe(409)
    expect(res.body.error_details).toEqual({ field: 'scriptdata' })
    expect(res.body.error_message).toContain('JavaScript text')
  })
})

describe('running handlers', () => {
  // the node's record in Redis lapses in NODE_TTL_MS of real time, and tests drive its heartbeat
  beforeEach(() => t.run('node-heartbeat'))

  test('listed on GET with name and starttime; a first stop takes onStop, a second ends it', async () => {
    await script(
      'waiter',
      `let stops = 0; onStop(() => { stops++; log('info', 'asked to stop') }); while (true) { await sleep(10); if (stops) return 'finished after stop' }`,
    )
    await script('plain', `await sleep(60000)`)
    const a = (await call('POST', BASE, { code: 'waiter' })).body
    const b = (await call('POST', BASE, { code: 'plain' })).body
    const list = (await call('GET', `${BASE}?order=${encodeURIComponent('["code"]')}`)).body
    expect(list.map((h: { code: string }) => h.code)).toEqual(['plain', 'waiter'])
    expect(list[0]).toMatchObject({ id: b.id, name: 'Script plain', starttime: expect.any(String), type: 'svc' })

    expect((await call('DELETE', `${BASE}/${a.id}`)).status).toBe(204)
    expect(await outcome(a.id)).toMatchObject({ status: 'done', result: 'finished after stop' })
    expect((await call('DELETE', `${BASE}/${b.id}`)).status).toBe(204)
    expect(await outcome(b.id)).toMatchObject({ status: 'stopped' })
    expect((await call('DELETE', `${BASE}/${b.id}`)).status).toBe(404)
    expect((await call('GET', BASE)).body).toEqual([])
  })

  test('a handler that ignores its first stop ends on the second', async () => {
    await script('stubborn', `onStop(() => {}); await sleep(60000)`)
    const h = (await call('POST', BASE, { code: 'stubborn' })).body
    await call('DELETE', `${BASE}/${h.id}`)
    expect((await call('GET', `${BASE}/${h.id}`)).body.status).toBe('running')
    await call('DELETE', `${BASE}/${h.id}`)
    expect(await outcome(h.id)).toMatchObject({ status: 'stopped', error: 'stopped a second time' })
  })

  test('each limit ends its handler with the reason recorded while the service keeps answering', async () => {
    await script('spin', 'while (true) {}')
    await script('deep', 'function f(n) { return f(n + 1) + 1 } return f(0)')
    await script('throws', 'throw new Error("on purpose")')
    const spin = (await call('POST', BASE, { code: 'spin' })).body
    // the loop runs on a script thread: requests are answered at once meanwhile
    for (let i = 0; i < 5; i++) {
      const asked = performance.now()
      expect((await call('GET', '/rest/v1/iam/sessions/current')).status).toBe(200)
      expect(performance.now() - asked).toBeLessThan(200)
      await Bun.sleep(50)
    }
    expect((await call('GET', `${BASE}/${spin.id}`)).body.status).toBe('running')
    expect(await outcome(spin.id)).toMatchObject({ status: 'limit', limit: 'cpu' })
    const deep = (await call('POST', BASE, { code: 'deep' })).body
    expect(await outcome(deep.id)).toMatchObject({ status: 'limit', limit: 'stack' })
    const thrown = (await call('POST', BASE, { code: 'throws' })).body
    expect(await outcome(thrown.id)).toMatchObject({ status: 'failed', error: 'Error: on purpose' })
  })

  // one script for the cases below
  const hostile = `
    const kind = startparam(1)
    if (kind === 'tojson') return { toJSON() { for (;;) {} } }
    if (kind === 'message') throw { get message() { for (;;) {} } }
    if (kind === 'on-stop') { onStop(() => { throw { get message() { for (;;) {} } } }); await sleep(60000) }
    if (kind === 'bad-on-stop') { onStop(() => {}); try { onStop() } catch (e) { return e.message } }
    if (kind === 'kept-on-stop') {
      let stopped = false
      onStop(() => { stopped = true })
      try { onStop(7) } catch (e) {}
      while (!stopped) await sleep(10)
      return 'the first branch ran'
    }
    if (kind === 'then') {
      Object.defineProperty(Object.prototype, 'then', { get() { for (;;) {} } })
      await data.list('/rest/v1/reference/extobjs', {})
    }
    if (kind === 'message-setter') {
      Object.defineProperty(Error.prototype, 'message', { set(v) { for (;;) {} }, get() { return 'x' } })
      try { await data.read('/rest/v1/reference/extobjs', '00000000-0000-4000-8000-000000000000') } catch (e) {}
    }
    if (kind === 'argument') log('info', { get a() { for (;;) {} } })
    return 1 + 1
  `
  const run = async (kind: string) => {
    await t.run('node-heartbeat') // each case takes the CPU budget, a second of real time
    return (await call('POST', BASE, { code: 'hostile', startparam1: kind })).body.id as string
  }

  test("the script's own code run while its result or error is read (toJSON, a getter) counts against its CPU", async () => {
    await script('hostile', hostile)
    // before, each held a script thread for good: every later handler stayed running
    for (const kind of ['tojson', 'message', 'then', 'message-setter', 'argument'])
      expect([kind, await outcome(await run(kind))]).toMatchObject([kind, { limit: 'cpu' }])
    // an argument the budget interrupted while it was read is not passed on as text
    expect(logs.some((l) => l.msg === 'script' && String(l.message).includes('[object Object]'))).toBe(false)
    const stopped = await run('on-stop')
    expect((await call('DELETE', `${BASE}/${stopped}`)).status).toBe(204)
    expect(await outcome(stopped)).toMatchObject({ status: 'limit', limit: 'cpu' })
    expect(await outcome(await run('plain'))).toMatchObject({ status: 'done', result: 2 })
  }, 20_000) // seven handlers, each spending the CPU budget (a second)

  test('onStop without a function is an error the script may catch; its handler ends as any other', async () => {
    const done = await outcome(await run('bad-on-stop'))
    expect(done).toMatchObject({ status: 'done', result: expect.stringContaining('onStop takes a function') })
    // and the branch it had before is still the one a stop runs
    const kept = await run('kept-on-stop')
    expect((await call('DELETE', `${BASE}/${kept}`)).status).toBe(204)
    expect(await outcome(kept)).toMatchObject({ status: 'done', result: 'the first branch ran' })
    expect((await call('GET', BASE)).body).toEqual([])
  })

  test('at most SCRIPT_MAX_PER_DOMAIN at once per domain (429); other domains are walled off', async () => {
    const ids = []
    for (let i = 0; i < 3; i++) ids.push((await call('POST', BASE, { code: 'plain' })).body.id)
    const over = await call('POST', BASE, { code: 'plain' })
    expect(over.status).toBe(429)
    await t.createDomain('other-scr.master')
    const other = await t.adminIn('other-scr.master')
    expect((await call('GET', BASE, undefined, other)).body).toEqual([])
    expect((await call('DELETE', `${BASE}/${ids[0]}`, undefined, other)).status).toBe(404)
    expect((await call('GET', `${BASE}/${ids[0]}`, undefined, other)).status).toBe(404)
    for (const id of ids) await call('DELETE', `${BASE}/${id}`)
    for (const id of ids) expect(await outcome(id)).toMatchObject({ status: 'stopped' })
  })
})
