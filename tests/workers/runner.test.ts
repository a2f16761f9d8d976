// WorkerRunner with small fake workers: wake-ups, single flight, repeated steps, errors, stop,
// schedules (interval and cron), and the cluster lease over a real Redis shared by two runners.
import { afterAll, describe, expect, test } from 'bun:test'
import { LongWork } from '~/long-work'
import type { Logger } from '~/log'
import { Signals } from '~/signals'
import { type RunnerOptions, type RunnerPorts, type Worker as AnyWorker, WorkerRunner } from '~/workers/runner'
import type { Kv, Lock } from '~storage/kv/kv'
import { testPrefix, testRedisKv } from '../helpers/redis'

/** Every Redis connection made here, closed (and its keys deleted) at the end. */
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup()
})

interface Logged {
  level: string
  msg: string
  fields?: Record<string, unknown>
}

/** The parts of Deps the runner uses (kv, log, signals); the log is captured. */
async function fakeDeps(prefix = testPrefix(), kv?: Kv) {
  if (!kv) {
    const r = await testRedisKv(prefix)
    cleanups.push(r.cleanup)
    kv = r.kv
  }
  const logged: Logged[] = []
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => logged.push({ level, msg, fields })
  const log: Logger = {
    level: 'debug',
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    request: () => {},
  }
  const deps: RunnerPorts = { kv, log, signals: new Signals(), longWork: new LongWork(log) }
  return { deps, logged, kv, prefix }
}

/** The fake workers need no context: the runner gives them `null`. */
type Worker = AnyWorker<null>

const worker = (step: Worker['step'], more: Partial<Worker> = {}): Worker => ({
  name: 'fake',
  lease: 'none',
  step,
  ...more,
})

/** A runner over fake deps, stopped at the end of the file. */
async function runnerOf(workers: Worker[], options?: RunnerOptions, deps?: Awaited<ReturnType<typeof fakeDeps>>) {
  const d = deps ?? (await fakeDeps())
  const runner = new WorkerRunner(d.deps, workers, null, options)
  cleanups.unshift(() => runner.stop())
  return { runner, ...d }
}

/** Resolves once `fn` has been called `n` times (counting from now). */
function calls(n: number) {
  const reached = Promise.withResolvers<void>()
  let count = 0
  return {
    reached: reached.promise,
    tick() {
      if (++count === n) reached.resolve()
    },
  }
}

/** Fails with a message instead of the test's timeout when what it waits for does not happen. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

describe('wake-ups and single flight', () => {
  test('wake() while idle runs a pass at once', async () => {
    const stepped = Promise.withResolvers<void>()
    const { runner } = await runnerOf([
      worker(async () => {
        stepped.resolve()
        return 0
      }),
    ])
    runner.wake('fake')
    await stepped.promise
  })

  test('wake() during a pass runs exactly one more pass after it, however many wake-ups came', async () => {
    const hold = Promise.withResolvers<number>()
    const second = Promise.withResolvers<void>()
    let steps = 0
    const { runner } = await runnerOf([
      worker(async () => {
        steps++
        if (steps === 1) return hold.promise
        if (steps === 2) second.resolve()
        return 0
      }),
    ])
    runner.wake('fake')
    for (let i = 0; i < 5; i++) runner.wake('fake')
    expect(steps).toBe(1)
    hold.resolve(0)
    await second.promise
    // runOnce waits for every pass already due, then runs its own: the third
    await runner.runOnce('fake')
    expect(steps).toBe(3)
    expect(runner.stats().fake).toEqual({ runs: 3, failures: 0, running: false })
  })

  test('a step that did something (more than 0) is called again in the same pass until it returns 0', async () => {
    const results = [3, 2, 1, 0, 7]
    let steps = 0
    const { runner } = await runnerOf([worker(async () => results[steps++]!)])
    await runner.runOnce('fake')
    expect(steps).toBe(4)
    expect(runner.stats().fake!.runs).toBe(1)
  })

  test('runOnce returns the total the steps of its pass did', async () => {
    const results = [3, 2, 1, 0]
    let steps = 0
    const { runner } = await runnerOf([worker(async () => results[steps++]!)])
    expect(await runner.runOnce('fake')).toBe(6)
  })

  test('a pass takes at most maxStepsPerPass steps, even while the step finds work', async () => {
    let steps = 0
    const { runner } = await runnerOf([worker(async () => ++steps)], { maxStepsPerPass: 3 })
    expect(await runner.runOnce('fake')).toBe(1 + 2 + 3)
    expect(steps).toBe(3)
  })

  test("a throwing step is logged with the worker's name, counted as a failure, and the runner keeps working", async () => {
    let steps = 0
    const { runner, logged } = await runnerOf([
      worker(
        async () => {
          steps++
          if (steps === 1) throw new Error('disk on fire')
          return steps === 2 ? 5 : 0
        },
        { name: 'flaky' },
      ),
    ])
    expect(await runner.runOnce('flaky')).toBe(0)
    expect(logged).toEqual([
      {
        level: 'error',
        msg: 'worker failed',
        fields: expect.objectContaining({ worker: 'flaky', error: 'Error: disk on fire' }),
      },
    ])
    expect(await runner.runOnce('flaky')).toBe(5)
    expect(runner.stats().flaky).toEqual({ runs: 2, failures: 1, running: false })
  })

  test('unknown or duplicate worker names are refused', async () => {
    const { runner } = await runnerOf([worker(async () => 0)])
    expect(() => runner.wake('nope')).toThrow('no worker named nope')
    const { deps } = await fakeDeps()
    expect(() => new WorkerRunner(deps, [worker(async () => 0), worker(async () => 0)], null)).toThrow(
      'two workers are named fake',
    )
  })
})

describe('stop', () => {
  test('stop() waits for the pass in flight, and no pass starts after it', async () => {
    const hold = Promise.withResolvers<number>()
    let steps = 0
    let finished = false
    const { runner, deps } = await runnerOf([
      worker(
        async () => {
          steps++
          const n = await hold.promise
          finished = true
          return n
        },
        { every: 5, wakeOn: ['queue:fake'] },
      ),
    ])
    runner.start()
    runner.wake('fake')
    runner.wake('fake') // asks for another pass after this one
    expect(steps).toBe(1)
    let stopped = false
    const stopping = runner.stop().then(() => (stopped = true))
    await new Promise(setImmediate) // let anything that would resolve early do so
    expect(stopped).toBe(false)
    hold.resolve(0)
    await stopping
    expect(finished).toBe(true)
    // a pass calls its step synchronously when it starts, so any pass started by now would show
    expect(steps).toBe(1)
    runner.wake('fake')
    deps.signals.raise('queue:fake')
    expect(steps).toBe(1)
    expect(runner.stats().fake!.running).toBe(false)
  })
})

describe('schedules', () => {
  test('a signal listed in wakeOn wakes the worker; another signal does not', async () => {
    let steps = 0
    const { runner, deps } = await runnerOf([worker(async () => (steps++, 0), { wakeOn: ['queue:mine'] })])
    runner.start()
    deps.signals.raise('queue:other')
    expect(steps).toBe(0)
    deps.signals.raise('queue:mine')
    expect(steps).toBe(1)
  })

  test('an interval worker makes its first pass at start, not one interval later', async () => {
    let steps = 0
    const { runner } = await runnerOf([worker(async () => (steps++, 0), { every: 60_000 })])
    runner.start()
    expect(steps).toBe(1)
  })

  test('`every` runs a pass after each interval', async () => {
    const three = calls(3)
    const { runner } = await runnerOf([worker(async () => (three.tick(), 0), { every: 10 })])
    runner.start()
    await three.reached
    expect(runner.stats().fake!.runs).toBeGreaterThanOrEqual(2)
  })

  test('a cron worker (a pattern with seconds) runs on its pattern', async () => {
    const ran = Promise.withResolvers<void>()
    const { runner } = await runnerOf([worker(async () => (ran.resolve(), 0), { cron: '* * * * * *' })])
    runner.start()
    await ran.promise // at the next whole second
  })
})

describe('cluster lease', () => {
  /** Two runners of one cluster: separate Redis connections under one prefix. */
  async function cluster(step: (who: 'a' | 'b') => Worker['step'], options?: RunnerOptions) {
    const prefix = testPrefix()
    const a = await runnerOf([worker(step('a'), { name: 'lone', lease: 'cluster' })], options, await fakeDeps(prefix))
    const b = await runnerOf([worker(step('b'), { name: 'lone', lease: 'cluster' })], options, await fakeDeps(prefix))
    return { a, b }
  }

  test("while one runner holds the lease the other's pass does nothing; after it ends the other may run", async () => {
    const hold = Promise.withResolvers<number>()
    const entered = Promise.withResolvers<void>()
    const steps: string[] = []
    const { a, b } = await cluster((who) => async () => {
      steps.push(who)
      if (who === 'a' && steps.length === 1) {
        entered.resolve()
        return hold.promise
      }
      return 0
    })
    const passA = a.runner.runOnce('lone')
    await entered.promise
    expect(await b.runner.runOnce('lone')).toBe(0)
    expect(steps).toEqual(['a'])
    hold.resolve(1)
    expect(await passA).toBe(1)
    await b.runner.runOnce('lone')
    expect(steps).toEqual(['a', 'a', 'b']) // a's step found work, so it ran again (and found none)
  })

  test('a woken pass that finds the lease held tries again shortly and runs once the holder is done', async () => {
    const prefix = testPrefix()
    const hold = Promise.withResolvers<number>()
    const entered = Promise.withResolvers<void>()
    const ranB = Promise.withResolvers<void>()
    // the schedule alone would come a minute later: only the retry can run b's pass in time
    const more: Partial<Worker> = { name: 'lone', lease: 'cluster', every: 60_000, wakeOn: ['journal'] }
    const a = await runnerOf([worker(() => (entered.resolve(), hold.promise), more)], undefined, await fakeDeps(prefix))
    const b = await runnerOf([worker(async () => (ranB.resolve(), 0), more)], undefined, await fakeDeps(prefix))
    const passA = a.runner.runOnce('lone')
    await entered.promise
    b.runner.wake('lone') // b's commit, while a's pass is ending: its pass finds the lease held
    await Bun.sleep(30)
    hold.resolve(0)
    await passA
    await within(ranB.promise, 2000, "b's pass after a's lease was released")
  })

  test('the lease is renewed while a long pass runs, so the other runner still cannot run past its lifetime', async () => {
    // long enough that a loaded machine's late timer (renewals come every third of it) keeps the lease
    const leaseMs = 1200
    const hold = Promise.withResolvers<number>()
    const entered = Promise.withResolvers<void>()
    const prefix = testPrefix()
    // a's store reports each renewal, so the test waits for renewals instead of for time
    const base = await testRedisKv(prefix)
    cleanups.push(base.cleanup)
    const renewals = calls(4) // at leaseMs/3 each: well past one lease lifetime
    const kvA: Kv = {
      ...base.kv,
      async lock(name, ttlMs) {
        const lock = await base.kv.lock(name, ttlMs)
        if (!lock) return null
        const watched: Lock = {
          release: () => lock.release(),
          extend: async (ttl) => {
            const kept = await lock.extend(ttl)
            renewals.tick()
            return kept
          },
        }
        return watched
      },
    }
    let bSteps = 0
    const a = await runnerOf(
      [
        worker(
          async () => {
            entered.resolve()
            return hold.promise
          },
          { name: 'lone', lease: 'cluster' },
        ),
      ],
      { leaseMs },
      await fakeDeps(prefix, kvA),
    )
    const b = await runnerOf(
      [worker(async () => (bSteps++, 0), { name: 'lone', lease: 'cluster' })],
      { leaseMs },
      await fakeDeps(prefix),
    )
    const started = Date.now()
    const passA = a.runner.runOnce('lone')
    await entered.promise
    await within(renewals.reached, 10_000, 'four lease renewals')
    expect(Date.now() - started).toBeGreaterThan(leaseMs)
    const ttl = await base.kv.ttl('lock:worker:lone')
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(leaseMs)
    expect(await b.runner.runOnce('lone')).toBe(0)
    expect(bSteps).toBe(0)
    hold.resolve(0)
    await passA
    expect(a.logged).toEqual([]) // the lease was never lost
    expect(await base.kv.ttl('lock:worker:lone')).toBe(-2) // released at the end of the pass
  })

  test('losing the lease aborts the pass: the step sees its signal aborted, and the loss is logged', async () => {
    const entered = Promise.withResolvers<AbortSignal>()
    const a = await runnerOf(
      [
        worker(
          async (_deps, signal) => {
            entered.resolve(signal)
            await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))
            return 1
          },
          { name: 'lone', lease: 'cluster' },
        ),
      ],
      { leaseMs: 300 },
    )
    const pass = a.runner.runOnce('lone')
    const signal = await entered.promise
    expect(signal.aborted).toBe(false)
    expect(await a.kv.del('lock:worker:lone')).toBe(1) // what an expiry or an operator would do
    expect(await within(pass, 3000, 'the end of the pass')).toBe(0)
    expect(signal.aborted).toBe(true)
    expect(a.logged).toEqual([
      {
        level: 'error',
        msg: 'worker failed',
        fields: expect.objectContaining({ worker: 'lone', error: 'Error: the cluster lease was lost' }),
      },
    ])
    expect(a.runner.stats().lone!.failures).toBe(1)
  })
})
