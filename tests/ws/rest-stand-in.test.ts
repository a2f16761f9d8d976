// /ws `rest` frames as a full stand-in for REST (issue 38, item 5), over real sockets: unknown members
// are a 400 naming them, `params` reaches the journal, a frame that ends or switches its own session is
// answered before the socket closes, and a cookie socket's frame ends the cookie's session only when it
// asked for exactly that.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'
import { openWs, type WsClient } from '../helpers/ws'

// the in-process store ends a session at once, inside the frame's call: the answer must still come first
let t: TestService
let domain: { id: string; name: string }
let wsUrl: string
beforeAll(async () => {
  t = await testService({ listen: true, kv: 'memory' })
  domain = await t.createDomain('standin.master')
  await t.createDomain('other.master')
  wsUrl = `${t.service.url!.replace('http', 'ws')}/ws`
})
afterAll(() => t.close())

let qid = 0
/** Sends a rest frame and waits for its answer. */
async function rest(c: WsClient, payload: Record<string, unknown>) {
  const id = `q${++qid}`
  c.send(['rest', { qid: id, ...payload }])
  const [, body] = await c.next((f) => f[0] === 'rest' && f[1].qid === id)
  return body
}

/** A user of the domain with a session of `kind`, and a socket opened with it. */
async function socketOf(kind: 'token' | 'cookie', login: string) {
  await t.createUser(domain.id, login, `${login}-Pass1`, ['admin'])
  const credential = await t.login('standin.master', login, `${login}-Pass1`, kind)
  const c =
    kind === 'token'
      ? await openWs(`${wsUrl}?token=${credential}`)
      : await openWs(wsUrl, { cookie: `RSession=${credential}` })
  return { c, credential }
}

const current = (kind: 'token' | 'cookie', credential: string) =>
  t.call('GET', '/rest/v1/iam/sessions/current', kind === 'token' ? { token: credential } : { cookie: credential })

describe('members of a rest frame', () => {
  // [what, extra members, field named]
  const unknown: [string, Record<string, unknown>, string][] = [
    ['a misspelt list member', { filtr: { type: 'note' } }, 'filtr'],
    ['a misspelt limit', { limt: 5 }, 'limt'],
    ['a header-like member', { headers: { 'if-match': '"x"' } }, 'headers'],
    ['a body under another name', { body: { type: 'note' } }, 'body'],
  ]
  for (const [what, extra, field] of unknown)
    test(`${what} is a 400 naming ${field}, as over HTTP; the socket stays open`, async () => {
      const { c } = await socketOf('token', `u${++qid}`)
      const answer = await rest(c, { operation: 'read', classpath: '/rest/v1/reference/extobjs', ...extra })
      expect(answer.error).toMatchObject({ error_code: 1400, error_details: { field } })
      expect((await rest(c, { operation: 'read', classpath: '/rest/v1/reference/extobjs' })).result).toEqual([])
      c.close()
    })

  test('params is carried: the journal is read over the socket as over HTTP', async () => {
    const { c, credential } = await socketOf('token', 'journal')
    const created = (
      await rest(c, { operation: 'create', classpath: '/rest/v1/reference/extobjs', content: { type: 'n', value: 1 } })
    ).result as { id: string }
    const params = { objtype: 'extobj', objid: created.id }
    const overSocket = await rest(c, { operation: 'read', classpath: '/rest/v1/journal/changes', params })
    const overHttp = await t.call(
      'GET',
      `/rest/v1/journal/changes?params=${encodeURIComponent(JSON.stringify(params))}`,
      { token: credential },
    )
    expect(overHttp.status).toBe(200)
    expect(overSocket.result).toEqual(overHttp.body)
    expect(overSocket.result).toMatchObject([{ objid: created.id, cmdtype: 'create' }])
    // a journal read without params is the journal's own 400, a route that takes no params refuses it
    expect((await rest(c, { operation: 'read', classpath: '/rest/v1/journal/changes' })).error).toMatchObject({
      error_code: 1400,
      error_details: { field: 'params' },
    })
    expect(
      (await rest(c, { operation: 'read', classpath: '/rest/v1/reference/extobjs', params: { a: 1 } })).error,
    ).toMatchObject({ error_code: 1400, error_details: { field: 'params' } })
    c.close()
  })
})

describe('a frame that ends or switches its own session', () => {
  // [socket kind, operation, content, close code, the session afterwards: alive in which domain, or gone]
  const cases: ['token' | 'cookie', 'delete' | 'update', unknown, number, string | null][] = [
    ['token', 'delete', undefined, 4001, null],
    ['cookie', 'delete', undefined, 4001, null],
    ['token', 'update', { domain: 'other.master' }, 4002, 'other.master'],
    ['cookie', 'update', { domain: 'other.master' }, 4002, 'other.master'],
  ]
  for (const [kind, operation, content, code, after] of cases)
    test(`${kind} socket, ${operation} of the current session: answered, then closed with ${code}`, async () => {
      // an administrator of the master domain reaches other.master as well
      const credential = await t.login('master', 'admin', ADMIN_PASSWORD, kind)
      const c =
        kind === 'token'
          ? await openWs(`${wsUrl}?token=${credential}`)
          : await openWs(wsUrl, { cookie: `RSession=${credential}` })
      const id = `end${++qid}`
      c.send(['rest', { qid: id, operation, classpath: '/rest/v1/iam/sessions', id: 'current', content }])
      const closed = await c.closed
      expect(closed.code).toBe(code)
      // the answer arrived before the close
      expect(c.frames).toContainEqual(['rest', { qid: id, result: null }])
      const res = await current(kind, credential)
      if (after === null) expect(res.status).toBe(401)
      else expect([res.status, res.body.domain]).toEqual([200, after])
    })
})

describe("a cookie socket's frames never end the cookie's session unasked", () => {
  test('a sign-in, a token clone, a failed sign-in and an own password change leave it alive', async () => {
    const { c, credential } = await socketOf('cookie', 'keeper')
    const signIn = { domain: 'standin.master', login: 'keeper', pwd: 'keeper-Pass1' }
    expect(await rest(c, { operation: 'create', classpath: '/rest/v1/iam/sessions', content: signIn })).toMatchObject({
      result: null,
    })
    const clone = await rest(c, {
      operation: 'create',
      classpath: '/rest/v1/iam/sessions',
      content: { session_type: 'token_clone_cookie' },
    })
    expect(clone.result).toMatchObject({ session_token: expect.any(String) })
    const failed = await rest(c, {
      operation: 'create',
      classpath: '/rest/v1/iam/sessions',
      content: { ...signIn, pwd: 'wrong-Pass1' },
    })
    expect(failed.error).toMatchObject({ error_code: 1401 })
    const me = (await rest(c, { operation: 'read', classpath: '/rest/v1/iam/sessions/current' })).result as {
      user_id: string
    }
    const changed = await rest(c, {
      operation: 'update',
      classpath: '/rest/v1/domain/users',
      id: me.user_id,
      content: { pwd: 'keeper-Pass2' },
    })
    expect(changed.error).toBeUndefined()
    expect((await current('cookie', credential)).status).toBe(200)
    expect((await rest(c, { operation: 'read', classpath: '/rest/v1/iam/sessions/current' })).result).toMatchObject({
      login: 'keeper',
    })
    expect(c.ws.readyState).toBe(WebSocket.OPEN)
    c.close()
  })
})
