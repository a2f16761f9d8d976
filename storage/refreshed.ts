/**
 * Values read at most once per `ttlMs` per key, for figures that judge a request rather than answer
 * it (a table's size, a list's boundary). The callers that ask while a key is first read share that
 * one read; once a value is older than `ttlMs` it is still answered, at once, while one read
 * refreshes it. Without this, every request in flight when a value expired read it again: 64
 * connections listing a class of 100,000 records queued 64 counts of 6 ms in the reader thread
 * every ten seconds, and waited up to 380 ms for them (measured).
 */
interface Entry<V> {
  value: V
  at: number
  refreshing: boolean
}

export class Refreshed<V> {
  private readonly entries = new Map<string, Entry<V>>()
  private readonly firstReads = new Map<string, Promise<V>>()

  constructor(
    private readonly ttlMs: number,
    /** Past this many keys the values start again (a bound on memory, not a policy). */
    private readonly maxKeys: number,
  ) {}

  /** The value of `key`: kept, being read for the first time, or read now by `read`. */
  get(key: string, now: number, read: () => Promise<V>): V | Promise<V> {
    const known = this.entries.get(key)
    if (known) {
      if (now - known.at >= this.ttlMs && !known.refreshing) {
        known.refreshing = true
        read().then(
          (value) => Object.assign(known, { value, at: now, refreshing: false }),
          () => (known.refreshing = false), // the last value stands; a later call tries again
        )
      }
      return known.value
    }
    let first = this.firstReads.get(key)
    if (!first) {
      first = read()
      this.firstReads.set(key, first)
      first.then(
        (value) => {
          if (this.entries.size >= this.maxKeys) this.entries.clear()
          this.entries.set(key, { value, at: now, refreshing: false })
        },
        () => {}, // its callers get the error; the next call reads again
      )
      void first.finally(() => this.firstReads.delete(key)).catch(() => {})
    }
    return first
  }
}
