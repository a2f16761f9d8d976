// One contract for both Kv implementations: in-process memory (with a controllable clock) and real Redis.
import { afterAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '~/clock'
import type { Kv } from '~storage/kv/kv'
import { createMemoryKv } from '~storage/kv/memory'
import { testRedisKv } from '../helpers/redis'

interface Subject {
  kv: Kv
  /** Lets `ms` of time pass for the store's expiry. */
  pass(ms: number): Promise<void>
  cleanup(): Promise<void>
}

const subjects: [string, () => Promise<Subject>][] = [
  [
    'memory',
    async () => {
      const clock = new ManualClock()
      return {
        kv: createMemoryKv({ now: () => clock.now() }),
        pass: async (ms) => clock.advance(ms),
        cleanup: async () => {},
      }
    },
  ],
  [
    'redis',
    async () => {
      const r = await testRedisKv()
      // Redis keeps its own time; a short real wait past a short TTL is the only way to see expiry there.
      return { kv: r.kv, pass: (ms) => Bun.sleep(ms + 20), cleanup: r.cleanup }
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

    test('values with a lifetime expire; expire and ttl', async () => {
      await kv.set('t', 'x', 60)
      const ttl = await kv.ttl('t')
      expect(ttl).toBeGreaterThan(0)
      expect(ttl).toBeLessThanOrEqual(60)
      expect(await kv.ttl('nope')).toBe(-2)
      await kv.set('forever', 'y')
      expect(await kv.ttl('forever')).toBe(-1)
      expect(await kv.expire('forever', 60)).toBe(true)
      expect(await kv.expire('nope', 60)).toBe(false)
      await s.pass(70)
      expect(await kv.get('t')).toBeNull()
      expect(await kv.get('forever')).toBeNull()
    })

    test('incr with a lifetime: the first increment starts the window, later ones keep it', async () => {
      expect(await kv.incr('c', 80)).toBe(1)
      await s.pass(40)
      expect(await kv.incr('c', 80)).toBe(2)
      expect(await kv.ttl('c')).toBeLessThanOrEqual(45)
      await s.pass(50)
      expect(await kv.incr('c', 80)).toBe(1)
      expect(await kv.incr('plain')).toBe(1)
      expect(await kv.incr('plain')).toBe(2)
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
    })

    test('a sliding window keeps the times of the last windowMs', async () => {
      const t0 = 1_000_000
      expect(await kv.window('w', t0, 1000)).toEqual([])
      expect(await kv.window('w', t0, 1000, 'a')).toEqual([t0])
      expect(await kv.window('w', t0 + 400, 1000, 'b')).toEqual([t0, t0 + 400])
      expect(await kv.window('w', t0 + 400, 1000, 'c')).toEqual([t0, t0 + 400, t0 + 400])
      expect(await kv.zrem('w', 'c')).toBe(1) // an entry can be taken back
      expect(await kv.window('w', t0 + 1000, 1000)).toEqual([t0 + 400])
      expect(await kv.window('w', t0 + 1401, 1000)).toEqual([])
      expect(await kv.window('other', t0, 1000)).toEqual([])
    })

    test('pub/sub delivers to subscribers until they unsubscribe', async () => {
      const got: string[] = []
      const stop = await kv.subscribe('chan', (m) => got.push(m))
      await kv.publish('chan', 'one')
      await kv.publish('other', 'x')
      for (let i = 0; i < 50 && got.length < 1; i++) await Bun.sleep(2)
      expect(got).toEqual(['one'])
      await stop()
      await kv.publish('chan', 'two')
      await Bun.sleep(10)
      expect(got).toEqual(['one'])
    })

    test('locks are exclusive, released only by their holder, and expire', async () => {
      const first = await kv.lock('job', 60)
      expect(first).not.toBeNull()
      expect(await kv.lock('job', 60)).toBeNull()
      expect(await first!.release()).toBe(true)
      const second = await kv.lock('job', 60)
      expect(second).not.toBeNull()
      await s.pass(70)
      const third = await kv.lock('job', 1000)
      expect(third).not.toBeNull()
      expect(await second!.release()).toBe(false) // expired; must not free the new holder's lock
      expect(await kv.lock('job', 1000)).toBeNull()
      await third!.release()
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
