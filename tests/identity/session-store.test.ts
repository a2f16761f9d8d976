// SessionStore against the in-process store and real Redis: an ended session is never written back,
// nor kept in a process's cache, whatever request was in flight on it. Two stores on one KV are two
// processes of a cluster; a gate runs the other process's step at a chosen point of a KV call.
import { afterAll, describe, expect, test } from 'bun:test'
import { ManualClock } from '~/clock'
import { type NewSession, type Session, SessionStore } from '~/identity/sessions'
import type { Kv } from '~storage/kv/kv'
import { createMemoryKv } from '~storage/kv/memory'
import { testPrefix, testRedisKv } from '../helpers/redis'

type Step = 'read' | 'write'
const METHODS: Record<Step, string[]> = { read: ['get'], write: ['set', 'swap'] }

/** The KV of one process, whose next read or write of a session runs `step` before or after it. */
function gated(kv: Kv) {
  let armed: { step: Step; when: 'before' | 'after'; run: () => Promise<void> } | undefined
  const counts = { writes: 0 }
  const wrapped = { ...kv } as Record<string, unknown>
  for (const step of ['read', 'write'] as const)
    for (const name of METHODS[step]) {
      const original = (kv as unknown as Record<string, ((...a: unknown[]) => Promise<unknown>) | undefined>)[name]
      if (!original) continue
      wrapped[name] = async (...args: unknown[]) => {
        if (step === 'write') counts.writes++
        const hook = armed
        if (hook?.step !== step || !String(args[0]).startsWith('session:')) return original(...args)
        armed = undefined
        if (hook.when === 'before') await hook.run()
        const answer = await original(...args)
        if (hook.when === 'after') await hook.run()
        return answer
      }
    }
  return {
    kv: wrapped as unknown as Kv,
    counts,
    at: (step: Step, when: 'before' | 'after', run: () => Promise<void>) => {
      armed = { step, when, run }
    },
  }
}

const data: NewSession = {
  kind: 'token',
  userId: 'u1',
  login: 'ann',
  name: 'Ann',
  homeDomainId: 'd1',
  homeIsMaster: false,
  domainId: 'd1',
  domainName: 'one.master',
  isMaster: false,
}

const kinds: [string, () => Promise<{ a: Kv; b: Kv; cleanup: () => Promise<void> }>][] = [
  ['memory', async () => ({ a: shared.memory, b: shared.memory, cleanup: async () => {} })],
  [
    'redis',
    async () => {
      const prefix = testPrefix()
      const a = await testRedisKv(prefix)
      const b = await testRedisKv(prefix)
      return {
        a: a.kv,
        b: b.kv,
        cleanup: async () => {
          await a.cleanup()
          await b.kv.close()
        },
      }
    },
  ],
]
const clock = new ManualClock(Date.now())
const shared = { memory: createMemoryKv({ now: () => clock.now() }) }

for (const [name, make] of kinds) {
  describe(`sessions on ${name}`, async () => {
    const kvs = await make()
    afterAll(() => kvs.cleanup())
    const gate = gated(kvs.a)
    const options = { idleTimeoutSec: 600, maxPerUser: 10 }
    /** This process (whose KV calls are gated) and another one. */
    const here = new SessionStore(gate.kv, clock, options)
    const there = new SessionStore(kvs.b, clock, options)
    await here.start()
    await there.start()
    const raw = (id: string) => kvs.b.get(`session:${id}`)

    /** Ends the session in the other process, then waits until this one was told. */
    const endThere = async (id: string) => {
      const told = new Promise<void>((resolve) => {
        const off = here.onInvalidate((ended) => {
          if (ended !== id) return
          off()
          resolve()
        })
      })
      await there.destroy(id)
      await told
    }

    /** A session this process has cached, due for a slide. */
    async function cachedAndDue(): Promise<Session> {
      const s = (await there.create({ ...data }))!
      clock.advance(here.slideMs)
      expect(await here.get(s.id)).not.toBeNull() // read past the cache's own lifetime
      const cached = here.get(s.id)
      expect(cached).not.toBeInstanceOf(Promise)
      return cached as Session
    }

    test('a session ended while its lifetime slides is not written back', async () => {
      const s = await cachedAndDue()
      gate.at('write', 'before', () => there.destroy(s.id))
      const slid = await here.touch(s)
      expect(await raw(s.id)).toBeNull()
      expect(slid).toBe(false)
      expect(await here.get(s.id)).toBeNull()
      expect(await there.get(s.id)).toBeNull()
    })

    test('a session ended right after its slide was written is not cached again', async () => {
      const s = await cachedAndDue()
      gate.at('write', 'after', () => endThere(s.id))
      expect(await here.touch(s)).toBe(true) // it slid before it ended
      expect(await raw(s.id)).toBeNull()
      expect(await here.get(s.id)).toBeNull()
    })

    test('a read in flight when the session ends does not cache it', async () => {
      const s = (await there.create({ ...data }))!
      gate.at('read', 'after', () => endThere(s.id))
      await here.get(s.id) // read before the end: either answer is right for this one call
      expect(await here.get(s.id)).toBeNull()
    })

    test('a domain switch does not bring back a session ended meanwhile', async () => {
      const s = (await there.create({ ...data }))!
      gate.at('write', 'before', () => there.destroy(s.id))
      await here.update(s.id, { domainId: 'd2', domainName: 'two.master' })
      expect(await raw(s.id)).toBeNull()
      expect(await here.get(s.id)).toBeNull()
    })

    test('a slide over a copy read before a domain switch does not undo the switch', async () => {
      const s = await cachedAndDue()
      await there.update(s.id, { domainId: 'd2', domainName: 'two.master' })
      const slid = await here.touch(s)
      expect(JSON.parse((await raw(s.id))!).domainId).toBe('d2')
      expect(slid).toBe(false)
      expect(((await here.get(s.id)) as Session).domainId).toBe('d2')
    })

    test('a live session slides; requests at once share one write', async () => {
      const s = await cachedAndDue()
      const before = (await kvs.b.ttl(`session:${s.id}`)) as number
      const writes = gate.counts.writes
      const copy = { ...s } // another request's copy of the session
      expect(await Promise.all([here.touch(s), here.touch(copy), here.touch(s)])).toEqual([true, true, true])
      expect(gate.counts.writes - writes).toBe(1)
      expect(copy.touched).toBe(clock.now()) // its cookie expires with the session
      expect(await here.touch(s)).toBe(false) // not due any more
      expect(JSON.parse((await raw(s.id))!).touched).toBe(clock.now())
      if (name === 'memory') expect(await kvs.b.ttl(`session:${s.id}`)).toBeGreaterThan(before)
      expect(((await there.get(s.id)) as Session).touched).toBe(clock.now())
    })
  })
}
