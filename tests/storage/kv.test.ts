// One contract for both Kv implementations: in-process memory (with a controllable clock) and real Redis.
// Redis keeps its own time, so no assertion here depends on how fast the machine runs a step: what must
// still hold has a lifetime of seconds, and what must expire is polled for until it has, within a
// bounded deadline (the memory store's clock checks the exact millisecond instead).
import { afterAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '~/clock'
import { delPrefix, type Kv, KvUnavailable, type Lock } from '~storage/kv/kv'
import { createMemoryKv } from '~storage/kv/memory'
import { createRedisKv } from '~storage/kv/redis'
import { ownRedisServer, testRedisKv } from '../helpers/redis'

/** A lifetime that never runs out during a test, however loaded the machine. */
const LONG_MS = 10_000
/** Outlives a few round trips on a loaded machine, yet is short enough to wait out. */
const MEDIUM_MS = 1_000
/** A lifetime that is only ever waited out. */
const SHORT_MS = 50
/** How long past a lifetime Redis may take before a key counts as not expiring. */
const EXPIRY_GRACE_MS = 3_000

interface Subject {
  kv: Kv
  /**
   * Lets a lifetime of `ms` run out until `expired` holds. Memory moves its clock: 1 ms short of `ms`
   * `expired` must not hold yet, at `ms` it must. Redis keeps its own time: `expired` is polled until
   * it holds, and the test fails when it still does not EXPIRY_GRACE_MS after the lifetime.
   */
  outlive(ms: number, expired: () => Promise<boolean>): Promise<void>
  /** Lets `ms` pass: the memory clock jumps, Redis really waits. Only for steps with seconds of margin. */
  pass(ms: number): Promise<void>
  cleanup(): Promise<void>
}

/** Polls `done` until it holds; fails after `withinMs`. */
async function until(done: () => Promise<boolean> | boolean, withinMs: number, what: string): Promise<void> {
  const deadline = Date.now() + withinMs
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${withinMs} ms`)
    await Bun.sleep(5)
  }
}

/** Whether stream id a comes before b. */
function idOrder(a: string, b: string): boolean {
  const [am, as] = a.split('-').map(Number)
  const [bm, bs] = b.split('-').map(Number)
  return am! < bm! || (am === bm && as! < bs!)
}

const subjects: [string, () => Promise<Subject>][] = [
  [
    'memory',
    async () => {
      const clock = new ManualClock()
      return {
        kv: createMemoryKv({ now: () => clock.now() }),
        async outlive(ms, expired) {
          clock.advance(ms - 1)
          if (await expired()) throw new Error(`expired 1 ms before its lifetime of ${ms} ms`)
          clock.advance(1)
          if (!(await expired())) throw new Error(`still there at the end of its lifetime of ${ms} ms`)
        },
        pass: async (ms) => clock.advance(ms),
        cleanup: async () => {},
      }
    },
  ],
  [
    'redis',
    async () => {
      const r = await testRedisKv()
      return {
        kv: r.kv,
        outlive: (ms, expired) => until(expired, ms + EXPIRY_GRACE_MS, `expiry of a ${ms} ms lifetime`),
        pass: (ms) => Bun.sleep(ms),
        cleanup: r.cleanup,
      }
    },
  ],
]

for (const [name, make] of subjects) {
  describe(`Kv: ${name}`, async () => {
    const s = await make()
    const { kv } = s
    afterAll(() => s.cleanup())

    test('get, set, mget, del', async () => {
      expect(await kv.get('a')).toBeNull()
      await kv.set('a', '1')
      await kv.set('b', '2')
      expect(await kv.get('a')).toBe('1')
      expect(await kv.mget(['a', 'nope', 'b'])).toEqual(['1', null, '2'])
      expect(await kv.del('a', 'nope')).toBe(1)
      expect(await kv.get('a')).toBeNull()
    })

    test('scan walks the keys of a prefix, glob characters taken literally; delPrefix deletes them', async () => {
      await kv.set('gone:[1]*:a', '1')
      await kv.sadd('gone:[1]*:set', 'x')
      await kv.set('gone:[1]?:b', '2')
      await kv.set('gone:other', '3')
      const seen = new Set<string>()
      let cursor = '0'
      do {
        const step = await kv.scan('gone:[1]*:', cursor)
        for (const key of step.keys) seen.add(key)
        cursor = step.cursor
      } while (cursor !== '0')
      expect([...seen].sort()).toEqual(['gone:[1]*:a', 'gone:[1]*:set'])
      expect(await delPrefix(kv, 'gone:[1]*:')).toBe(2)
      expect(await kv.mget(['gone:[1]*:a', 'gone:[1]?:b', 'gone:other'])).toEqual([null, '2', '3'])
      expect(await kv.smembers('gone:[1]*:set')).toEqual([])
    })

    test('values with a lifetime expire; expire and ttl', async () => {
      await kv.set('long', 'x', LONG_MS)
      const ttl = await kv.ttl('long')
      expect(ttl).toBeGreaterThan(LONG_MS / 2) // milliseconds, not seconds
      expect(ttl).toBeLessThanOrEqual(LONG_MS)
      expect(await kv.ttl('nope')).toBe(-2)
      await kv.set('forever', 'y')
      expect(await kv.ttl('forever')).toBe(-1)
      expect(await kv.expire('nope', SHORT_MS)).toBe(false)
      expect(await kv.expire('forever', SHORT_MS)).toBe(true)
      await kv.set('short', 'z', SHORT_MS)
      await s.outlive(SHORT_MS, async () => (await kv.mget(['short', 'forever'])).every((v) => v === null))
      expect(await kv.get('long')).toBe('x')
    })

    test('swap sets only over the expected value, with a new lifetime or keeping its own', async () => {
      expect(await kv.swap('sw', 'a', 'b', LONG_MS)).toBe(false) // nothing there: nothing written
      expect(await kv.get('sw')).toBeNull()
      await kv.set('sw', 'a', LONG_MS)
      expect(await kv.swap('sw', 'other', 'b', LONG_MS)).toBe(false)
      expect(await kv.swap('sw', 'a', 'b', 3 * LONG_MS)).toBe(true)
      expect(await kv.get('sw')).toBe('b')
      expect(await kv.ttl('sw')).toBeGreaterThan(LONG_MS) // the new lifetime
      expect(await kv.swap('sw', 'b', 'c')).toBe(true)
      expect(await kv.ttl('sw')).toBeGreaterThan(LONG_MS) // kept
      await kv.set('sw-short', 'x', SHORT_MS)
      expect(await kv.swap('sw-short', 'x', 'y')).toBe(true)
      await s.outlive(SHORT_MS, async () => (await kv.get('sw-short')) === null)
      expect(await kv.swap('sw-short', 'y', 'z')).toBe(false) // expired is gone
      expect(await kv.get('sw-short')).toBeNull()
    })

    test('incr with a lifetime: the first increment starts the window, later ones keep it', async () => {
      expect(await kv.incr('c', LONG_MS)).toBe(1)
      expect(await kv.incr('c', 3 * LONG_MS)).toBe(2)
      const left = await kv.ttl('c')
      expect(left).toBeGreaterThan(0)
      expect(left).toBeLessThanOrEqual(LONG_MS) // not restarted by the second increment
      expect(await kv.incr('burst', SHORT_MS)).toBe(1)
      await s.outlive(SHORT_MS, async () => (await kv.get('burst')) === null)
      expect(await kv.incr('burst', SHORT_MS)).toBe(1) // a new window
      expect(await kv.incr('plain')).toBe(1)
      expect(await kv.incr('plain')).toBe(2)
      expect(await kv.ttl('plain')).toBe(-1)
    })

    test('sets', async () => {
      expect(await kv.sadd('s', 'a', 'b', 'a')).toBe(2)
      expect((await kv.smembers('s')).sort()).toEqual(['a', 'b'])
      expect(await kv.srem('s', 'a', 'z')).toBe(1)
      expect(await kv.smembers('s')).toEqual(['b'])
      expect(await kv.smembers('none')).toEqual([])
    })

    test('sorted sets order by score', async () => {
      await kv.zadd('z', 3, 'c')
      await kv.zadd('z', 1, 'a')
      await kv.zadd('z', 2, 'b')
      expect(await kv.zrange('z')).toEqual(['a', 'b', 'c'])
      expect(await kv.zrem('z', 'b')).toBe(1)
      expect(await kv.zrange('z')).toEqual(['a', 'c'])
      expect(await kv.ttl('z')).toBe(-1)
      // with a lifetime: the set's, set in the same step
      await kv.zadd('z', 4, 'd', LONG_MS)
      expect(await kv.ttl('z')).toBeGreaterThan(LONG_MS - 5000)
      expect(await kv.zrange('z')).toEqual(['a', 'c', 'd'])
    })

    // The times are the caller's; the key's own lifetime (windowMs, real time on Redis) is never reached.
    test('a sliding window keeps the times of the last windowMs', async () => {
      const t0 = 1_000_000
      const w = LONG_MS
      expect(await kv.window('w', t0, w)).toEqual([])
      expect(await kv.window('w', t0, w, 'a')).toEqual([t0])
      expect(await kv.window('w', t0 + 4000, w, 'b')).toEqual([t0, t0 + 4000])
      expect(await kv.window('w', t0 + 4000, w, 'c')).toEqual([t0, t0 + 4000, t0 + 4000])
      expect(await kv.zrem('w', 'c')).toBe(1) // an entry can be taken back
      expect(await kv.window('w', t0 + w, w)).toEqual([t0 + 4000])
      expect(await kv.window('w', t0 + w + 4001, w)).toEqual([])
      expect(await kv.window('other', t0, w)).toEqual([])
    })

    test('joining windows answers the members ahead in each, then adds the entry behind them', async () => {
      const t0 = 1_000_000
      const w = LONG_MS
      expect(await kv.joinWindows(['q'], t0, w, 'first')).toEqual([[]])
      expect(await kv.joinWindows(['q', 'r'], t0, w, 'second')).toEqual([['first'], []])
      expect(await kv.zrem('q', 'first')).toBe(1)
      expect(await kv.joinWindows(['r', 'q'], t0 + 1, w, 'third')).toEqual([['second'], ['second']])
      expect(await kv.joinWindows(['q'], t0 + w, w, 'late')).toEqual([['third']]) // 'second' left the window
      expect(await kv.zrange('q')).toEqual(['third', 'late'])
    })

    test('pub/sub delivers to subscribers until they unsubscribe', async () => {
      const got: string[] = []
      const probe: string[] = []
      const stop = await kv.subscribe('chan', (m) => got.push(m))
      const stopProbe = await kv.subscribe('chan', (m) => probe.push(m))
      await kv.publish('other', 'x')
      await kv.publish('chan', 'one')
      await until(() => got.length > 0 && probe.length > 0, 5000, 'delivery')
      expect(got).toEqual(['one'])
      await stop()
      await kv.publish('chan', 'two')
      // the probe, still subscribed to the same channel, has 'two': a subscriber that missed it never gets it
      await until(() => probe.length > 1, 5000, 'delivery to the probe')
      expect(probe).toEqual(['one', 'two'])
      expect(got).toEqual(['one'])
      await stopProbe()
    })

    test('streams: a group reads what was added before it existed, once; unacknowledged entries stay pending', async () => {
      expect(await kv.xreadgroup('st', 'g', 'c1', { count: 10, pending: false })).toEqual([])
      const a = await kv.xadd('st', { event: 'a' })
      const b = await kv.xadd('st', { event: 'b', extra: 'x' })
      expect(a).toMatch(/^\d+-\d+$/)
      const later = await kv.xreadgroup('st-2', 'late', 'c1', { count: 10, pending: false })
      expect(later).toEqual([]) // another stream
      const first = await kv.xreadgroup('st', 'g', 'c1', { count: 1, pending: false })
      expect(first).toEqual([{ id: a, fields: { event: 'a' } }])
      expect(await kv.xreadgroup('st', 'g', 'c1', { count: 10, pending: false })).toEqual([
        { id: b, fields: { event: 'b', extra: 'x' } },
      ])
      expect(await kv.xreadgroup('st', 'g', 'c1', { count: 10, pending: false })).toEqual([]) // delivered once
      // a group made after the entries still sees them from the start
      expect((await kv.xreadgroup('st', 'other', 'c1', { count: 10, pending: false })).map((e) => e.id)).toEqual([a, b])
      expect((await kv.xreadgroup('st', 'g', 'c1', { count: 10, pending: true })).map((e) => e.id)).toEqual([a, b])
      expect(await kv.xreadgroup('st', 'g', 'c2', { count: 10, pending: true })).toEqual([]) // pending per consumer
      expect(await kv.xack('st', 'g', a, a)).toBe(1)
      expect(await kv.xack('st', 'g')).toBe(0)
      expect(await kv.xreadgroup('st', 'g', 'c1', { count: 10, pending: true })).toEqual([
        { id: b, fields: { event: 'b', extra: 'x' } },
      ])
      const c = await kv.xadd('st', { event: 'c' })
      expect(idOrder(b, c)).toBe(true)
      expect(await kv.xreadgroup('st', 'g', 'c1', { count: 10, pending: false })).toEqual([
        { id: c, fields: { event: 'c' } },
      ])
    })

    test('a stream with maxLen keeps about that many newest entries', async () => {
      for (let i = 0; i < 300; i++) await kv.xadd('capped', { n: String(i) }, 10)
      const kept = await kv.xreadgroup('capped', 'g', 'c', { count: 1000, pending: false })
      expect(kept.length).toBeGreaterThanOrEqual(10)
      expect(kept.length).toBeLessThan(300) // Redis trims whole nodes (~), so only roughly
      expect(kept.at(-1)!.fields).toEqual({ n: '299' })
    })

    test('locks are exclusive and released only by their holder', async () => {
      const first = await kv.lock('job', LONG_MS)
      expect(first).not.toBeNull()
      expect(await kv.lock('job', LONG_MS)).toBeNull()
      expect(await first!.release()).toBe(true)
      expect(await first!.release()).toBe(false)
      const second = await kv.lock('job', LONG_MS)
      expect(second).not.toBeNull()
      expect(await first!.release()).toBe(false) // must not free the new holder's lock
      expect(await kv.lock('job', LONG_MS)).toBeNull()
      expect(await second!.release()).toBe(true)
    })

    test('a lock expires; its old holder can then neither release nor extend the next holder', async () => {
      const old = await kv.lock('exp', SHORT_MS)
      expect(old).not.toBeNull()
      const holders: { next?: Lock | null; third?: Lock | null } = {}
      await s.outlive(SHORT_MS, async () => {
        holders.next = await kv.lock('exp', MEDIUM_MS)
        return holders.next !== null
      })
      expect(await old!.release()).toBe(false)
      expect(await old!.extend(LONG_MS)).toBe(false)
      expect(await kv.lock('exp', LONG_MS)).toBeNull() // the next holder still has it
      // ... for its own lifetime, not the one the old holder asked for
      await s.outlive(MEDIUM_MS, async () => {
        holders.third = await kv.lock('exp', LONG_MS)
        return holders.third !== null
      })
      expect(await holders.next!.extend(LONG_MS)).toBe(false)
      expect(await holders.third!.release()).toBe(true)
    })

    test('extend keeps a lock past its first lifetime, while its holder owns it', async () => {
      const lock = await kv.lock('ext', MEDIUM_MS)
      expect(lock).not.toBeNull()
      expect(await lock!.extend(LONG_MS)).toBe(true)
      await s.pass(1.5 * MEDIUM_MS)
      expect(await kv.lock('ext', LONG_MS)).toBeNull()
      expect(await lock!.extend(LONG_MS)).toBe(true)
      expect(await lock!.release()).toBe(true)
      expect(await lock!.extend(LONG_MS)).toBe(false) // released: nothing left to extend
      const next = await kv.lock('ext', LONG_MS)
      expect(next).not.toBeNull()
      expect(await next!.release()).toBe(true)
    })
  })
}

test('two Redis prefixes do not see each other', async () => {
  const a = await testRedisKv()
  const b = await testRedisKv()
  await a.kv.set('k', 'from-a')
  expect(await b.kv.get('k')).toBeNull()
  await a.cleanup()
  await b.cleanup()
})

test('Redis answers that are errors stay errors; an unreachable or silent Redis is KvUnavailable within the timeout', async () => {
  const { kv, cleanup } = await testRedisKv()
  await kv.ping()
  await kv.sadd('a-set', 'x')
  // WRONGTYPE is Redis answering, not an outage
  const wrongType = await kv.get('a-set').catch((e) => e)
  expect(wrongType).not.toBeInstanceOf(KvUnavailable)
  expect(String(wrongType)).toContain('WRONGTYPE')
  await cleanup()

  const redis = await ownRedisServer()
  const own = await createRedisKv(redis.url, { timeoutMs: 200, onStateChange: () => {} })
  await own.set('k', 'v')
  redis.pause()
  let started = performance.now()
  expect(await own.get('k').catch((e) => e)).toBeInstanceOf(KvUnavailable)
  expect(performance.now() - started).toBeLessThan(1000)
  redis.resume()
  expect(await own.get('k')).toBe('v')
  await redis.kill()
  started = performance.now()
  expect(await own.window('w', Date.now(), 1000, 'e').catch((e) => e)).toBeInstanceOf(KvUnavailable)
  expect(await own.lock('l', 1000).catch((e) => e)).toBeInstanceOf(KvUnavailable)
  expect(performance.now() - started).toBeLessThan(1000)
  await own.close()
})

test('an answer that came while the event loop was held is taken, not refused as a timeout', async () => {
  const { cleanup } = await testRedisKv()
  const redis = await ownRedisServer()
  const own = await createRedisKv(redis.url, { timeoutMs: 200, onStateChange: () => {} })
  await own.set('k', 'v')
  for (let i = 0; i < 5; i++) {
    const answer = own.get('k')
    // the loop is held past the timeout while Redis answers (a long task, a machine under load)
    const until = performance.now() + 400
    while (performance.now() < until) {}
    expect(await answer).toBe('v')
  }
  await own.close()
  await redis.kill()
  await cleanup()
})
