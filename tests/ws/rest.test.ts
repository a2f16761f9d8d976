// /ws: the upgrade and its credentials, every `rest` operation beside the same call over HTTP,
// permission refusals, malformed frames, frame limits, and sockets closed when their session ends.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'
import { openWs, upgradeAnswer, type WsClient } from '../helpers/ws'

let t: TestService
let token: string
let domain: { id: string; name: string }
let wsUrl: string
beforeAll(async () => {
  t = await testService({ listen: true })
  domain = await t.createDomain('ws.master')
  token = await t.adminIn('ws.master')
  wsUrl = `${t.service.url!.replace('http', 'ws')}/ws`
  const res = await t.call('POST', '/rest/v1/design/classes', {
    token,
    body: { classname: 'crm/deals', properties: [{ name: 'title', data_type: 'string', required: true }] },
  })
  expect(res.status).toBe(200)
})
afterAll(() => t.close())

const http = (method: string, path: string, body?: unknown, as = token) => t.call(method, path, { token: as, body })
let qid = 0
/** Sends a rest frame and waits for its answer. */
async function rest(c: WsClient, payload: Record<string, unknown>) {
  const id = `q${++qid}`
  c.send(['rest', { qid: id, ...payload }])
  const [, body] = await c.next((f) => f[0] === 'rest' && f[1].qid === id)
  return body
}

describe('the upgrade', () => {
  test('no credential, or an unknown one: 401 with the error body, no socket', async () => {
    const none = await upgradeAnswer(`${t.service.url}/ws`)
    expect(none.status).toBe(401)
    expect(none.body).toMatchObject({ error_code: 1401, error_message: expect.stringContaining('session is required') })
    const bad = await upgradeAnswer(`${t.service.url}/ws?token=nope`)
    expect(bad.status).toBe(401)
    expect((await upgradeAnswer(`${t.service.url}/ws`, { authorization: 'Bearer nope' })).status).toBe(401)
  })

  test('a bearer header, ?token= and a session cookie each open a socket', async () => {
    const cookie = await t.login('master', 'admin', ADMIN_PASSWORD, 'cookie')
    for (const c of [
      await openWs(wsUrl, { authorization: `Bearer ${token}` }),
      await openWs(`${wsUrl}?token=${token}`),
      await openWs(wsUrl, { cookie: `RSession=${cookie}` }),
    ]) {
      expect((await rest(c, { operation: 'read', classpath: '/rest/v1/iam/sessions/current' })).result).toMatchObject({
        login: 'admin',
      })
      c.close()
    }
    // a cookie session's id is no bearer token, and the other way round
    expect((await upgradeAnswer(`${t.service.url}/ws?token=${cookie}`)).status).toBe(401)
  })
})

describe('rest over the socket', () => {
  test('read, create, update, replace, delete, lookup, clear: the same answers as HTTP; journaled as websocket', async () => {
    const c = await openWs(`${wsUrl}?token=${token}`)
    const created = (
      await rest(c, {
        operation: 'create',
        classpath: '/rest/v1/reference/extobjs',
        content: { type: 'note', value: { n: 1 } },
      })
    ).result as { id: string }
    expect(created).toMatchObject({ type: 'note', value: { n: 1 } })
    expect((await http('GET', `/rest/v1/reference/extobjs/${created.id}`)).body).toEqual(created)
    const journal = (await t.journal(domain.id)).at(-1)!
    expect(journal).toMatchObject({ cmdtype: 'create', objid: created.id, modifiername: 'Administrator' })
    const [initiator] = (await t.deps.db.get('SELECT initiator FROM journal ORDER BY seq DESC LIMIT 1'))!
    expect(initiator).toBe('websocket')

    const read = await rest(c, { operation: 'read', classpath: '/rest/v1/reference/extobjs', id: created.id })
    expect(read.result).toEqual(created)
    const list = await rest(c, {
      operation: 'read',
      classpath: '/rest/v1/reference/extobjs',
      filter: { type: 'note' },
      mask: ['id', 'type'],
      limit: 5,
    })
    const httpList = await http(
      'GET',
      `/rest/v1/reference/extobjs?filter=${encodeURIComponent('{"type":"note"}')}&mask=id,type&limit=5`,
    )
    expect(list.result).toEqual(httpList.body)
    const updated = await rest(c, {
      operation: 'update',
      classpath: '/rest/v1/reference/extobjs',
      id: created.id,
      content: { value: { n: 2 } },
    })
    expect(updated.result).toMatchObject({ id: created.id, value: { n: 2 } })
    expect(
      (await rest(c, { operation: 'lookup', classpath: '/rest/v1/reference/extobjs', content: 'note' })).result,
    ).toEqual((await http('LOOKUP', '/rest/v1/reference/extobjs', 'note')).body)
    expect(
      await rest(c, { operation: 'delete', classpath: '/rest/v1/reference/extobjs', id: created.id }),
    ).toMatchObject({ result: null })
    expect((await http('GET', `/rest/v1/reference/extobjs/${created.id}`)).status).toBe(404)

    // model records: replace (PUT) and clear (CLEAR) as well
    const deal = (
      await rest(c, { operation: 'create', classpath: '/rest/v1/model/crm/deals', content: { title: 'a' } })
    ).result as { id: string }
    const replaced = await rest(c, {
      operation: 'replace',
      classpath: '/rest/v1/model/crm/deals',
      id: deal.id,
      content: { title: 'b' },
    })
    expect(replaced.result).toMatchObject({ id: deal.id, title: 'b' })
    expect((await rest(c, { operation: 'clear', classpath: '/rest/v1/model/crm/deals' })).error).toBeUndefined()
    expect((await http('GET', '/rest/v1/model/crm/deals')).body).toEqual([])
    c.close()
  })

  test('errors come back under their qid with the REST error body; the socket stays open', async () => {
    const c = await openWs(`${wsUrl}?token=${token}`)
    const missing = await rest(c, {
      operation: 'read',
      classpath: '/rest/v1/reference/extobjs',
      id: crypto.randomUUID(),
    })
    expect(missing.error).toMatchObject({ error_code: 1404 })
    const invalid = await rest(c, { operation: 'create', classpath: '/rest/v1/reference/extobjs', content: {} })
    expect(invalid.error).toMatchObject({ error_code: 1400, error_details: { field: 'type' } })
    for (const [payload, field] of [
      [{ operation: 'fetch', classpath: '/rest/v1/domain/users' }, 'operation'],
      [{ operation: 'read', classpath: 'users' }, 'classpath'],
      [{ operation: 'update', classpath: '/rest/v1/domain/users' }, 'id'],
      [{ operation: 'create', classpath: '/rest/v1/domain/users', id: 'x' }, 'id'],
      [{ operation: 'read', classpath: '/rest/v1/reference/extobjs', id: '\ud800' }, 'id'],
    ] as const)
      expect((await rest(c, payload)).error).toMatchObject({ error_code: 1400, error_details: { field } })
    c.send(['rest', { operation: 'read', classpath: '/rest/v1/domain/users' }])
    expect((await c.next((f) => f[0] === 'rest'))[1]).toMatchObject({
      qid: null,
      error: { error_details: { field: 'qid' } },
    })
    for (const garbage of ['not json', '{"rest":1}', '["ping",{}]', '["rest",[]]']) {
      c.send(garbage)
      expect((await c.next())[0]).toMatch(/^(error|rest)$/)
    }
    expect((await rest(c, { operation: 'read', classpath: '/rest/v1/iam/sessions/current' })).result).toBeTruthy()
    c.close()
  })

  test("a route's own 401 (a failed sign-in) is an answer: the socket's session lives on, and so does the socket", async () => {
    const c = await openWs(`${wsUrl}?token=${token}`)
    const content = { domain: 'master', login: 'admin', pwd: 'wrong-Pass1', session_type: 'token' }
    const refused = await rest(c, { operation: 'create', classpath: '/rest/v1/iam/sessions', content })
    expect(refused.error).toMatchObject({ error_code: 1401 })
    expect((await rest(c, { operation: 'read', classpath: '/rest/v1/iam/sessions/current' })).result).toBeTruthy()
    c.close()
  })

  test('permissions are those of the route: a role with GET on the collection lists it and does nothing else', async () => {
    await http('POST', '/rest/v1/domain/roles', {
      name: 'reader',
      routes: [{ path: '/rest/v1/reference/extobjs', methods: ['GET'] }],
    })
    await t.createUser(domain.id, 'rita', 'rita-Pass1', ['reader'])
    const rita = await t.login('ws.master', 'rita', 'rita-Pass1')
    const one = (await http('POST', '/rest/v1/reference/extobjs', { type: 'perm' })).body
    const c = await openWs(`${wsUrl}?token=${rita}`)
    expect((await rest(c, { operation: 'read', classpath: '/rest/v1/reference/extobjs' })).result).toContainEqual(
      expect.objectContaining({ id: one.id }),
    )
    for (const payload of [
      { operation: 'read', classpath: '/rest/v1/reference/extobjs', id: one.id },
      { operation: 'create', classpath: '/rest/v1/reference/extobjs', content: { type: 'x' } },
      { operation: 'delete', classpath: '/rest/v1/reference/extobjs', id: one.id },
      { operation: 'read', classpath: '/rest/v1/domain/users' },
    ])
      expect((await rest(c, payload)).error).toMatchObject({ error_code: 1403 })
    expect((await http('GET', `/rest/v1/reference/extobjs/${one.id}`)).status).toBe(200)
    c.close()
  })
})

describe('a session that ends closes its sockets', () => {
  test('logout (4001), the user deleted (4001), the domain blocked (4003)', async () => {
    const logoutToken = await t.adminIn('ws.master')
    const a = await openWs(`${wsUrl}?token=${logoutToken}`)
    expect((await http('DELETE', '/rest/v1/iam/sessions/current', undefined, logoutToken)).status).toBe(204)
    expect(await a.closed).toMatchObject({ code: 4001 })

    const userId = await t.createUser(domain.id, 'dora', 'dora-Pass1', ['user'])
    const b = await openWs(`${wsUrl}?token=${await t.login('ws.master', 'dora', 'dora-Pass1')}`)
    expect((await http('DELETE', `/rest/v1/domain/users/${userId}`)).status).toBe(204)
    expect(await b.closed).toMatchObject({ code: 4001 })

    const blocked = await t.createDomain('blockme.master')
    await t.createUser(blocked.id, 'bo', 'bo-Pass1', ['user'])
    const c = await openWs(`${wsUrl}?token=${await t.login('blockme.master', 'bo', 'bo-Pass1')}`)
    const master = await t.login('master', 'admin', ADMIN_PASSWORD)
    const patched = await t.call('PATCH', `/rest/v1/domain/domains/${blocked.id}`, {
      token: master,
      body: { opts: { isblocked: true } },
    })
    expect(patched.status).toBe(200)
    expect(await c.closed).toMatchObject({ code: 4003, reason: expect.stringContaining('blocked') })
  })
})

describe('limits', () => {
  test('a classpath ending in a 200 KB run of slashes is answered at once (trimming it took 44 s); one over 16 KB is refused', async () => {
    const c = await openWs(`${wsUrl}?token=${token}`)
    const start = performance.now()
    // trimmed, the path is short: no such collection
    const trimmed = await rest(c, { operation: 'read', classpath: `/rest/v1/${'/'.repeat(200_000)}` })
    expect(trimmed.error).toMatchObject({ error_code: 1404 })
    // a path longer than an HTTP request's whole head may be is refused before it is routed
    const long = await rest(c, { operation: 'read', classpath: `/rest/v1/${'/'.repeat(200_000)}x` })
    expect(long.error).toMatchObject({ error_code: 1400, error_details: { field: 'classpath' } })
    expect(performance.now() - start).toBeLessThan(1000)
    c.close()
  })

  let small: TestService
  beforeAll(async () => {
    small = await testService({ listen: true, env: { WS_FRAMES_PER_SEC: '5', WS_MAX_FRAME_BYTES: '2048' } })
  })
  afterAll(() => small.close())

  test('frames beyond the per-second limit are refused with a clear error; the socket stays open', async () => {
    const admin = await small.login('master', 'admin', ADMIN_PASSWORD)
    const c = await openWs(`${small.service.url!.replace('http', 'ws')}/ws?token=${admin}`)
    for (let i = 0; i < 8; i++)
      c.send(['rest', { qid: i, operation: 'read', classpath: '/rest/v1/iam/sessions/current' }])
    const answers = await Promise.all([...Array(8)].map((_, i) => c.next((f) => f[0] === 'rest' && f[1].qid === i)))
    const refused = answers.filter(([, b]) => (b.error as { error_code?: number } | undefined)?.error_code === 1429)
    expect(refused.length).toBe(3)
    expect(refused[0]![1].error).toMatchObject({
      error_message: expect.stringContaining('more than 5 frames a second'),
    })
    small.clock.advance(1000)
    expect((await rest(c, { operation: 'read', classpath: '/rest/v1/iam/sessions/current' })).result).toBeTruthy()
    c.close()
  })

  test('a frame over WS_MAX_FRAME_BYTES closes the socket with 1009', async () => {
    const admin = await small.login('master', 'admin', ADMIN_PASSWORD)
    const c = await openWs(`${small.service.url!.replace('http', 'ws')}/ws?token=${admin}`)
    c.send('x'.repeat(4096))
    expect((await c.closed).code).toBe(1009)
  })
})
