// APP_PROCESSES=3: one service of three app processes on one port (the kernel spreads connections over
// their listeners), on one database file and one Redis. Every request here goes on a connection of
// its own, to the next process in turn (a connection is opened until it reaches that one), and each
// answer's X-Request-Id prefix tells which process served it: sessions, bans, session limits, class
// changes, websocket pushes and webhook deliveries must behave as they do with one process.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { alive, type ServiceProcess, startProcess } from '../helpers/process'
import { httpRequest, RawClient } from '../helpers/raw-http'
import { TEST_REDIS_URL, testPrefix, testRedisKv } from '../helpers/redis'
import { ADMIN_PASSWORD } from '../helpers/service'
import { openWs } from '../helpers/ws'

const prefix = testPrefix()
const work = mkdtempSync(join(tmpdir(), 'platform-workers-'))
let svc: ServiceProcess

const hooks: { body: Record<string, unknown> }[] = []
const receiver = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    hooks.push({ body: (await req.json()) as Record<string, unknown> })
    return new Response(null, { status: 200 })
  },
})

beforeAll(async () => {
  svc = await startProcess({
    DATA_DIR: work,
    APP_PROCESSES: process.env.TEST_APP_PROCESSES ?? '3',
    REDIS_URL: TEST_REDIS_URL,
    KV_PREFIX: prefix,
    SESSION_MAX_PER_USER: '2',
    WEBHOOK_ALLOW_PRIVATE: '127.0.0.1/32',
  })
}, 60_000)
afterAll(async () => {
  svc?.proc.kill('SIGTERM')
  await svc?.proc.exited
  receiver.stop(true)
  rmSync(work, { recursive: true, force: true })
  await (await testRedisKv(prefix)).cleanup()
})

interface Answer {
  status: number
  body: any
  /** Which app process answered: the per-process prefix of its request ids. */
  process: string
}

/** Which app process answered: the per-process prefix of the answer's request id. */
const processOf = (r: { headers: Record<string, string> }) => String(r.headers['x-request-id']).split('-')[0]!

/** The app processes, once all three answered; then each call goes to the next of them in turn. */
let processes: string[] = []
let turn = 0
/** Off once processes die and come back: calls then land where the kernel puts them. */
let inTurn = true

/** A connection from `from` to the next process in turn (a probe on it tells which one it reached). */
async function nextConnection(from: string): Promise<{ c: RawClient; answered: number }> {
  if (!inTurn || processes.length < 3) return { c: await RawClient.open(svc.port, '127.0.0.1', from), answered: 0 }
  const wanted = processes[turn++ % processes.length]
  for (let tries = 0; tries < 200; tries++) {
    const c = await RawClient.open(svc.port, '127.0.0.1', from)
    c.write(httpRequest('GET', '/healthz'))
    const [probe] = await c.responses(1)
    if (probe && processOf(probe) === wanted) return { c, answered: 1 }
    c.end()
  }
  throw new Error(`no connection reached process ${wanted}`)
}

/** One request on a new connection (to the next process), from `from` (a loopback address). */
async function call(method: string, path: string, opts: { token?: string; body?: unknown; from?: string } = {}) {
  const { c, answered } = await nextConnection(opts.from ?? '127.0.0.1')
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (opts.token) headers.authorization = `Bearer ${opts.token}`
  c.write(httpRequest(method, path, headers, opts.body === undefined ? undefined : JSON.stringify(opts.body)))
  const r = (await c.responses(answered + 1))[answered]
  c.end()
  const text = r!.body.toString()
  return { status: r!.status, body: text ? JSON.parse(text) : null, process: processOf(r!) } satisfies Answer
}

/** The same call `n` times, each on its own connection. */
const calls = (n: number, method: string, path: string, opts: Parameters<typeof call>[2] = {}) =>
  Promise.all(Array.from({ length: n }, () => call(method, path, opts)))
const processesOf = (answers: Answer[]) => new Set(answers.map((a) => a.process)).size

async function signIn(domain: string, login: string, pwd: string, from?: string) {
  const r = await call('POST', '/rest/v1/iam/sessions', { body: { domain, login, pwd, session_type: 'token' }, from })
  return { ...r, token: r.body?.session_token as string }
}

/**
 * How long an event may take from a write to its push or delivery: the journal pump (one process of
 * the cluster, every 500 ms), Redis pub/sub, then the socket or the webhook queue. Generous: with the
 * whole suite running beside three processes on two cores, 10 s was missed now and then.
 */
const EVENT_WAIT_MS = 30_000
/** The service's log lines at warn or error, for a failure's message. */
const troubles = () =>
  svc
    .out()
    .split('\n')
    .filter((l) => /"level":"(warn|error)"/.test(l))
    .join('\n')

/** A websocket of the token's session subscribed to the changes of extobjs. */
async function extobjChanges(token: string) {
  const ws = await openWs(`${svc.url.replace('http', 'ws')}/ws?token=${token}`)
  ws.send([
    'subscribe',
    { id: 'x', expires: 60, events: ['modelevents.data_changed'], classpath: '/rest/v1/reference/extobjs' },
  ])
  await ws.next((f) => f[0] === 'subscribe')
  return ws
}

/** Polls `check` until it holds or `ms` pass; answers whether it held. */
async function eventually(check: () => Promise<boolean>, ms = 10_000) {
  for (const until = Date.now() + ms; Date.now() < until; await Bun.sleep(50)) if (await check()) return true
  return false
}

describe('APP_PROCESSES=3', () => {
  let admin: string
  let domainAdmin: string
  let domainId: string
  let annId: string

  test('three processes answer on one port, each registered as a node', async () => {
    const seen = new Set<string>()
    for (let i = 0; i < 200 && seen.size < 3; i++) seen.add((await call('GET', '/healthz')).process)
    processes = [...seen]
    expect(processes).toHaveLength(3)
    expect(processesOf(await calls(9, 'GET', '/healthz'))).toBe(3)
    admin = (await signIn('master', 'admin', ADMIN_PASSWORD)).token
    const nodes = await call('GET', '/rest/v1/master/nodes', { token: admin })
    expect(nodes.body).toHaveLength(3)
    expect(new Set(nodes.body.map((n: { name: string }) => n.name)).size).toBe(3)
    const made = await call('POST', '/rest/v1/domain/domains', { token: admin, body: { name: 'w3.master' } })
    expect(made.status).toBe(200)
    domainId = made.body.id
    domainAdmin = (await signIn('master', 'admin', ADMIN_PASSWORD)).token
    expect(
      (await call('PATCH', '/rest/v1/iam/sessions/current', { token: domainAdmin, body: { domain: 'w3.master' } }))
        .status,
    ).toBe(204)
  })

  test('a session made on one process works on every process, and ends on every process', async () => {
    const user = { login: 'ann', name: 'Ann', pwd: 'ann-Pass1', roles: ['user'] }
    const created = await call('POST', '/rest/v1/domain/users', { token: domainAdmin, body: user })
    expect(created.status).toBe(200)
    annId = created.body.id
    const ann = await signIn('w3.master', 'ann', 'ann-Pass1')
    const reads = await calls(6, 'GET', '/rest/v1/iam/sessions/current', { token: ann.token })
    expect(reads.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200])
    expect(processesOf(reads)).toBe(3)
    expect((await call('DELETE', '/rest/v1/iam/sessions/current', { token: ann.token })).status).toBe(204)
    // a dead token counts as a failed sign-in of its address: these come from one of their own
    const after = await calls(6, 'GET', '/rest/v1/iam/sessions/current', { token: ann.token, from: '127.0.0.2' })
    expect(after.map((r) => r.status)).toEqual([401, 401, 401, 401, 401, 401])
  })

  test('the session limit per user holds across processes: the oldest of three ends everywhere', async () => {
    const made = []
    for (let i = 0; i < 3; i++) made.push(await signIn('w3.master', 'ann', 'ann-Pass1', '127.0.0.3'))
    expect(processesOf(made)).toBe(3)
    const oldest = await calls(3, 'GET', '/rest/v1/iam/sessions/current', { token: made[0]!.token, from: '127.0.0.3' })
    expect(oldest.map((r) => r.status)).toEqual([401, 401, 401])
    const newest = await calls(3, 'GET', '/rest/v1/iam/sessions/current', { token: made[2]!.token })
    expect(newest.map((r) => r.status)).toEqual([200, 200, 200])
  })

  test('a class change made on one process is in force on the others at once', async () => {
    const made = await call('POST', '/rest/v1/design/classes', {
      token: domainAdmin,
      body: { classname: 'w3/items', properties: [{ name: 'title', data_type: 'string' }] },
    })
    expect(made.status).toBe(200)
    const created = await calls(6, 'POST', '/rest/v1/model/w3/items', { token: domainAdmin, body: { title: 'a' } })
    expect(created.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200])
    expect(processesOf(created)).toBe(3)
    const changed = await call('PATCH', `/rest/v1/design/classes/${made.body.id}`, {
      token: domainAdmin,
      body: {
        properties: [
          { name: 'title', data_type: 'string' },
          { name: 'qty', data_type: 'int' },
        ],
      },
    })
    expect(changed.status).toBe(200)
    const typed = await calls(6, 'POST', '/rest/v1/model/w3/items', { token: domainAdmin, body: { qty: 'many' } })
    expect(typed.map((r) => r.status)).toEqual([400, 400, 400, 400, 400, 400])
    const counted = await calls(3, 'GET', '/rest/v1/model/w3/items?limit=100', { token: domainAdmin })
    expect(counted.map((r) => r.body.length)).toEqual([6, 6, 6])
  })

  test('a websocket on one process gets the changes written through the others, once each', async () => {
    const ws = await extobjChanges(domainAdmin)
    const writes = await calls(6, 'POST', '/rest/v1/reference/extobjs', { token: domainAdmin, body: { type: 'w3' } })
    expect(processesOf(writes)).toBe(3)
    const seen = new Set<string>()
    for (let i = 0; i < 6; i++) {
      const [, event] = await ws
        .next((f) => f[0] === 'event', EVENT_WAIT_MS)
        .catch((err) => {
          throw new Error(`${err.message}\nthe service's warnings and errors:\n${troubles()}`)
        })
      seen.add((event as { data: { id: string } }).data.id)
    }
    expect(seen).toEqual(new Set(writes.map((w) => w.body.id)))
    ws.close()
  }, 60_000)

  test('writes through every process at once reach a websocket once each, in journal order', async () => {
    // the pump's holder takes its own commits from memory and reads the others' (src/journal/recent.ts)
    const ws = await extobjChanges(domainAdmin)
    const writes = await calls(45, 'POST', '/rest/v1/reference/extobjs', {
      token: domainAdmin,
      body: { type: 'order' },
    })
    expect(processesOf(writes)).toBe(3)
    const events: { seq: number; id: string }[] = []
    while (events.length < writes.length) {
      const [, event] = await ws
        .next((f) => f[0] === 'event', EVENT_WAIT_MS)
        .catch((err) => {
          throw new Error(`${err.message} after ${events.length}\nthe service's warnings and errors:\n${troubles()}`)
        })
      const { seq, data } = event as { seq: number; data: { id: string } }
      events.push({ seq, id: data.id })
    }
    expect(new Set(events.map((e) => e.id))).toEqual(new Set(writes.map((w) => w.body.id)))
    const seqs = events.map((e) => e.seq)
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
    expect(new Set(seqs).size).toBe(seqs.length)
    ws.close()
  }, 60_000)

  test('a webhook subscription made on one process is delivered once per change, whichever process wrote it', async () => {
    const channel = await call('POST', '/rest/v1/service/integration_points', {
      token: domainAdmin,
      // a channel's roles must read what it subscribes to (a channel without roles is refused)
      body: {
        code: 'w3hook',
        type: 'subscr',
        url: `http://127.0.0.1:${receiver.port}/hook`,
        opts: { roles: ['admin'] },
      },
    })
    expect(channel.status).toBe(200)
    const subscribed = await call('POST', '/rest/v1/service/webhooks', {
      token: channel.body.token_local,
      body: { expires: 600, events: ['modelevents.data_changed'], objects: ['extobj'] },
    })
    expect(subscribed.status).toBe(200)
    hooks.length = 0
    const writes = await calls(3, 'POST', '/rest/v1/reference/extobjs', { token: domainAdmin, body: { type: 'hook' } })
    expect(processesOf(writes)).toBe(3)
    const delivered = await eventually(async () => hooks.length >= 3, EVENT_WAIT_MS)
    expect(delivered ? '' : `${hooks.length} of 3 delivered; the service's warnings and errors:\n${troubles()}`).toBe(
      '',
    )
    await Bun.sleep(500) // a duplicate would come from another process's queue pass meanwhile
    expect(hooks).toHaveLength(3)
  }, 60_000)

  test('a role granted and a domain blocked on one process are in force on every process at once', async () => {
    const ann = await signIn('w3.master', 'ann', 'ann-Pass1', '127.0.0.4')
    const users = () => calls(3, 'GET', '/rest/v1/domain/users', { token: ann.token, from: '127.0.0.4' })
    expect((await users()).map((r) => r.status)).toEqual([403, 403, 403])
    const granted = await call('PATCH', `/rest/v1/domain/users/${annId}`, {
      token: domainAdmin,
      body: { roles: ['admin'] },
    })
    expect(granted.status).toBe(200)
    expect((await users()).map((r) => r.status)).toEqual([200, 200, 200])
    const block = (isblocked: boolean) =>
      call('PATCH', `/rest/v1/domain/domains/${domainId}`, { token: admin, body: { opts: { isblocked } } })
    expect((await block(true)).status).toBe(200)
    expect((await users()).map((r) => r.status)).toEqual([403, 403, 403])
    expect((await block(false)).status).toBe(200)
    expect((await users()).map((r) => r.status)).toEqual([200, 200, 200])
  })

  test('failed sign-ins count together: the ban from one address holds on every process', async () => {
    const from = '127.0.0.9'
    const failures = []
    for (let i = 0; i < 5; i++) failures.push(await signIn('master', 'admin', 'wrong-Pass1', from))
    expect(processesOf(failures)).toBe(3)
    const banned = await Promise.all(Array.from({ length: 3 }, () => signIn('master', 'admin', ADMIN_PASSWORD, from)))
    expect(banned.map((r) => r.status)).toEqual([429, 429, 429])
    expect((await signIn('master', 'admin', ADMIN_PASSWORD, '127.0.0.10')).status).toBe(200)
  })

  /** The pids of the app processes, from their node names (host name + pid by default). */
  async function appPids(): Promise<number[]> {
    const nodes = await call('GET', '/rest/v1/master/nodes', { token: admin })
    return nodes.body.map((n: { name: string }) => Number(n.name.split('-').pop()))
  }

  test('an app process that dies is passed over at once and started again', async () => {
    inTurn = false
    admin = (await signIn('master', 'admin', ADMIN_PASSWORD, '127.0.0.11')).token // the first ended (2 per user)
    const child = (await appPids()).find((pid) => pid !== svc.proc.pid)!
    process.kill(child, 'SIGKILL')
    expect(await eventually(async () => !alive(child), 5000)).toBe(true)
    const meanwhile = await calls(6, 'GET', '/rest/v1/iam/sessions/current', { token: admin })
    expect(meanwhile.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200])
    expect(await eventually(async () => processesOf(await calls(9, 'GET', '/healthz')) === 3)).toBe(true)
    expect(await eventually(async () => (await appPids()).length === 3 && !(await appPids()).includes(child))).toBe(
      true,
    )
  })

  test('an app process ended on request (DELETE of its node) stays ended; the others serve on', async () => {
    const child = (await appPids()).find((pid) => pid !== svc.proc.pid)!
    const nodes = (await call('GET', '/rest/v1/master/nodes', { token: admin })).body as { name: string }[]
    const name = nodes.find((n) => n.name.endsWith(`-${child}`))!.name
    expect((await call('DELETE', `/rest/v1/master/nodes/${name}`, { token: admin })).status).toBeLessThan(300)
    expect(await eventually(async () => !alive(child), 10_000)).toBe(true)
    await Bun.sleep(1500) // longer than the restart pause of a process that died
    const after = await calls(20, 'GET', '/healthz')
    expect(after.every((r) => r.status === 200)).toBe(true)
    expect(processesOf(after)).toBe(2) // twenty connections, spread by the kernel: both reached
  })

  test('SIGTERM stops every process, and the service exits 0', async () => {
    const pids = await appPids()
    svc.proc.kill('SIGTERM')
    expect(await svc.proc.exited).toBe(0)
    expect(await eventually(async () => !pids.some(alive), 5000)).toBe(true)
  })
})
