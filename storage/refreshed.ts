/**
 * Values read at most once per `ttlMs` per key, for figures that judge a request rather than answer
 * it (a table's size, where a list's budget ends). The callers that ask while a key is first read
 * share that one read; a value up to `ttlMs` past its time is still answered, at once, while one
 * read refreshes it; an older one (nobody asked for a while) is read afresh and waited for. Without
 * this, every request in flight when a value expired read it again: 64 connections listing a class
 * of 100,000 records queued 64 counts of 6 ms in the reader thread every ten seconds, and waited up
 * to 380 ms for them (measured).
 */
interface Entry<V> {
  value: V
  at: number
  refreshing: boolean
  /** After a failed refresh, the next is tried from then on. */
  retryAt: number
}

/** `read()` as a promise, also when it throws before it returns one. */
const started = <V>(read: () => Promise<V>) => new Promise<V>((resolve) => resolve(read()))

export class Refreshed<V> {
  private readonly entries = new Map<string, Entry<V>>()
  private readonly firstReads = new Map<string, Promise<V>>()

  constructor(
    private readonly ttlMs: number,
    /** Past this many keys the values start again (a bound on memory, not a policy). */
    private readonly maxKeys: number,
  ) {}

  /** The value of `key`: kept, being read, or read now by `read`. */
  get(key: string, now: number, read: () => Promise<V>): V | Promise<V> {
    const known = this.entries.get(key)
    const age = known ? now - known.at : Infinity
    if (known && age < 2 * this.ttlMs) {
      if (age >= this.ttlMs && !known.refreshing && now >= known.retryAt) {
        known.refreshing = true
        started(read).then(
          (value) => Object.assign(known, { value, at: now, refreshing: false }),
          () => Object.assign(known, { refreshing: false, retryAt: now + this.ttlMs / 10 }),
        )
      }
      return known.value
    }
    let first = this.firstReads.get(key)
    if (!first) {
      first = started(read)
      this.firstReads.set(key, first)
      first.then(
        (value) => {
          if (this.entries.size >= this.maxKeys) this.entries.clear()
          this.entries.set(key, { value, at: now, refreshing: false, retryAt: 0 })
        },
        () => {}, // its callers get the error; the next call reads again
      )
      void first.finally(() => this.firstReads.delete(key)).catch(() => {})
    }
    return first
  }
}
