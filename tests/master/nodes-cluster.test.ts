// The node registry across real service processes sharing one Redis (each with its own libSQL file):
// both listed, one's log level changed from the other, termination that lets an upload in flight
// finish, a killed process dropping out when its heartbeat stops.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { NODE_TTL_MS } from '~/master/nodes'
import { httpRequest, RawClient } from '../helpers/raw-http'
import { TEST_REDIS_URL, testPrefix, testRedisKv } from '../helpers/redis'
import { type ServiceProcess, signInTo, startProcess } from '../helpers/process'

const prefix = testPrefix()
const dirs: string[] = []
const procs: Bun.Subprocess[] = []
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL')
  await Promise.all(procs.map((p) => p.exited))
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
  await (await testRedisKv(prefix)).cleanup()
})

type Node = ServiceProcess

/** Starts `bun server.ts` as a node of the test cluster. */
async function startNode(name: string): Promise<Node> {
  const dir = mkdtempSync(join(tmpdir(), `platform-node-${name}-`))
  dirs.push(dir)
  const node = await startProcess({
    DATA_DIR: dir,
    REDIS_URL: TEST_REDIS_URL,
    KV_PREFIX: prefix,
    NODE_NAME: name,
    SITE: 'main_site',
    SHUTDOWN_GRACE_SEC: '10',
  })
  procs.push(node.proc)
  return node
}

const signIn = signInTo

async function call(node: Node, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

const names = async (node: Node, token: string) =>
  ((await call(node, token, 'GET', '/rest/v1/master/nodes?mask=name')).body as { name: string }[]).map((n) => n.name)

/** Polls (a real process's timing, so no clock to move) until `check` holds or `ms` pass. */
async function within(ms: number, check: () => Promise<boolean>): Promise<boolean> {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (await check()) return true
    await Bun.sleep(50)
  }
  return check()
}

test('two processes: listed by each other, a live log level change, and a graceful termination', async () => {
  const [a, b] = await Promise.all([startNode('node-a'), startNode('node-b')])
  const tokenA = await signIn(a)
  const tokenB = await signIn(b)
  expect(await names(a, tokenA)).toEqual(['node-a', 'node-b'])
  expect(await names(b, tokenB)).toEqual(['node-a', 'node-b'])

  // node-b's level, changed from node-a: node-b applies it and says so in its own log
  const patched = await call(a, tokenA, 'PATCH', '/rest/v1/master/nodes/node-b', { maxLogLevel: 'debug' })
  expect(patched.status).toBe(200)
  expect(patched.body).toMatchObject({ name: 'node-b', site: 'main_site', maxLogLevel: 'debug', status: 'active' })
  expect(await within(2000, async () => b.out().includes('"msg":"log level changed"'))).toBe(true)
  expect((await call(b, tokenB, 'GET', '/rest/v1/master/node/node-b')).body.maxLogLevel).toBe('debug')

  // an upload to node-b is in flight when node-a asks node-b to terminate
  const upload = await RawClient.open(b.port)
  const body = JSON.stringify({ type: 'upload', value: { text: 'x'.repeat(2000) } })
  const head = httpRequest(
    'POST',
    '/rest/v1/reference/extobjs',
    { authorization: `Bearer ${tokenB}`, 'content-type': 'application/json' },
    body,
  )
  upload.write(head.slice(0, head.length - 1000))
  expect((await call(a, tokenA, 'DELETE', '/rest/v1/master/nodes/node-b')).status).toBe(204)
  // node-b has left the registry and accepts no new connection...
  expect(await names(a, tokenA)).toEqual(['node-a'])
  expect(
    await within(2000, () =>
      RawClient.open(b.port).then(
        (c) => {
          c.end()
          return false
        },
        () => true,
      ),
    ),
  ).toBe(true)
  // ...but the upload it had begun completes and is answered
  upload.write(head.slice(head.length - 1000))
  const [answer] = await upload.responses(1)
  expect(answer?.status).toBe(200)
  expect(JSON.parse(answer!.body)).toMatchObject({ type: 'upload' })
  expect(await b.proc.exited).toBe(0)
  expect(b.out()).toContain('"msg":"terminating on request"')
}, 60_000)

test('a process killed without a stop drops out when its heartbeat record expires', async () => {
  const [a, c] = await Promise.all([startNode('node-a2'), startNode('node-c')])
  const token = await signIn(a)
  expect(await names(a, token)).toContain('node-c')
  c.proc.kill('SIGKILL')
  const killedAt = Date.now()
  expect(await within(NODE_TTL_MS + 3000, async () => !(await names(a, token)).includes('node-c'))).toBe(true)
  expect(Date.now() - killedAt).toBeLessThan(NODE_TTL_MS + 3000)

  // a node may terminate itself: the call is answered, then the process exits cleanly
  expect((await call(a, token, 'DELETE', '/rest/v1/master/nodes/node-a2')).status).toBe(204)
  expect(await a.proc.exited).toBe(0)
}, 60_000)
