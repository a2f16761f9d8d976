/** In-process Kv: the embedded default when REDIS_URL is unset. Time comes from `now`, so tests control expiry. */
import type { Kv, Lock, MessageHandler, StreamEntry } from './kv'

/** A stream: entries in id order, and per group the next undelivered position and what is pending, by consumer. */
class Stream {
  entries: StreamEntry[] = []
  lastId = { ms: 0, seq: 0 }
  groups = new Map<string, { next: string; pending: Map<string, string> }>()
}

type Value = string | Set<string> | Map<string, number> | Stream

/** Orders stream ids `<ms>-<seq>` numerically. */
const idAfter = (a: string, b: string) => {
  const [am, as] = a.split('-').map(Number)
  const [bm, bs] = b.split('-').map(Number)
  return am! > bm! || (am === bm && as! > bs!)
}
interface Entry {
  value: Value
  expiresAt: number | null
}

export function createMemoryKv(options: { prefix?: string; now?: () => number } = {}): Kv {
  const prefix = options.prefix ?? ''
  const now = options.now ?? Date.now
  const data = new Map<string, Entry>()
  const channels = new Map<string, Set<MessageHandler>>()

  function live(key: string): Entry | undefined {
    const e = data.get(prefix + key)
    if (e && e.expiresAt !== null && e.expiresAt <= now()) {
      data.delete(prefix + key)
      return undefined
    }
    return e
  }
  function put(key: string, value: Value, ttlMs?: number, keepTtl = false): void {
    const old = keepTtl ? live(key) : undefined
    data.set(prefix + key, { value, expiresAt: ttlMs !== undefined ? now() + ttlMs : (old?.expiresAt ?? null) })
  }
  function typed<T extends Value>(key: string, check: (v: Value) => v is T): T | undefined {
    const e = live(key)
    if (!e) return undefined
    if (!check(e.value)) throw new Error(`WRONGTYPE ${key}`)
    return e.value
  }
  const isString = (v: Value): v is string => typeof v === 'string'
  const isSet = (v: Value): v is Set<string> => v instanceof Set
  const isZset = (v: Value): v is Map<string, number> => v instanceof Map
  const isStream = (v: Value): v is Stream => v instanceof Stream
  const streamOf = (key: string): Stream => {
    const existing = typed(key, isStream)
    if (existing) return existing
    const created = new Stream()
    put(key, created)
    return created
  }

  const kv: Kv = {
    kind: 'memory',
    async get(key) {
      return typed(key, isString) ?? null
    },
    async mget(keys) {
      return keys.map((k) => typed(k, isString) ?? null)
    },
    async set(key, value, ttlMs) {
      put(key, value, ttlMs)
    },
    async del(...keys) {
      let n = 0
      for (const k of keys) if (live(k) && data.delete(prefix + k)) n++
      return n
    },
    async swap(key, expected, value, ttlMs) {
      if (typed(key, isString) !== expected) return false
      put(key, value, ttlMs, true)
      return true
    },
    async expire(key, ttlMs) {
      const e = live(key)
      if (!e) return false
      e.expiresAt = now() + ttlMs
      return true
    },
    async ttl(key) {
      const e = live(key)
      if (!e) return -2
      return e.expiresAt === null ? -1 : e.expiresAt - now()
    },
    async incr(key, ttlMs) {
      const current = typed(key, isString)
      const n = (current === undefined ? 0 : Number(current)) + 1
      if (!Number.isFinite(n)) throw new Error(`ERR value is not an integer: ${key}`)
      put(key, String(n), current === undefined ? ttlMs : undefined, true)
      return n
    },
    async sadd(key, ...members) {
      const set = typed(key, isSet) ?? new Set<string>()
      const before = set.size
      for (const m of members) set.add(m)
      if (!live(key)) put(key, set)
      return set.size - before
    },
    async srem(key, ...members) {
      const set = typed(key, isSet)
      if (!set) return 0
      let n = 0
      for (const m of members) if (set.delete(m)) n++
      if (set.size === 0) data.delete(prefix + key)
      return n
    },
    async smembers(key) {
      return [...(typed(key, isSet) ?? [])]
    },
    async scan(start, _cursor) {
      // one step answers them all: nothing here is slow enough to split
      const keys: string[] = []
      for (const full of [...data.keys()]) {
        const key = full.slice(prefix.length)
        if (full.startsWith(prefix + start) && live(key)) keys.push(key)
      }
      return { cursor: '0', keys }
    },
    async zadd(key, score, member, ttlMs) {
      const z = typed(key, isZset) ?? new Map<string, number>()
      z.set(member, score)
      if (!live(key) || ttlMs !== undefined) put(key, z, ttlMs)
    },
    async zrem(key, ...members) {
      const z = typed(key, isZset)
      if (!z) return 0
      let n = 0
      for (const m of members) if (z.delete(m)) n++
      if (z.size === 0) data.delete(prefix + key)
      return n
    },
    async zrange(key) {
      const z = typed(key, isZset)
      if (!z) return []
      return [...z.entries()].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1)).map(([m]) => m)
    },
    async window(key, now, windowMs, entry) {
      const z = typed(key, isZset) ?? new Map<string, number>()
      for (const [m, at] of z) if (at <= now - windowMs) z.delete(m)
      if (entry !== undefined) z.set(entry, now)
      if (z.size === 0) {
        data.delete(prefix + key)
        return []
      }
      put(key, z, windowMs)
      return [...z.values()].sort((a, b) => a - b)
    },
    async joinWindows(keys, now, windowMs, entry) {
      return keys.map((key) => {
        const z = typed(key, isZset) ?? new Map<string, number>()
        for (const [m, at] of z) if (at <= now - windowMs) z.delete(m)
        const ahead = [...z.keys()]
        z.set(entry, now)
        put(key, z, windowMs)
        return ahead
      })
    },
    async publish(channel, message) {
      for (const h of channels.get(prefix + channel) ?? []) queueMicrotask(() => h(message))
    },
    async subscribe(channel, handler) {
      const key = prefix + channel
      if (!channels.has(key)) channels.set(key, new Set())
      channels.get(key)!.add(handler)
      return async () => void channels.get(key)?.delete(handler)
    },
    onSubscriberReset() {
      // an in-process store never misses a message
    },
    async ping() {},
    async xadd(key, fields, maxLen) {
      const stream = streamOf(key)
      const ms = Math.max(now(), stream.lastId.ms)
      stream.lastId = { ms, seq: ms === stream.lastId.ms ? stream.lastId.seq + 1 : 0 }
      const id = `${ms}-${stream.lastId.seq}`
      stream.entries.push({ id, fields: { ...fields } })
      if (maxLen !== undefined && stream.entries.length > maxLen)
        stream.entries.splice(0, stream.entries.length - maxLen)
      return id
    },
    async xreadgroup(key, group, consumer, { count, pending }) {
      const stream = streamOf(key)
      let g = stream.groups.get(group)
      if (!g) {
        g = { next: '0-0', pending: new Map() }
        stream.groups.set(group, g)
      }
      if (pending) {
        const ids = [...g.pending].filter(([, c]) => c === consumer).map(([id]) => id)
        // as Redis: a pending entry trimmed away is answered without fields
        return ids.slice(0, count).map((id) => ({ id, fields: { ...stream.entries.find((e) => e.id === id)?.fields } }))
      }
      const start = g.next
      const fresh = stream.entries.filter((e) => idAfter(e.id, start)).slice(0, count)
      for (const e of fresh) g.pending.set(e.id, consumer)
      if (fresh.length) g.next = fresh[fresh.length - 1]!.id
      return fresh.map((e) => ({ id: e.id, fields: { ...e.fields } }))
    },
    async xack(key, group, ...ids) {
      const g = typed(key, isStream)?.groups.get(group)
      if (!g) return 0
      let n = 0
      for (const id of ids) if (g.pending.delete(id)) n++
      return n
    },
    async lock(name, ttlMs) {
      const key = `lock:${name}`
      if (live(key)) return null
      const token = crypto.randomUUID()
      put(key, token, ttlMs)
      const lock: Lock = {
        async release() {
          if (live(key)?.value !== token) return false
          data.delete(prefix + key)
          return true
        },
        async extend(ttlMs) {
          const entry = live(key)
          if (entry?.value !== token) return false
          entry.expiresAt = now() + ttlMs
          return true
        },
      }
      return lock
    },
    async close() {
      channels.clear()
    },
  }
  return kv
}
