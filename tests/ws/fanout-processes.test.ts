// A change committed by one service process reaches a websocket subscriber of another process
// through Redis pub/sub. Two processes need one database for this (the subscriber's session and
// roles are read from it): the second starts on a copy of the first's, made while it was stopped,
// and runs no workers, so the journal pump is the first's.
import { afterAll, expect, test } from 'bun:test'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ServiceProcess, signInTo, startProcess } from '../helpers/process'
import { TEST_REDIS_URL, testPrefix, testRedisKv } from '../helpers/redis'
import { openWs } from '../helpers/ws'

const prefix = testPrefix()
const work = mkdtempSync(join(tmpdir(), 'platform-fanout-'))
const running: ServiceProcess[] = []
afterAll(async () => {
  for (const p of running) p.proc.kill('SIGKILL')
  await Promise.all(running.map((p) => p.proc.exited))
  rmSync(work, { recursive: true, force: true })
  await (await testRedisKv(prefix)).cleanup()
})

test('a write on process A is pushed to a socket on process B', async () => {
  const env = (name: string, extra: Record<string, string> = {}) => ({
    DATA_DIR: join(work, name),
    REDIS_URL: TEST_REDIS_URL,
    KV_PREFIX: prefix,
    NODE_NAME: name,
    ...extra,
  })
  const first = await startProcess(env('a'))
  first.proc.kill('SIGTERM')
  expect(await first.proc.exited).toBe(0)
  cpSync(join(work, 'a'), join(work, 'b'), { recursive: true })
  const [a, b] = await Promise.all([startProcess(env('a')), startProcess(env('b', { BACKGROUND: 'off' }))])
  running.push(a, b)

  const token = await signInTo(a)
  const c = await openWs(`${b.url.replace('http', 'ws')}/ws?token=${token}`)
  c.send([
    'subscribe',
    { id: 'x', expires: 60, events: ['modelevents.data_changed'], classpath: '/rest/v1/reference/extobjs' },
  ])
  await c.next((f) => f[0] === 'subscribe')
  const res = await fetch(`${a.url}/rest/v1/reference/extobjs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: JSON.stringify({ type: 'across' }),
  })
  const made = (await res.json()) as { id: string }
  const [, event] = await c.next((f) => f[0] === 'event', 5000)
  expect(event).toMatchObject({ subscription: 'x', data: { id: made.id, operation: 1 } })
  c.close()
}, 60_000)
