// Workers that keep their cluster lease between passes (holdLease), over a real Redis shared by two
// runners: the holder keeps it without asking Redis again, the other runner's wake-ups run the
// holder's passes, a stop gives it back, and a holder that went silent loses it when it expires.
// Also `batch`: a step that did less than a batch ends its pass.
import { afterAll, expect, test } from 'bun:test'
import { LongWork } from '~/long-work'
import type { Logger } from '~/log'
import { Signals } from '~/signals'
import { type RunnerOptions, type Worker as AnyWorker, WorkerRunner } from '~/workers/runner'
import type { Kv, Lock } from '~storage/kv/kv'
import { testPrefix, testRedisKv } from '../helpers/redis'

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup()
})

const quiet: Logger = { level: 'error', error() {}, warn() {}, info() {}, debug() {}, request() {} }

/** A Redis KV under `prefix` that counts its lock calls and, once `silenced`, answers nothing. */
async function countingKv(prefix: string) {
  const r = await testRedisKv(prefix)
  cleanups.push(r.cleanup)
  const state = { locks: 0, publishes: 0, silenced: false }
  const never = new Promise<never>(() => {})
  const kv = new Proxy(r.kv, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        if (state.silenced) return never
        if (key === 'publish') state.publishes++
        if (key !== 'lock') return value.apply(target, args)
        state.locks++
        // the lock's own calls (renewals) go silent with the rest
        return (value.apply(target, args) as Promise<Lock | null>).then(
          (lock) =>
            lock && {
              release: () => (state.silenced ? never : lock.release()),
              extend: (ttlMs: number) => (state.silenced ? never : lock.extend(ttlMs)),
            },
        )
      }
    },
  }) as Kv
  return { kv, state }
}

/** A runner of one worker named `held` on its own connection to the shared prefix; counts its steps. */
async function holder(prefix: string, more: Partial<AnyWorker<null>> = {}, options?: RunnerOptions) {
  const { kv, state } = await countingKv(prefix)
  const signals = new Signals()
  const steps = { count: 0 }
  const worker: AnyWorker<null> = {
    name: 'held',
    lease: 'cluster',
    holdLease: true,
    every: 60_000, // only wake-ups run passes while a test looks
    wakeOn: ['journal'],
    step: async () => {
      steps.count++
      return 0
    },
    ...more,
  }
  const runner = new WorkerRunner({ kv, log: quiet, signals, longWork: new LongWork(quiet) }, [worker], null, options)
  cleanups.unshift(() => runner.stop())
  return { runner, signals, steps, kv: state }
}

/** Waits until `check` holds, polling; fails naming `what` after `ms`. */
async function until(check: () => boolean, ms: number, what: string) {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what} did not happen within ${ms} ms`)
    await Bun.sleep(5)
  }
}

/**
 * Two runners of `held` on one prefix, started in turn: a holds the lease (its first pass), and b's
 * first pass found it held and had a run a pass for it.
 */
async function startedPair(options?: RunnerOptions) {
  const prefix = testPrefix()
  const a = await holder(prefix, {}, options)
  const b = await holder(prefix, {}, options)
  a.runner.start()
  await a.runner.ready() // a hears wake-ups passed on from now
  await until(() => a.steps.count === 1, 2000, "a's first pass")
  const started = performance.now()
  b.runner.start()
  await until(() => a.steps.count === 2, 2000, "the pass a ran for b's first wake-up")
  return { a, b, started }
}

test("the holder keeps the lease between passes without asking Redis again, and runs the other runner's wake-ups", async () => {
  const { a, b, started } = await startedPair()
  for (let i = 0; i < 5; i++) {
    a.signals.raise('journal')
    await until(() => a.steps.count === 3 + i * 2, 2000, `a's own wake-up ${i}`)
    b.signals.raise('journal') // a commit of the other process
    await until(() => a.steps.count === 4 + i * 2, 2000, `b's wake-up ${i} run by a`)
  }
  expect(b.steps.count).toBe(0)
  expect(a.kv.locks).toBe(1) // taken once, kept through 11 passes
  // b tries the lease at most once a half second (it may have come back); its 11 wake-ups went to the holder
  expect(b.kv.locks).toBeLessThanOrEqual(1 + Math.ceil((performance.now() - started) / 500))
})

test('a stop gives the lease back and says so: the other runner takes it at its next wake-up and keeps it', async () => {
  const { a, b } = await startedPair()
  await a.runner.stop()
  // a said it gave the lease back: b's next wake-up takes it, not one after the lease's 3 s
  const stopped = performance.now()
  b.signals.raise('journal')
  await until(() => b.steps.count > 0, 2000, 'b taking the lease')
  expect(performance.now() - stopped).toBeLessThan(1000)
  const locks = b.kv.locks
  b.signals.raise('journal')
  await until(() => b.steps.count >= 2, 2000, "b's next pass")
  expect(b.kv.locks).toBe(locks)
})

test('a holder that went silent loses the lease when it expires, and the other runner goes on', async () => {
  const { a, b } = await startedPair({ leaseMs: 600 }) // the held lease's lifetime: min(leaseMs, HELD_LEASE_MS)
  a.kv.silenced = true // a's renewals never reach Redis, as if its process hung or died
  const started = Date.now()
  const end = started + 5000
  while (b.steps.count === 0 && Date.now() < end) {
    b.signals.raise('journal')
    await Bun.sleep(50)
  }
  expect(b.steps.count).toBeGreaterThan(0)
  // the lease's 600 ms and the half second b waits before trying it again, with a loaded machine's slack
  expect(Date.now() - started).toBeLessThan(4000)
  a.kv.silenced = false // its stop at the end gives back nothing: the lease is b's
})

test('a step that did less than `batch` ends its pass; a full one is followed by another step', async () => {
  const { kv } = await countingKv(testPrefix())
  const done = [10, 10, 3, 7]
  let steps = 0
  const worker: AnyWorker<null> = { name: 'batched', lease: 'none', batch: 10, step: async () => done[steps++] ?? 0 }
  const runner = new WorkerRunner(
    { kv, log: quiet, signals: new Signals(), longWork: new LongWork(quiet) },
    [worker],
    null,
  )
  cleanups.unshift(() => runner.stop())
  expect(await runner.runOnce('batched')).toBe(23) // 10, 10, then 3 < 10: the end
  expect(steps).toBe(3)
  expect(await runner.runOnce('batched')).toBe(7)
  expect(steps).toBe(4)
})

test('a worker hears each time its process takes the lease, before the step that follows, and not while it keeps it', async () => {
  const prefix = testPrefix()
  const seen: string[] = []
  const record = (who: string) => ({
    leaseTaken: () => void seen.push(`${who} took`),
    step: async () => {
      seen.push(`${who} step`)
      return 0
    },
  })
  const a = await holder(prefix, record('a'))
  const b = await holder(prefix, record('b'))
  a.runner.start()
  await until(() => seen.length === 2, 2000, "a's first pass")
  a.signals.raise('journal')
  await until(() => seen.length === 3, 2000, "a's second pass")
  await a.runner.stop()
  b.runner.start()
  await until(() => seen.includes('b step'), 2000, "b's first pass")
  b.signals.raise('journal')
  await until(() => seen.filter((s) => s === 'b step').length === 2, 2000, "b's second pass")
  expect(seen).toEqual(['a took', 'a step', 'a step', 'b took', 'b step', 'b step'])
})

test('a worker that passes its wake-ups on itself (passOn) is asked where the lease is held elsewhere, and the runner sends none', async () => {
  const prefix = testPrefix()
  let passed = 0
  const a = await holder(prefix)
  const b = await holder(prefix, { passOn: () => void passed++ })
  a.runner.start()
  await a.runner.ready()
  await until(() => a.steps.count === 1, 2000, "a's first pass")
  b.runner.start()
  await until(() => passed === 1, 2000, "b's first pass passing its wake-up on")
  const publishes = b.kv.publishes
  b.signals.raise('journal') // a commit of b's process
  await until(() => passed === 2, 2000, "b's wake-up passed on")
  expect(b.kv.publishes).toBe(publishes)
  expect(b.steps.count).toBe(0)
})
