/**
 * The key-value store behind sessions, counters, rate limits, locks and pub/sub: Redis when
 * REDIS_URL is set (shared by a cluster), process memory otherwise. Both implementations pass the
 * same contract suite (tests/storage/kv.test.ts). Keys and channels get the store's prefix.
 */

export interface Lock {
  /** Releases the lock if this holder still owns it; false when it had already expired. */
  release(): Promise<boolean>
  /**
   * Gives the lock a new lifetime of ttlMs from now, only while this holder still owns it; false when
   * the lock was lost (expired, released, or taken by someone else, whose lock is left untouched).
   */
  extend(ttlMs: number): Promise<boolean>
}

/**
 * The store could not be reached in time (Redis down, restarting, or too slow): what needs it is
 * answered 503 with Retry-After, and the caller may try again. Errors Redis itself answers (a wrong
 * type, a script error) are not this.
 */
export class KvUnavailable extends Error {
  constructor(override readonly cause: unknown) {
    super(`the key-value store is unavailable: ${(cause as Error)?.message ?? String(cause)}`)
  }
}

export type MessageHandler = (message: string) => void

/** One entry of a stream: its id (`<ms>-<seq>`, ascending) and its fields. */
export interface StreamEntry {
  id: string
  fields: Record<string, string>
}

export interface StreamReadOptions {
  /** At most this many entries. */
  count: number
  /**
   * true: entries already delivered to this consumer and not acknowledged (what a reader that
   * stopped mid-batch left); false: entries never delivered to the group.
   */
  pending: boolean
}

export interface Kv {
  readonly kind: 'redis' | 'memory'
  get(key: string): Promise<string | null>
  mget(keys: string[]): Promise<(string | null)[]>
  /** Stores a value; with ttlMs it expires after that many milliseconds. */
  set(key: string, value: string, ttlMs?: number): Promise<void>
  del(...keys: string[]): Promise<number>
  /**
   * Compare-and-set: replaces the value only while it is still `expected`, with a lifetime of ttlMs
   * (without, the key keeps its remaining one). False when it was not: changed, deleted or expired.
   */
  swap(key: string, expected: string, value: string, ttlMs?: number): Promise<boolean>
  /** Sets a new lifetime; false when the key does not exist. */
  expire(key: string, ttlMs: number): Promise<boolean>
  /** Remaining lifetime in ms; -1 without expiry, -2 when the key does not exist. */
  ttl(key: string): Promise<number>
  /** Increments a counter; ttlMs starts the counter's lifetime when this call creates it. */
  incr(key: string, ttlMs?: number): Promise<number>

  sadd(key: string, ...members: string[]): Promise<number>
  srem(key: string, ...members: string[]): Promise<number>
  smembers(key: string): Promise<string[]>

  /**
   * One step of a walk over the keys that start with `prefix` (Redis SCAN, so each step is short
   * however many keys the store holds): start with cursor '0' and go on with the cursor answered
   * until it is '0' again. A key may be answered twice.
   */
  scan(prefix: string, cursor: string): Promise<{ cursor: string; keys: string[] }>

  /**
   * Sorted set: members ordered by score (ascending), ties by member. `ttlMs` sets the set's lifetime
   * in the same step (one round trip: no set is left without one when the connection drops between).
   */
  zadd(key: string, score: number, member: string, ttlMs?: number): Promise<void>
  zrem(key: string, ...members: string[]): Promise<number>
  zrange(key: string): Promise<string[]>

  /**
   * A sliding-window log (rate limits, failed logins) in one atomic step: drops entries older than
   * `now - windowMs`, adds `entry` at `now` when given, and returns the times in the window, oldest
   * first. An entry can be taken back with zrem. Times are the caller's clock, so tests can move it.
   */
  window(key: string, now: number, windowMs: number, entry?: string): Promise<number[]>

  /**
   * Queues with a window, in one atomic step over all `keys`: in each, drops members older than
   * `now - windowMs`, answers the members still there (the ones ahead), and adds `entry` at `now`,
   * behind them. One step for all keys, so two entries never join two queues in opposite orders.
   */
  joinWindows(keys: string[], now: number, windowMs: number, entry: string): Promise<string[][]>

  publish(channel: string, message: string): Promise<void>
  /** Returns the function that ends the subscription. */
  subscribe(channel: string, handler: MessageHandler): Promise<() => Promise<void>>
  /** Called when subscriptions may have missed messages (the subscriber reconnected). */
  onSubscriberReset(callback: () => void): void

  /**
   * Streams (Redis XADD/XREADGROUP/XACK): appends an entry and returns its id; with maxLen the
   * stream keeps at most that many newest entries (about that many on Redis, which trims lazily).
   */
  xadd(key: string, fields: Record<string, string>, maxLen?: number): Promise<string>
  /**
   * Reads for a consumer of a group; the group is created on first use at the stream's start (with
   * the stream), so entries added before any reader existed are read too. Returns [] when none.
   */
  xreadgroup(key: string, group: string, consumer: string, options: StreamReadOptions): Promise<StreamEntry[]>
  /** Acknowledges entries of a group: they leave its pending list. Returns how many were pending. */
  xack(key: string, group: string, ...ids: string[]): Promise<number>

  /** Answers when the store is reachable (readiness checks); throws KvUnavailable otherwise. */
  ping(): Promise<void>
  /** An exclusive lock with a lifetime, or null when someone else holds it. */
  lock(name: string, ttlMs: number): Promise<Lock | null>
  close(): Promise<void>
}

/** Deletes every key that starts with `prefix` (what is left of something that is gone); answers how many. */
export async function delPrefix(kv: Kv, prefix: string): Promise<number> {
  let deleted = 0
  let cursor = '0'
  do {
    const step = await kv.scan(prefix, cursor)
    if (step.keys.length) deleted += await kv.del(...step.keys)
    cursor = step.cursor
  } while (cursor !== '0')
  return deleted
}
