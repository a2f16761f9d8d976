// Deleting a domain leaves no key of it in Redis: its webhook subscriptions (live and removed ones),
// its script handlers' records and outcomes. A domain created again with its id, and a channel
// with the old channel's id, find none of them.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createClient } from 'redis'
import { createLogger } from '~/log'
import { TEST_REDIS_URL, testPrefix } from '../helpers/redis'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

const prefix = testPrefix()
const DOMAINS = '/rest/v1/domain/domains'
const RUNTIMES = '/rest/v1/service/svcscript_runtimes'
const HOOKS = '/rest/v1/service/webhooks'
let t: TestService
let master: string
const logs: Record<string, unknown>[] = []
beforeAll(async () => {
  t = await testService({
    kvPrefix: prefix,
    licence: { webservice_subscr: 10 },
    log: createLogger('info', (line) => logs.push(JSON.parse(line))),
  })
  master = await t.login('master', 'admin', ADMIN_PASSWORD)
})
afterAll(() => t.close())

/** Every key of the test's Redis prefix that names the domain. */
async function keysOf(domain: string): Promise<string[]> {
  const c = createClient({ url: TEST_REDIS_URL })
  await c.connect()
  const keys: string[] = []
  for await (const batch of c.scanIterator({ MATCH: `${prefix}*${domain}*`, COUNT: 500 })) keys.push(...batch)
  await c.quit()
  return keys.map((k) => k.slice(prefix.length)).sort()
}

const ok = async (res: Promise<{ status: number; text: string; body: any }>, status = 200) => {
  const r = await res
  if (r.status !== status) throw new Error(`${r.status} ${r.text}`)
  return r.body
}

/** The domain of `id` with a subscr channel of `channelId`: the channel's token and an admin's. */
async function tenant(id: string, channelId: string) {
  await ok(t.call('POST', DOMAINS, { token: master, body: { id, name: 'reused.master' } }))
  const admin = await t.adminIn('reused.master')
  const body = { id: channelId, code: 'crm', type: 'subscr' }
  const channel = await ok(t.call('POST', '/rest/v1/service/integration_points', { token: admin, body }))
  return { admin, channel: channel.token_local as string }
}

test("a deleted domain's webhook subscriptions and handler records leave Redis, and do not come back with its id", async () => {
  const id = crypto.randomUUID()
  const channelId = crypto.randomUUID()
  const old = await tenant(id, channelId)
  const subscribe = () =>
    ok(t.call('POST', HOOKS, { token: old.channel, body: { events: ['customevents.*'], expires: 600 } }))
  const live = await subscribe()
  const removed = await subscribe()
  await ok(t.call('DELETE', `${HOOKS}/${removed.id}`, { token: old.channel }))
  const script = (code: string, scriptdata: string) =>
    ok(t.call('POST', '/rest/v1/service/svcscripts', { token: old.admin, body: { code, name: code, scriptdata } }))
  await script('quick', 'return 1')
  await script('slow', 'await sleep(600000)')
  const quick = await ok(t.call('POST', RUNTIMES, { token: old.admin, body: { code: 'quick' } }))
  const slow = await ok(t.call('POST', RUNTIMES, { token: old.admin, body: { code: 'slow' } }))
  for (let i = 0; i < 300 && (await t.deps.scripts.isRunning(id, quick.id)); i++) await Bun.sleep(10)
  expect(await keysOf(id)).toEqual(
    [
      `handler-outcome:${id}:${quick.id}`,
      `handler:${id}:${slow.id}`,
      `handlers:${id}`,
      // a removed subscription is forgotten at once (its GET is a 404): only the live one is known
      `webhook:known:${id}:${live.id}`,
      `webhook:sub:${id}:${live.id}`,
      `webhook:subs:${id}`,
    ].sort(),
  )

  await ok(t.call('DELETE', `${DOMAINS}/${id}`, { token: master }), 204)
  // the slow handler ends as its domain is gone: its end must not write a key back
  const ended = () => logs.some((l) => l.msg === 'script handler ended' && l.handler === slow.id)
  for (let i = 0; i < 300 && !ended(); i++) await Bun.sleep(10)
  expect(await keysOf(id)).toEqual([])

  const reused = await tenant(id, channelId)
  for (const sub of [live, removed])
    expect(await ok(t.call('GET', `${HOOKS}/${sub.id}`, { token: reused.channel }), 404)).toMatchObject({
      error_message: 'token not found',
    })
  for (const handler of [quick, slow])
    await ok(t.call('GET', `${RUNTIMES}/${handler.id}`, { token: reused.admin }), 404)
  expect(await ok(t.call('GET', RUNTIMES, { token: reused.admin }))).toEqual([])
})
