// A socket that is to close runs no new frame, over a real socket (issue 38): after its session
// switched domain while a frame was still running, further frames are refused (409) and the socket
// closes once the running one is answered; a frame whose session is in another domain than the
// socket's (a switch not heard yet) is refused and the socket closes with 4002.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Session } from '~/identity/sessions'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'
import { openWs, type WsClient } from '../helpers/ws'

let t: TestService
let wsUrl: string
let other: { id: string; name: string }
let qid = 0
beforeAll(async () => {
  t = await testService({ listen: true, kv: 'memory' })
  await t.createDomain('closing.master')
  other = await t.createDomain('other.master')
  wsUrl = `${t.service.url!.replace('http', 'ws')}/ws`
})
afterAll(() => t.close())

const send = (c: WsClient, payload: Record<string, unknown>) => {
  const id = `q${++qid}`
  c.send(['rest', { qid: id, ...payload }])
  return id
}
const answer = async (c: WsClient, id: string) => (await c.next((f) => f[0] === 'rest' && f[1].qid === id))[1]
const current = { operation: 'read', classpath: '/rest/v1/iam/sessions/current' }

test('a frame kept in flight does not keep a switched socket open: new frames are refused', async () => {
  const token = await t.login('master', 'admin', ADMIN_PASSWORD)
  const c = await openWs(`${wsUrl}?token=${token}`)
  const made = await t.call('POST', '/rest/v1/reference/extobjs', { token, body: { type: 'held' } })
  expect(made.status).toBe(200)
  // reads of extobjs wait until released: one frame stays in flight
  let release = () => {}
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  const repo = t.deps.repo.bind(t.deps)
  t.deps.repo = ((table) => {
    const r = repo(table)
    if (table.objtype !== 'extobj') return r
    const held = { get: (...a: Parameters<typeof r.get>) => gate.then(() => r.get(...a)) }
    return Object.assign(Object.create(r), held, {
      getJson: (...a: Parameters<typeof r.getJson>) => gate.then(() => r.getJson(...a)),
    })
  }) as typeof t.deps.repo
  try {
    const held = send(c, { operation: 'read', classpath: `/rest/v1/reference/extobjs/${made.body.id}` })
    await Bun.sleep(50)
    const switched = await t.call('PATCH', '/rest/v1/iam/sessions/current', { token, body: { domain: other.name } })
    expect(switched.status).toBe(204)
    await Bun.sleep(50)
    const after = await answer(c, send(c, current))
    expect(after.error).toMatchObject({ error_code: 1409 })
    release()
    expect((await answer(c, held)).result).toMatchObject({ id: made.body.id })
    expect((await c.closed).code).toBe(4002)
  } finally {
    release()
    t.deps.repo = repo
  }
})

test("a frame whose session is in another domain than the socket's is refused, and the socket closes", async () => {
  const token = await t.login('master', 'admin', ADMIN_PASSWORD)
  const c = await openWs(`${wsUrl}?token=${token}`)
  expect((await answer(c, send(c, current))).result).toBeDefined()
  // the switch made elsewhere, not heard by this process: the session store answers the new domain
  const sessions = t.deps.sessions
  const get = sessions.get.bind(sessions)
  const moved = (s: Session | null) => (s ? { ...s, domainId: other.id } : s)
  sessions.get = (id) => {
    const s = get(id)
    return s instanceof Promise ? s.then(moved) : moved(s)
  }
  try {
    const refused = await answer(c, send(c, current))
    expect(refused.error).toMatchObject({ error_code: 1409 })
    expect((await c.closed).code).toBe(4002)
  } finally {
    sessions.get = get
  }
})
