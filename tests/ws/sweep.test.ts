// The ws-sessions worker: a session whose idle lifetime ran out without anyone ending it closes its
// sockets at the worker's next pass, and expired subscriptions are dropped; live ones stay.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'
import { openWs } from '../helpers/ws'

let t: TestService
beforeAll(async () => {
  // the in-process store expires keys on the test clock, so the idle lifetime can run out at once
  t = await testService({ listen: true, kv: 'memory' })
})
afterAll(() => t.close())

test('a silently expired session closes its socket (4001); a live one keeps it', async () => {
  const wsUrl = `${t.service.url!.replace('http', 'ws')}/ws`
  const quiet = await openWs(`${wsUrl}?token=${await t.login('master', 'admin', ADMIN_PASSWORD)}`)
  quiet.send(['subscribe', { id: 'x', expires: 60, events: ['custom.ping'] }])
  await quiet.next((f) => f[0] === 'subscribe')
  expect(t.service.sockets.stats()).toEqual({ sockets: 1, subscriptions: 1 })

  t.clock.advance(61_000) // the subscription lapsed; the session (30 min idle) lives on
  await t.run('ws-sessions')
  expect(t.service.sockets.stats()).toEqual({ sockets: 1, subscriptions: 0 })

  const busy = await openWs(`${wsUrl}?token=${await t.login('master', 'admin', ADMIN_PASSWORD)}`)
  t.clock.advance(t.config.sessionIdleTimeoutSec * 1000 - 1000)
  busy.send(['rest', { qid: 1, operation: 'read', classpath: '/rest/v1/iam/sessions/current' }]) // extends it
  await busy.next((f) => f[0] === 'rest')
  t.clock.advance(2000) // the quiet session's lifetime is over, the busy one's not
  await t.run('ws-sessions')
  expect(await quiet.closed).toMatchObject({ code: 4001, reason: 'the session has expired' })
  expect(busy.ws.readyState).toBe(WebSocket.OPEN)
  busy.close()
})
