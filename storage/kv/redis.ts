/**
 * Redis Kv (node-redis): shared by every process of a cluster. While Redis is down or slow, calls
 * fail within `timeoutMs` with KvUnavailable instead of queueing until it returns (a sign-in must
 * not hang for the length of an outage); the client reconnects by itself.
 */
import { tracingChannel } from 'node:diagnostics_channel'
import { createClient, ErrorReply } from 'redis'
import { type Kv, KvUnavailable, type Lock, type MessageHandler, type StreamEntry } from './kv'

/**
 * node-redis traces a command only when its tracing channel `hasSubscribers`, a getter Node has and
 * Bun's TracingChannel lacks: read as undefined, every command was traced (its arguments copied, its
 * promise wrapped) with nobody listening. Given as Node defines it, a PUBLISH took 0.5-1.2 µs less
 * CPU (about a tenth; 100,000 of them, 50 in flight), and a subscriber still gets every trace.
 */
const tracing = Object.getPrototypeOf(tracingChannel('platform:probe')) as object
if (!('hasSubscribers' in tracing))
  Object.defineProperty(tracing, 'hasSubscribers', {
    get(this: Record<'start' | 'end' | 'asyncStart' | 'asyncEnd' | 'error', { hasSubscribers: boolean }>) {
      return (
        this.start.hasSubscribers ||
        this.end.hasSubscribers ||
        this.asyncStart.hasSubscribers ||
        this.asyncEnd.hasSubscribers ||
        this.error.hasSubscribers
      )
    },
  })

export interface RedisKvOptions {
  prefix?: string
  /** Longest wait for one call (default 500 ms). */
  timeoutMs?: number
  /** Connections tried at start before giving up (the error names the cause); later the client retries forever. */
  connectTries?: number
  /** Told once when Redis becomes unreachable and once when it is back (not at every retry). */
  onStateChange?: (up: boolean, detail: string) => void
}

/** Reconnect at once, then back off to at most a second between tries: recovery is quick once Redis is back. */
const backoff = (retries: number) => Math.min(50 * 2 ** retries, 1000)

/** Deletes the lock only while it still holds the caller's token. */
const RELEASE_SCRIPT = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`
/** Sets the lock's lifetime (ARGV[2] ms) only while it still holds the caller's token. */
const EXTEND_SCRIPT = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`
/** Sets KEYS[1] to ARGV[2] only while it holds ARGV[1]; with a lifetime of ARGV[3] ms, or keeping its own without. */
const SWAP_SCRIPT = `if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[3] then redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3]) else redis.call('set', KEYS[1], ARGV[2], 'KEEPTTL') end
return 1`

/** Keys SCAN looks at per step: one step stays well within the call timeout. */
const SCAN_COUNT = 1000
/** A literal prefix in a SCAN MATCH pattern (KV_PREFIX may hold anything). */
const globEscaped = (text: string) => text.replace(/[*?[\]\\]/g, '\\$&')

/** What node-redis answers to XREADGROUP (RESP2): one item per stream, or null when nothing was read. */
type StreamsReply = { name: string; messages: { id: string; message: Record<string, string> }[] }[] | null

export async function createRedisKv(url: string, options: RedisKvOptions = {}): Promise<Kv> {
  const prefix = options.prefix ?? ''
  const timeoutMs = options.timeoutMs ?? 500
  let connected = false
  const connectTries = options.connectTries ?? Number.POSITIVE_INFINITY
  const reconnectStrategy = (retries: number, cause: Error) =>
    !connected && retries + 1 >= connectTries ? new Error(cause.message || 'no answer') : backoff(retries)
  const socket = { connectTimeout: Math.max(timeoutMs, 1000), reconnectStrategy }
  const client = createClient({ url, disableOfflineQueue: true, socket })
  let up = true
  const report =
    options.onStateChange ?? ((isUp, detail) => console.error(`redis: ${isUp ? 'back' : 'down'}: ${detail}`))
  client.on('error', (err: Error) => {
    if (!up || !connected) return // a failed start is reported by connect() itself
    up = false
    report(false, err.message)
  })
  client.on('ready', () => {
    if (up) return
    up = true
    report(true, 'reconnected')
  })
  await client.connect()
  connected = true
  let subscriber: ReturnType<typeof client.duplicate> | undefined
  const resetCallbacks: (() => void)[] = []
  const k = (key: string) => prefix + key

  async function getSubscriber() {
    if (!subscriber) {
      subscriber = client.duplicate({ disableOfflineQueue: false })
      subscriber.on('error', () => {}) // the main client reports the outage
      let connectedOnce = false
      subscriber.on('ready', () => {
        if (connectedOnce) for (const cb of resetCallbacks) cb()
        connectedOnce = true
      })
      await subscriber.connect()
    }
    return subscriber
  }

  const kv: Kv = {
    kind: 'redis',
    get: (key) => client.get(k(key)),
    async mget(keys) {
      return keys.length ? client.mGet(keys.map(k)) : []
    },
    async set(key, value, ttlMs) {
      await (ttlMs !== undefined ? client.set(k(key), value, { PX: ttlMs }) : client.set(k(key), value))
    },
    async del(...keys) {
      return keys.length ? client.del(keys.map(k)) : 0
    },
    async swap(key, expected, value, ttlMs) {
      const args = ttlMs === undefined ? [expected, value] : [expected, value, String(ttlMs)]
      return Number(await client.eval(SWAP_SCRIPT, { keys: [k(key)], arguments: args })) === 1
    },
    async expire(key, ttlMs) {
      return (await client.pExpire(k(key), ttlMs)) === 1
    },
    ttl: (key) => client.pTTL(k(key)),
    async incr(key, ttlMs) {
      if (ttlMs === undefined) return client.incr(k(key))
      const [n] = await client.multi().incr(k(key)).pExpire(k(key), ttlMs, 'NX').exec()
      return Number(n)
    },
    sadd: (key, ...members) => client.sAdd(k(key), members),
    srem: (key, ...members) => client.sRem(k(key), members),
    smembers: (key) => client.sMembers(k(key)),
    async scan(start, cursor) {
      const step = await client.scan(cursor, { MATCH: `${globEscaped(k(start))}*`, COUNT: SCAN_COUNT })
      return { cursor: String(step.cursor), keys: step.keys.map((key) => String(key).slice(prefix.length)) }
    },
    async zadd(key, score, member, ttlMs) {
      if (ttlMs === undefined) await client.zAdd(k(key), { score, value: member })
      else await client.multi().zAdd(k(key), { score, value: member }).pExpire(k(key), ttlMs).exec()
    },
    zrem: (key, ...members) => client.zRem(k(key), members),
    zrange: (key) => client.zRange(k(key), 0, -1),
    async window(key, now, windowMs, entry) {
      const m = client.multi().zRemRangeByScore(k(key), '-inf', now - windowMs)
      if (entry !== undefined) m.zAdd(k(key), { score: now, value: entry })
      const replies = await m.zRangeWithScores(k(key), 0, -1).pExpire(k(key), windowMs).exec()
      const entries = replies[entry !== undefined ? 2 : 1] as unknown as { score: number }[]
      return entries.map((e) => e.score)
    },
    async joinWindows(keys, now, windowMs, entry) {
      const m = client.multi()
      for (const key of keys)
        m.zRemRangeByScore(k(key), '-inf', now - windowMs)
          .zRange(k(key), 0, -1)
          .zAdd(k(key), { score: now, value: entry })
          .pExpire(k(key), windowMs)
      const replies = await m.exec()
      return keys.map((_, i) => replies[i * 4 + 1] as unknown as string[])
    },
    async publish(channel, message) {
      await client.publish(k(channel), message)
    },
    async subscribe(channel, handler: MessageHandler) {
      const sub = await getSubscriber()
      const listener = (message: string) => handler(message)
      await sub.subscribe(k(channel), listener)
      return () => bound(timeoutMs, () => sub.unsubscribe(k(channel), listener)).then(() => {})
    },
    onSubscriberReset(callback) {
      resetCallbacks.push(callback)
    },
    async xadd(key, fields, maxLen) {
      const trim =
        maxLen === undefined
          ? {}
          : { TRIM: { strategy: 'MAXLEN' as const, strategyModifier: '~' as const, threshold: maxLen } }
      return client.xAdd(k(key), '*', fields, trim)
    },
    async xreadgroup(key, group, consumer, { count, pending }) {
      const read = async () =>
        (await client.xReadGroup(
          group,
          consumer,
          { key: k(key), id: pending ? '0' : '>' },
          { COUNT: count },
        )) as unknown as StreamsReply
      let reply: StreamsReply
      try {
        reply = await read()
      } catch (err) {
        if (!String(err).includes('NOGROUP')) throw err
        // the group starts at the stream's beginning: what producers added before the first read is read too
        await client.xGroupCreate(k(key), group, '0', { MKSTREAM: true }).catch((e) => {
          if (!String(e).includes('BUSYGROUP')) throw e
        })
        reply = await read()
      }
      const entries: StreamEntry[] = []
      for (const stream of reply ?? [])
        for (const m of stream.messages) entries.push({ id: m.id, fields: { ...m.message } })
      return entries
    },
    async xack(key, group, ...ids) {
      return ids.length ? client.xAck(k(key), group, ids) : 0
    },
    async ping() {
      await client.ping()
    },
    async lock(name, ttlMs) {
      const key = k(`lock:${name}`)
      const token = crypto.randomUUID()
      if ((await client.set(key, token, { PX: ttlMs, NX: true })) !== 'OK') return null
      const lock: Lock = {
        release: async () => Number(await client.eval(RELEASE_SCRIPT, { keys: [key], arguments: [token] })) === 1,
        extend: async (ttlMs) =>
          Number(await client.eval(EXTEND_SCRIPT, { keys: [key], arguments: [token, String(ttlMs)] })) === 1,
      }
      return lock
    },
    async close() {
      // QUIT waits for Redis to answer; an unreachable one would hold the shutdown, so give up and drop the sockets
      for (const c of [subscriber, client]) {
        if (!c) continue
        await Promise.race([c.quit(), Bun.sleep(timeoutMs)]).catch(() => {})
        if (c.isOpen) c.destroy()
      }
    },
  }
  return guarded(kv, timeoutMs)
}

/** Every call of the store bounded by the timeout, and failures to reach Redis made KvUnavailable. */
function bound<T>(timeoutMs: number, call: () => Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    let armedAt = performance.now()
    let again = false
    const expire = () => {
      // a timer that fires well past its time found the event loop held (a long task, a loaded
      // machine): the call may not even have been sent. It gets one more window before Redis counts
      // as gone (a live Redis answered sign-ins with 503 under a loaded test run)
      if (!again && performance.now() - armedAt > timeoutMs * 1.5) {
        again = true
        armedAt = performance.now()
        timer = setTimeout(expire, timeoutMs)
        return
      }
      reject(new KvUnavailable(new Error(`no answer within ${timeoutMs} ms`)))
    }
    timer = setTimeout(expire, timeoutMs)
  })
  const work = call().catch((err) => {
    // an answer from Redis (a wrong type, a script error) is not an outage
    throw err instanceof ErrorReply || err instanceof KvUnavailable ? err : new KvUnavailable(err)
  })
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}

function guarded(kv: Kv, timeoutMs: number): Kv {
  const wrapped = { ...kv } as Record<string, unknown>
  for (const [name, value] of Object.entries(kv)) {
    if (typeof value !== 'function' || name === 'onSubscriberReset' || name === 'close') continue
    wrapped[name] = (...args: unknown[]) =>
      bound(timeoutMs, () => (value as (...a: unknown[]) => Promise<unknown>)(...args))
  }
  wrapped.lock = async (name: string, ttlMs: number) => {
    const lock = await bound(timeoutMs, () => kv.lock(name, ttlMs))
    if (!lock) return null
    return {
      release: () => bound(timeoutMs, () => lock.release()),
      extend: (ms: number) => bound(timeoutMs, () => lock.extend(ms)),
    }
  }
  return wrapped as unknown as Kv
}
