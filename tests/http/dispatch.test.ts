// dispatch(ctx, request): routes run for an actor context without HTTP (websocket frames, scripts'
// data calls) must be admitted, answered and journaled exactly as the same call over HTTP.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Ctx, SYSTEM_ACTOR, sessionCtx, systemCtx } from '~/context'
import { createApp } from '~/app'
import { dispatch } from '~/http/dispatch'
import { TEST_ROUTE } from '../helpers/test-route'
import { defineRoute } from '~/http/route'
import type { Session } from '~/identity/sessions'
import { createLogger } from '~/log'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let domain: { id: string; name: string }
/** A domain administrator of the working domain: token for HTTP, context for dispatch. */
let bossToken: string
let boss: Ctx
/** A user whose only custom role grants GET on the extobjs collection (not on one item). */
let readerToken: string
let reader: Ctx
let extobjId: string
const EXTOBJS = '/rest/v1/reference/extobjs'

const sessionOf = async (token: string): Promise<Session> => {
  const session = await t.deps.sessions.get(token)
  if (!session) throw new Error('the token names no session')
  return session
}

/** The journal row of the newest change to an object, with who made it. */
const journaled = async (objid: string) => {
  const row = await t.deps.db.get(
    'SELECT cmdtype, modifierid, modifiername, initiator, request_id FROM journal WHERE objid = ? ORDER BY seq DESC LIMIT 1',
    [objid],
  )
  if (!row) return null
  const [cmdtype, modifierid, modifiername, initiator, request_id] = row
  return { cmdtype, modifierid, modifiername, initiator, request_id }
}

beforeAll(async () => {
  t = await testService()
  domain = await t.createDomain('dispatch.master')
  const bossId = await t.createUser(domain.id, 'boss', 'boss-Pass1', ['admin'])
  bossToken = await t.login(domain.name, 'boss', 'boss-Pass1')
  boss = sessionCtx(t.deps, await sessionOf(bossToken), 'dispatch-boss')
  expect(boss.actor.id).toBe(bossId)
  const role = await t.call('POST', '/rest/v1/domain/roles', {
    token: bossToken,
    body: { name: 'lister', routes: [{ path: EXTOBJS, methods: ['GET'] }] },
  })
  expect(role.status).toBe(200)
  await t.createUser(domain.id, 'reader', 'reader-Pass1', ['lister'])
  readerToken = await t.login(domain.name, 'reader', 'reader-Pass1')
  reader = sessionCtx(t.deps, await sessionOf(readerToken), 'dispatch-reader')
  const created = await t.call('POST', EXTOBJS, {
    token: bossToken,
    body: { type: 'note', value: { text: 'hi' }, opts: { title: 'first' } },
  })
  expect(created.status).toBe(200)
  extobjId = created.body.id
})
afterAll(() => t.close())

describe('the same answers as over HTTP', () => {
  test('a list answers the body HTTP answers', async () => {
    const path = `${EXTOBJS}?mask=id,type,opts.title`
    const http = await t.call('GET', path, { token: bossToken })
    expect(http.status).toBe(200)
    expect(http.body.length).toBeGreaterThan(0)
    expect(await dispatch(boss, { method: 'GET', path })).toEqual({ status: 200, body: http.body })
  })

  test('query parameters may come in the path or as `query`', async () => {
    const http = await t.call('GET', `${EXTOBJS}?mask=id`, { token: bossToken })
    expect(http.body).toContainEqual({ id: extobjId })
    const given = await dispatch(boss, { method: 'get', path: EXTOBJS, query: { mask: 'id' } })
    expect(given).toEqual({ status: 200, body: http.body })
  })

  test("a query value holding '?' arrives whole, as over HTTP", async () => {
    const filter = encodeURIComponent('{"opts.title":"first"}').replace('first', 'why?')
    await t.call('POST', EXTOBJS, { token: bossToken, body: { type: 'question', opts: { title: 'why?' } } })
    const path = `${EXTOBJS}?filter={"opts.title":"why?"}&mask=type`
    const http = await t.call('GET', `${EXTOBJS}?filter=${filter}&mask=type`, { token: bossToken })
    expect(http.body).toEqual([{ type: 'question' }])
    expect(await dispatch(boss, { method: 'GET', path })).toEqual({ status: 200, body: http.body })
  })

  test('of a parameter given twice, the first counts, as over HTTP', async () => {
    const path = `${EXTOBJS}?mask=id&mask=type`
    const http = await t.call('GET', path, { token: bossToken })
    expect(http.body[0]).toEqual({ id: extobjId })
    expect(await dispatch(boss, { method: 'GET', path })).toEqual({ status: 200, body: http.body })
  })

  test('a point read answers the body HTTP answers, value included', async () => {
    const http = await t.call('GET', `${EXTOBJS}/${extobjId}`, { token: bossToken })
    expect(http.body.value).toEqual({ text: 'hi' })
    expect(await dispatch(boss, { method: 'GET', path: `${EXTOBJS}/${extobjId}` })).toEqual({
      status: 200,
      body: http.body,
    })
  })
})

describe('admission by role, exactly like HTTP', () => {
  test('a role granting GET on the collection lets its holder read the list', async () => {
    const http = await t.call('GET', EXTOBJS, { token: readerToken })
    expect(http.status).toBe(200)
    expect(await dispatch(reader, { method: 'GET', path: EXTOBJS })).toEqual({ status: 200, body: http.body })
  })

  test('the same role does not grant POST on the collection: 403 with the HTTP error body', async () => {
    const body = { type: 'note' }
    const http = await t.call('POST', EXTOBJS, { token: readerToken, body })
    expect(http.status).toBe(403)
    expect(http.body.error_code).toBe(1403)
    expect(await dispatch(reader, { method: 'POST', path: EXTOBJS, body })).toEqual({ status: 403, body: http.body })
  })

  test('nor GET of one item (another path pattern): 403 with the HTTP error body', async () => {
    const path = `${EXTOBJS}/${extobjId}`
    const http = await t.call('GET', path, { token: readerToken })
    expect(http.status).toBe(403)
    expect(await dispatch(reader, { method: 'GET', path })).toEqual({ status: 403, body: http.body })
  })

  test("a session's roles are read live: a role granted after the context was built applies", async () => {
    const listed = await t.call('GET', '/rest/v1/domain/users?mask=id,login', { token: bossToken })
    const readerId = listed.body.find((u: { login: string }) => u.login === 'reader').id
    const late = sessionCtx(t.deps, await sessionOf(readerToken), 'late-grant')
    const path = `${EXTOBJS}/${extobjId}`
    expect((await dispatch(late, { method: 'GET', path })).status).toBe(403)
    const patched = await t.call('PATCH', `/rest/v1/domain/users/${readerId}`, {
      token: bossToken,
      body: { roles: ['lister', 'admin'] },
    })
    expect(patched.status).toBe(200)
    expect((await dispatch(late, { method: 'GET', path })).status).toBe(200)
    await t.call('PATCH', `/rest/v1/domain/users/${readerId}`, { token: bossToken, body: { roles: ['lister'] } })
    expect((await dispatch(late, { method: 'GET', path })).status).toBe(403)
  })
})

describe('routing and bodies', () => {
  test('an unknown path is a 404 error body', async () => {
    expect(await dispatch(boss, { method: 'GET', path: '/rest/v1/nothing/here' })).toEqual({
      status: 404,
      body: { error_code: 1404, error_message: 'no resource at /rest/v1/nothing/here' },
    })
  })

  test('a method the path does not serve is a 405 error body listing what it serves', async () => {
    const http = await t.call('PUT', EXTOBJS, { token: bossToken })
    expect(http.status).toBe(405)
    expect(await dispatch(boss, { method: 'PUT', path: EXTOBJS })).toEqual({ status: 405, body: http.body })
    expect(http.body.error_message).toContain('GET, HEAD, POST, LOOKUP')
  })

  test('a malformed body is a 400 naming the field, as over HTTP', async () => {
    for (const body of [{ type: 5 }, { type: 'x', colour: 'red' }]) {
      const http = await t.call('POST', EXTOBJS, { token: bossToken, body })
      const field = 'colour' in body ? 'colour' : 'type'
      expect([http.status, http.body.error_details]).toEqual([400, { field }])
      expect(await dispatch(boss, { method: 'POST', path: EXTOBJS, body })).toEqual({ status: 400, body: http.body })
    }
  })

  test('a body that is not an object is a 400 naming the body', async () => {
    const result = await dispatch(boss, { method: 'POST', path: EXTOBJS, body: ['not', 'an', 'object'] })
    expect(result.status).toBe(400)
    expect((result.body as { error_details: unknown }).error_details).toEqual({ field: 'body' })
  })
})

describe('writes', () => {
  test("a write is journaled with the session context's actor and request id", async () => {
    const result = await dispatch(boss, { method: 'POST', path: EXTOBJS, body: { type: 'by-session' } })
    expect(result.status).toBe(200)
    const id = (result.body as { id: string }).id
    expect(await journaled(id)).toEqual({
      cmdtype: 'create',
      modifierid: boss.actor.id,
      modifiername: 'boss',
      initiator: 'user',
      request_id: 'dispatch-boss',
    })
  })

  test('a write with the system context is journaled as the system', async () => {
    const sys = systemCtx(t.deps, domain.id, 'dispatch-system')
    const result = await dispatch(sys, { method: 'POST', path: EXTOBJS, body: { type: 'by-system' } })
    expect(result.status).toBe(200)
    const id = (result.body as { id: string }).id
    expect(await journaled(id)).toEqual({
      cmdtype: 'create',
      modifierid: SYSTEM_ACTOR.id,
      modifiername: 'system',
      initiator: 'system',
      request_id: 'dispatch-system',
    })
    const update = await dispatch(sys, { method: 'PATCH', path: `${EXTOBJS}/${id}`, body: { opts: { title: 't' } } })
    expect(update.status).toBe(200)
    expect(await journaled(id)).toMatchObject({ cmdtype: 'update', modifiername: 'system', initiator: 'system' })
  })

  test("a write's after-commit effects run: a user created by dispatch is seen by the access cache at once", async () => {
    const id = '0192a3b4-0000-7000-8000-00000000d15a'
    // the access cache answers (and keeps) "no roles" for this id before the user exists
    expect(await t.deps.access.rolesOf(domain.id, id)).toEqual([])
    const created = await dispatch(boss, {
      method: 'POST',
      path: '/rest/v1/domain/users',
      body: { id, login: 'fresh', name: 'Fresh', pwd: 'fresh-Pass1', roles: ['lister'] },
    })
    expect(created.status).toBe(200)
    expect(await t.deps.access.rolesOf(domain.id, id)).toEqual(['lister'])
    const token = await t.login(domain.name, 'fresh', 'fresh-Pass1')
    expect((await t.call('GET', EXTOBJS, { token })).status).toBe(200)
    const fresh = sessionCtx(t.deps, await sessionOf(token), 'fresh')
    expect((await dispatch(fresh, { method: 'GET', path: EXTOBJS })).status).toBe(200)
  })
})

test('an unexpected exception is a 1500 body without internals, logged with the request id', async () => {
  const lines: string[] = []
  const boom = defineRoute({
    ...TEST_ROUTE,
    handle() {
      throw new Error('secret database detail')
    },
  })
  const deps = { ...t.deps, log: createLogger('error', (l) => lines.push(l)) }
  deps.http = createApp(deps, [{ url: '/boom', file: 'test', module: { GET: boom } }])
  const result = await dispatch(systemCtx(deps, domain.id, 'trace-d1'), { method: 'GET', path: '/boom' })
  expect(result).toEqual({ status: 500, body: { error_code: 1500, error_message: 'internal error' } })
  expect(lines.join('\n')).toContain('trace-d1')
  expect(lines.join('\n')).toContain('secret database detail')
})

describe('domain kind and blocked domains', () => {
  test('a master-only route dispatched in a working domain is a 403, even for the system', async () => {
    const result = await dispatch(systemCtx(t.deps, domain.id, 'kind'), {
      method: 'GET',
      path: '/rest/v1/domain/domains',
    })
    expect(result).toEqual({
      status: 403,
      body: { error_code: 1403, error_message: 'this endpoint is served in the master domain only' },
    })
    const inMaster = await dispatch(systemCtx(t.deps, t.master.id, 'kind'), {
      method: 'GET',
      path: '/rest/v1/domain/domains',
    })
    expect(inMaster.status).toBe(200)
  })

  test('a working-only route dispatched in the master domain is a 403', async () => {
    const result = await dispatch(systemCtx(t.deps, t.master.id, 'kind'), {
      method: 'GET',
      path: '/rest/v1/domain/projects',
    })
    expect(result).toEqual({
      status: 403,
      body: { error_code: 1403, error_message: 'this endpoint is served in working domains only' },
    })
  })

  test("a blocked domain's context is a 403 for a user and admitted for the system", async () => {
    const blocked = await t.createDomain('blocked-dispatch.master')
    await t.createUser(blocked.id, 'u', 'u-Pass1234', ['admin'])
    const user = sessionCtx(t.deps, await sessionOf(await t.login(blocked.name, 'u', 'u-Pass1234')), 'blocked-user')
    expect((await dispatch(user, { method: 'GET', path: EXTOBJS })).status).toBe(200)
    const master = await t.login('master', 'admin', 'admin-Secret_1')
    const block = await t.call('PATCH', `/rest/v1/domain/domains/${blocked.id}`, {
      token: master,
      body: { opts: { isblocked: true } },
    })
    expect(block.status).toBe(200)
    expect(await dispatch(user, { method: 'GET', path: EXTOBJS })).toEqual({
      status: 403,
      body: { error_code: 1403, error_message: 'domain blocked-dispatch.master is blocked' },
    })
    const sys = await dispatch(systemCtx(t.deps, blocked.id, 'blocked-system'), { method: 'GET', path: EXTOBJS })
    expect(sys).toEqual({ status: 200, body: [] })
  })

  test('a context of a domain that no longer exists is a 401', async () => {
    const gone = await dispatch(systemCtx(t.deps, '0192a3b4-0000-7000-8000-0000000000ff', 'gone'), {
      method: 'GET',
      path: EXTOBJS,
    })
    expect(gone).toEqual({
      status: 401,
      body: { error_code: 1401, error_message: 'the domain of this context no longer exists' },
    })
  })
})

test('a context whose session ended (logout) is refused with 401, as its HTTP calls are', async () => {
  await t.createUser(domain.id, 'leaver', 'leaver-Pass1', ['admin'])
  const token = await t.login(domain.name, 'leaver', 'leaver-Pass1')
  const leaver = sessionCtx(t.deps, await sessionOf(token), 'dispatch-leaver')
  expect((await dispatch(leaver, { method: 'GET', path: EXTOBJS })).status).toBe(200)
  expect((await t.call('DELETE', '/rest/v1/iam/sessions/current', { token })).status).toBe(204)
  const after = await dispatch(leaver, { method: 'POST', path: EXTOBJS, body: { type: 'late' } })
  expect([after.status, (after.body as { error_code: number }).error_code]).toEqual([401, 1401])
  expect((await t.call('GET', EXTOBJS, { token })).status).toBe(401)
})

test("a session context acts in the session's current domain, whatever domain the context names", async () => {
  const other = await t.createDomain('elsewhere.master')
  const otherAdmin = await t.adminIn('elsewhere.master')
  const theirs = await t.call('POST', EXTOBJS, { token: otherAdmin, body: { type: 'theirs' } })
  expect(theirs.status).toBe(200)
  const moved = { ...boss, domain: other.id } // what inDomain(boss, other.id) makes
  const listed = await dispatch(moved, { method: 'GET', path: `${EXTOBJS}/${theirs.body.id}` })
  expect(listed.status).toBe(404) // looked up in the boss's own domain, where it does not exist
})

test('the body is taken as JSON: a copy, within MAX_BODY_BYTES, and a value JSON cannot hold is a 400', async () => {
  const body = { type: 'copied', value: { n: 1 } }
  const created = await dispatch(boss, { method: 'POST', path: EXTOBJS, body })
  expect(created.status).toBe(200)
  expect(body).toEqual({ type: 'copied', value: { n: 1 } }) // the caller's object is not the one stored
  const big = 'x'.repeat(t.config.maxBodyBytes)
  const tooBig = await dispatch(boss, { method: 'POST', path: EXTOBJS, body: { type: 'big', value: big } })
  expect([tooBig.status, (tooBig.body as { error_details: unknown }).error_details]).toEqual([413, { field: 'body' }])
  const odd = await dispatch(boss, { method: 'POST', path: EXTOBJS, body: { type: 'odd', value: 1n } })
  expect([odd.status, (odd.body as { error_details: unknown }).error_details]).toEqual([400, { field: 'body' }])
})
