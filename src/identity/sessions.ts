/**
 * Sessions live in the KV store under a random 256-bit id, with a sliding idle lifetime. The
 * session check is the hottest path of the service, so an in-process cache answers repeated
 * checks synchronously; logout and other invalidations reach every process through pub/sub, and
 * the cache TTL bounds staleness if a message is lost. A session is only ever rewritten over the
 * value it was read as (compare-and-set), so a request in flight never brings back one that ended.
 */
import { type Kv, KvUnavailable } from '~storage/kv/kv'
import type { Clock } from '../clock'

export interface Session {
  id: string
  kind: 'cookie' | 'token'
  userId: string
  login: string
  name: string
  /** Domain the account belongs to. */
  homeDomainId: string
  /** The account belongs to the master domain (its administrators may switch into any domain). */
  homeIsMaster: boolean
  /** Domain the session currently works in (differs after a master administrator switches). */
  domainId: string
  domainName: string
  isMaster: boolean
  /**
   * When that domain was created: a domain deleted and created again with the same id is another
   * one, where the session does not act (absent on sessions made before this was kept).
   */
  domainCreated?: string
  created: number
  /** When the lifetime was last extended. */
  touched: number
  /**
   * Mark of the account's password when the credentials behind the session were checked (a session
   * copied from another keeps it): one made after the password changed is ended at once. Sessions
   * made before the mark existed have none.
   */
  cred?: string
}

export type NewSession = Omit<Session, 'id' | 'created' | 'touched'>

const CACHE_TTL_MS = 5000
const CACHE_MAX = 10_000
const INVALIDATE = 'session-invalidate'
const sessionKey = (id: string) => `session:${id}`
/** A user is its domain and its id: ids are unique only within a domain (clients may choose them). */
const userKey = (domain: string, userId: string) => `user-sessions:${domain}:${userId}`

export function newSessionId(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
}

export class SessionStore {
  private readonly cache = new Map<string, { session: Session; until: number }>()
  readonly idleMs: number
  /** Extending the lifetime costs a KV write, so it happens at most this often per session. */
  readonly slideMs: number
  private readonly maxPerUser: number
  private lastScore = 0
  private readonly listeners = new Set<(id: string) => void>()
  /** Reads in flight: many sockets of one session asking at once share one KV read. */
  private readonly loading = new Map<string, Promise<Session | null>>()
  /** Slides in flight (to the time slid to, or null): the requests of one session at once share one KV write. */
  private readonly sliding = new Map<string, Promise<number | null>>()
  /**
   * Reads and writes of a session in flight; its invalidation marks them stale, so what they bring
   * back is not cached (it may have been read or written just before the session ended).
   */
  private readonly inFlight = new Map<string, Set<{ stale: boolean }>>()

  constructor(
    private readonly kv: Kv,
    private readonly clock: Clock,
    options: { idleTimeoutSec: number; maxPerUser: number },
  ) {
    this.idleMs = options.idleTimeoutSec * 1000
    this.slideMs = Math.min(60_000, this.idleMs / 10)
    this.maxPerUser = options.maxPerUser
  }

  async start(): Promise<void> {
    await this.kv.subscribe(INVALIDATE, (id) => {
      this.forget(id)
      for (const listener of this.listeners) listener(id)
    })
    this.kv.onSubscriberReset(() => {
      this.cache.clear()
      this.loading.clear()
      for (const watches of this.inFlight.values()) for (const w of watches) w.stale = true
    })
  }

  /** Sessions this process holds in its cache (metrics). */
  cachedCount(): number {
    return this.cache.size
  }

  /** Told when a session changed or ended in any process (its id); the listener reads what is left of it. */
  onInvalidate(listener: (id: string) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** The live session with this id, or null. Synchronous when cached. */
  get(id: string): Session | null | Promise<Session | null> {
    const now = this.clock.now()
    const hit = this.cache.get(id)
    if (hit && hit.until > now && hit.session.touched + this.idleMs > now) return hit.session
    let load = this.loading.get(id)
    if (!load) {
      const watch = this.watch(id)
      const started: Promise<Session | null> = this.kv
        .get(sessionKey(id))
        .then((text) => {
          if (!text) {
            this.cache.delete(id)
            return null
          }
          const session = JSON.parse(text) as Session
          // invalidated while read: the answer stands for this call, but is not kept
          if (!watch.stale) this.remember(session)
          return session
        })
        .catch((err) => {
          // while the store is down, a session this process knew stays valid within its idle lifetime:
          // signed-in reads keep working, and nothing could have ended it (ending one needs the store too)
          if (err instanceof KvUnavailable && hit && hit.session.touched + this.idleMs > now) return hit.session
          throw err
        })
        .finally(() => {
          this.unwatch(id, watch)
          if (this.loading.get(id) === started) this.loading.delete(id)
        })
      load = started
      this.loading.set(id, load)
    }
    return load
  }

  /**
   * A new session. With `confirm`, asked once the session is stored and in its user's index (where
   * ending the user's sessions finds it): when it answers false the session is ended again, and null.
   */
  async create(data: NewSession, confirm?: () => Promise<boolean>): Promise<Session | null> {
    const now = this.clock.now()
    const session: Session = { ...data, id: newSessionId(), created: now, touched: now }
    const watch = this.watch(session.id)
    try {
      await this.kv.set(sessionKey(session.id), JSON.stringify(session), this.idleMs)
      // microsecond-scale scores, strictly increasing in this process: creation order even within one millisecond
      this.lastScore = Math.max(now * 1000, this.lastScore + 1)
      const index = userKey(session.homeDomainId, session.userId)
      await this.kv.zadd(index, this.lastScore, session.id, this.idleMs)
      await this.enforceCap(index, session.id)
      if (confirm && !(await confirm())) {
        await this.destroy(session.id)
        return null
      }
      if (!watch.stale) this.remember(session)
      return session
    } finally {
      this.unwatch(session.id, watch)
    }
  }

  /** Extends the lifetime when due; true when it did (a cookie session then re-issues its cookie). */
  async touch(session: Session): Promise<boolean> {
    if (this.clock.now() - session.touched < this.slideMs) return false
    let sliding = this.sliding.get(session.id)
    if (!sliding) {
      sliding = this.slide(session).finally(() => this.sliding.delete(session.id))
      this.sliding.set(session.id, sliding)
    }
    const slidTo = await sliding
    if (slidTo === null) return false
    // a caller sharing the slide may hold another copy: its cookie's expiry follows the new time
    session.touched = Math.max(session.touched, slidTo)
    return true
  }

  private async slide(session: Session): Promise<number | null> {
    const now = this.clock.now()
    const updated = { ...session, touched: now }
    const watch = this.watch(session.id)
    try {
      // only over the session as read (JSON text is stable through parse and stringify): one that
      // ended meanwhile stays ended, one that changed (another domain) keeps its change
      const key = sessionKey(session.id)
      if (!(await this.kv.swap(key, JSON.stringify(session), JSON.stringify(updated), this.idleMs))) {
        this.cache.delete(session.id) // the next request reads what is stored
        return null
      }
      await this.kv.expire(userKey(session.homeDomainId, session.userId), this.idleMs)
      if (!watch.stale) this.remember(updated)
      return now
    } finally {
      this.unwatch(session.id, watch)
    }
  }

  /** Changes a live session under the same id (a token session that switched domain); false when it has ended. */
  async update(id: string, changes: Partial<NewSession>): Promise<boolean> {
    const key = sessionKey(id)
    // compare-and-set over what is stored, keeping its lifetime: an ended session stays ended; a
    // concurrent slide changed it, so read again
    for (;;) {
      const text = await this.kv.get(key)
      if (text === null) return false
      if (await this.kv.swap(key, text, JSON.stringify({ ...(JSON.parse(text) as Session), ...changes }))) break
    }
    await this.invalidate(id)
    return true
  }

  async destroy(id: string): Promise<void> {
    const text = await this.kv.get(sessionKey(id))
    await this.kv.del(sessionKey(id))
    if (text) {
      const s = JSON.parse(text) as Session
      await this.kv.zrem(userKey(s.homeDomainId, s.userId), id)
    }
    await this.invalidate(id)
  }

  /** Ends every session of a user of a domain (deleted account, password change), optionally but one. */
  async destroyUser(domain: string, userId: string, exceptId?: string): Promise<void> {
    for (const id of await this.kv.zrange(userKey(domain, userId))) if (id !== exceptId) await this.destroy(id)
  }

  /** Ends the oldest sessions in a user's index beyond the cap (never the new one), and forgets expired entries. */
  private async enforceCap(index: string, newest: string): Promise<void> {
    const ids = await this.kv.zrange(index)
    const alive = await this.kv.mget(ids.map(sessionKey))
    const gone = ids.filter((_, i) => alive[i] === null)
    if (gone.length) await this.kv.zrem(index, ...gone)
    const older = ids.filter((id, i) => alive[i] !== null && id !== newest)
    for (const id of older.slice(0, Math.max(0, older.length + 1 - this.maxPerUser))) await this.destroy(id)
  }

  private async invalidate(id: string): Promise<void> {
    this.forget(id)
    await this.kv.publish(INVALIDATE, id)
  }

  /** Drops the cached session, and marks what is in flight on it as not to be cached. */
  private forget(id: string): void {
    this.cache.delete(id)
    this.loading.delete(id)
    for (const w of this.inFlight.get(id) ?? []) w.stale = true
  }

  private watch(id: string): { stale: boolean } {
    const w = { stale: false }
    const watches = this.inFlight.get(id)
    if (watches) watches.add(w)
    else this.inFlight.set(id, new Set([w]))
    return w
  }

  private unwatch(id: string, w: { stale: boolean }): void {
    const watches = this.inFlight.get(id)
    if (watches?.delete(w) && watches.size === 0) this.inFlight.delete(id)
  }

  private remember(session: Session): void {
    if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value!)
    this.cache.set(session.id, { session, until: this.clock.now() + CACHE_TTL_MS })
  }
}
