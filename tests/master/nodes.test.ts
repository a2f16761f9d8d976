// /rest/v1/master/nodes: the registry of live processes, list parameters, live log level, termination.
// Two in-process services share one Redis prefix here (one cluster); nodes-cluster.test.ts runs real processes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createLogger } from '~/log'
import { testPrefix } from '../helpers/redis'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

let a: TestService
let b: TestService
let token: string
const prefix = testPrefix()
const base = '/rest/v1/master/nodes'
beforeAll(async () => {
  a = await testService({ kvPrefix: prefix, env: { NODE_NAME: 'alpha', SITE: 'main_site' } })
  b = await testService({
    kvPrefix: prefix,
    env: { NODE_NAME: 'beta', SITE: 'main_site', HOST: '0.0.0.0', BACKGROUND: 'off' },
    log: createLogger('info', () => {}),
  })
  token = await a.login('master', 'admin', ADMIN_PASSWORD)
})
afterAll(async () => {
  await b.close()
  await a.close()
})

const call = (method: string, path: string, body?: unknown) => a.call(method, path, { token, body })

describe('the registry', () => {
  test('every process of the cluster is listed, by name, in the original shape', async () => {
    const res = await call('GET', base)
    expect(res.status).toBe(200)
    expect(res.body.map((n: { name: string }) => n.name)).toEqual(['alpha', 'beta'])
    const [alpha, beta] = res.body
    expect(alpha).toEqual({
      name: 'alpha',
      fullName: 'alpha@127.0.0.1',
      ipAddress: '127.0.0.1',
      server: expect.any(String),
      site: 'main_site',
      type: 'role',
      roles: ['webserver', 'worker', 'svc'],
      status: 'active',
      dtStart: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      upTimeSec: expect.any(Number),
      maxLogLevel: a.config.logLevel,
    })
    // a wildcard HOST shows the address others reach it at; BACKGROUND=off leaves the worker role out
    expect(beta.ipAddress).not.toBe('0.0.0.0')
    expect(beta.fullName).toBe(`beta@${beta.ipAddress}`)
    expect(beta.roles).toEqual(['webserver', 'svc'])
  })

  test('upTimeSec counts from dtStart on the clock', async () => {
    const before = (await call('GET', `${base}/alpha`)).body.upTimeSec
    a.clock.advance(90_000)
    expect((await call('GET', `${base}/alpha`)).body.upTimeSec).toBe(before + 90)
  })

  test('list parameters: filter, order, mask, offset, limit, flat', async () => {
    const q = (params: Record<string, string>) => call('GET', `${base}?${new URLSearchParams(params)}`)
    expect((await q({ filter: JSON.stringify({ name: 'beta' }), mask: 'name,site' })).body).toEqual([
      { name: 'beta', site: 'main_site' },
    ])
    expect((await q({ order: JSON.stringify([{ name: 'desc' }]), mask: 'name' })).body).toEqual([
      { name: 'beta' },
      { name: 'alpha' },
    ])
    expect((await q({ offset: '1', limit: '1', mask: 'name' })).body).toEqual([{ name: 'beta' }])
    expect((await q({ filter: JSON.stringify({ name: 'alpha' }), mask: 'name,roles', flat: 'true' })).body).toEqual([
      { name: 'alpha', roles: ['webserver', 'worker', 'svc'] },
    ])
    const bad = await q({ mask: 'name,password' })
    expect(bad.status).toBe(400)
    expect(bad.body.error_details).toEqual({ field: 'mask', value: 'password' })
  })

  test('one node by name or full name, on the plural and the spec singular path; unknown is 404', async () => {
    const one = (await call('GET', `${base}/beta`)).body
    expect(one.name).toBe('beta')
    expect((await call('GET', `${base}/${encodeURIComponent(one.fullName)}`)).body.name).toBe('beta')
    expect((await call('GET', `/rest/v1/master/node/beta?mask=name,type`)).body).toEqual({ name: 'beta', type: 'role' })
    const missing = await call('GET', `${base}/gamma`)
    expect(missing.status).toBe(404)
    expect(missing.body.error_message).toBe('node gamma not found')
  })

  test('a heartbeat renews the record; a record left to expire drops the node from the list', async () => {
    await b.run('node-heartbeat')
    // what an expired record looks like: its key is gone, its name still in the index
    await b.deps.kv.del('node:beta')
    expect((await call('GET', base)).body.map((n: { name: string }) => n.name)).toEqual(['alpha'])
    await b.run('node-heartbeat')
    expect((await call('GET', base)).body.map((n: { name: string }) => n.name)).toEqual(['alpha', 'beta'])
  })
})

describe('changing a node', () => {
  test('PATCH maxLogLevel of another process goes through pub/sub and answers the whole node', async () => {
    const res = await call('PATCH', `${base}/beta`, { maxLogLevel: 'debug' })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ name: 'beta', maxLogLevel: 'debug', type: 'role' })
    expect(b.deps.log.level).toBe('debug')
    expect((await call('GET', `${base}/beta`)).body.maxLogLevel).toBe('debug')
    await call('PATCH', `${base}/beta`, { maxLogLevel: 'info' })
    expect(b.deps.log.level).toBe('info')
  })

  test('PATCH of the process serving the request applies at once', async () => {
    const before = a.deps.log.level
    const res = await call('PATCH', `${base}/alpha`, { maxLogLevel: 'error' })
    expect(res.body.maxLogLevel).toBe('error')
    expect(a.deps.log.level).toBe('error')
    await call('PATCH', `${base}/alpha`, { maxLogLevel: before })
  })

  test.each([
    [{ maxLogLevel: 'loud' }, 'maxLogLevel'],
    [{ maxLogLevel: 3 }, 'maxLogLevel'],
    [{ maxLogLevel: 'info', site: 'x' }, 'site'],
    [{}, 'maxLogLevel'],
  ])('PATCH %j is a 400 naming %s, and changes nothing', async (body, field) => {
    const res = await call('PATCH', `${base}/beta`, body)
    expect(res.status).toBe(400)
    expect(res.body.error_details).toEqual({ field })
    expect(b.deps.log.level).toBe('info')
  })

  test('PATCH or DELETE of an unknown node is 404', async () => {
    expect((await call('PATCH', `${base}/gamma`, { maxLogLevel: 'info' })).status).toBe(404)
    expect((await call('DELETE', `${base}/gamma`)).status).toBe(404)
  })
})

test('a working-domain session is refused on every node endpoint before any lookup', async () => {
  await a.createDomain('acme.master')
  const inWorking = await a.adminIn('acme.master')
  for (const [method, path, body] of [
    ['GET', base],
    ['GET', `${base}/alpha`],
    ['GET', `${base}/no-such-node`],
    ['GET', '/rest/v1/master/node/alpha'],
    ['PATCH', `${base}/beta`, { maxLogLevel: 'debug' }],
    ['DELETE', `${base}/beta`],
  ] as const) {
    const res = await a.call(method, path, { token: inWorking, body })
    expect(res.status).toBe(403)
    expect(res.body.error_message).toContain('master domain only')
  }
  expect(b.deps.log.level).toBe('info')
})

test('DELETE terminates the other process: it leaves the registry and stops; the call answers 204', async () => {
  const gamma = await testService({ kvPrefix: prefix, env: { NODE_NAME: 'gamma' } })
  expect((await call('GET', base)).body.map((n: { name: string }) => n.name)).toContain('gamma')
  expect((await call('DELETE', `${base}/gamma`)).status).toBe(204)
  expect((await call('GET', base)).body.map((n: { name: string }) => n.name)).toEqual(['alpha', 'beta'])
  // the stop the termination began is the one close() waits for; after it the database is closed
  await gamma.service.stop()
  await expect(gamma.deps.db.get('SELECT 1')).rejects.toThrow()
  await gamma.close()
})
