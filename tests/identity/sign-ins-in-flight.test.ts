// The brute-force filter's sign-ins in flight (src/identity/brute-force.ts): one held open past a
// minute still counts, and sign-ins under two keys (address and account) are queued in one order.
import { afterAll, expect, test } from 'bun:test'
import { ManualClock } from '~/clock'
import { beginSignIn, FAILURE_WINDOW_MS } from '~/identity/brute-force'
import { createMemoryKv } from '~storage/kv/memory'
import { testService } from '../helpers/service'

const clock = new ManualClock(Date.now())
const t = await testService({ kv: 'memory', clock })
afterAll(() => t.close())

/** A sign-in whose body is sent in two parts, the second when `finish` is called. */
function slowSignIn(pwd: string) {
  let sending!: ReadableStreamDefaultController<Uint8Array>
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      sending = c
    },
  })
  const text = JSON.stringify({ domain: t.config.masterDomain, login: 'admin', pwd })
  sending.enqueue(new TextEncoder().encode(text.slice(0, 5)))
  const answer = t.app.handle(
    new Request('http://test.local/rest/v1/iam/sessions', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-real-ip': '10.9.9.9' },
      duplex: 'half',
    } as RequestInit),
  )
  return {
    answer,
    finish() {
      sending.enqueue(new TextEncoder().encode(text.slice(5)))
      sending.close()
    },
  }
}

test('guesses held open for minutes still count: no more than 5 are checked', async () => {
  const first = Array.from({ length: 5 }, (_, i) => slowSignIn(`wrong-${i}`))
  await Bun.sleep(100)
  clock.advance(61_000) // an entry in flight lapsed after a minute, and 5 more guesses were let in
  const second = Array.from({ length: 5 }, (_, i) => slowSignIn(`wrong-again-${i}`))
  await Bun.sleep(100)
  const all = [...first, ...second]
  for (const s of all) s.finish()
  const statuses = await Promise.all(all.map(async (s) => (await s.answer).status))
  expect(statuses.filter((s) => s === 401)).toHaveLength(5)
  expect(statuses.filter((s) => s === 429)).toHaveLength(5)
}, 15_000)

test('two sign-ins under an address and an account, near the limit on both: the second goes once the first is decided', async () => {
  const kv = createMemoryKv()
  const now = Date.now()
  for (let i = 0; i < 4; i++) {
    await kv.window('auth-failures:10.1.1.1', now, FAILURE_WINDOW_MS, `${now}:a${i}`)
    await kv.window('auth-failures:account:d:u', now, FAILURE_WINDOW_MS, `${now}:b${i}`)
  }
  const log = { warn() {}, info() {}, error() {}, debug() {} }
  const req = { clientAddress: '10.1.1.1', deps: { kv, clock: { now: () => Date.now() }, log } } as never
  const first = await beginSignIn(req, 'd:u')
  let secondGoes = false
  const second = beginSignIn(req, 'd:u').then((attempt) => {
    secondGoes = true
    return attempt
  })
  await Bun.sleep(60)
  expect(secondGoes).toBe(false) // it would be the fifth failure on both keys
  const decided = performance.now()
  await first.cancel() // the right password
  await (await second).cancel()
  expect(performance.now() - decided).toBeLessThan(500)
})

test('a failure the store could not count still leaves the pending log', async () => {
  const kv = createMemoryKv()
  const failing = new Proxy(kv, {
    get: (target, name) =>
      name === 'window'
        ? (key: string, now: number, windowMs: number, entry?: string) =>
            entry === undefined ? target.window(key, now, windowMs) : Promise.reject(new Error('store gone'))
        : Reflect.get(target, name),
  })
  const log = { warn() {}, info() {}, error() {}, debug() {} }
  const req = { clientAddress: '10.2.2.2', deps: { kv: failing, clock: { now: () => Date.now() }, log } } as never
  const attempt = await beginSignIn(req)
  expect(await kv.zrange('auth-failures:10.2.2.2:pending')).toHaveLength(1)
  await expect(attempt.failed()).rejects.toThrow('store gone')
  expect(await kv.zrange('auth-failures:10.2.2.2:pending')).toEqual([])
})
