/**
 * Long work: a write transaction too large for one turn of the event loop (a product-layer install,
 * a class migration over many records, CLEAR of a large collection, a domain deletion). It commits
 * through `commitLong` (src/entities/unit.ts), which the embedded driver drives in time slices
 * (`db.writeLong`) inside one transaction, so it stays all-or-nothing while other requests are served.
 *
 * Reads on the embedded driver's one connection would see its uncommitted rows, so the domains it
 * changes are gated while it runs: requests acting in them wait for its end (`admit`), and so does
 * what reads across domains (worker passes, the journal pump). Its progress lives here, outside the
 * transaction (rows written inside it are invisible until it commits): logged, and shown by the
 * product-layer order status.
 */
import type { Logger } from './log'

export interface LongWorkSpec {
  /** What is done, for the logs: `layer install`, `class migration`, `clear`, `domain deletion`. */
  kind: string
  /** The domain it acts in. */
  domain: string
  /** What it works on (an order id, a class), to find its progress. */
  key?: string
  /** Further domains whose requests must wait (the master domain, for a domain deletion). */
  gates?: string[]
  /** The request that starts it, if one does: it is not waited for. */
  requestId?: string
}

export interface Progress {
  kind: string
  domain: string
  key?: string
  done: number
  total: number
  /** Milliseconds since it started. */
  ms: number
}

interface Running {
  spec: LongWorkSpec
  /** Works are ordered by when they were asked for: each waits for the requests of those before it. */
  order: number
  domains: Set<string>
  ended: Promise<unknown>
  started: number
  done: number
  total: number
  logged: number
}

/** A progress line at most this often per work. */
const LOG_EVERY_MS = 1000
/** How long long work waits for the requests already admitted in its domains to finish. */
const DRAIN_MS = 5000

export class LongWork {
  private readonly running = new Set<Running>()
  /**
   * The calls admitted in each domain and not finished, one entry each (the same request may enter
   * twice); entries are objects, so adding and removing one hashes no string.
   */
  private readonly inFlight = new Map<string, Set<{ requestId: string }>>()
  private settledOne: () => void = () => {}
  private asked = 0

  constructor(private readonly log: Logger) {}

  /** What holds the domain ends (undefined, at no cost, when nothing does). */
  gate(domain: string): Promise<unknown> | undefined {
    if (this.running.size === 0) return undefined
    const held = [...this.running].filter((w) => w.domains.has(domain)).map((w) => w.ended)
    return held.length ? Promise.all(held).then(() => this.gate(domain)) : undefined
  }

  /**
   * A request admitted in the domain (after its gate): long work that starts meanwhile waits for it,
   * since its reads would otherwise see rows not yet committed. Returns what ends it.
   */
  enter(domain: string, requestId: string): () => void {
    let calls = this.inFlight.get(domain)
    if (!calls) {
      calls = new Set()
      this.inFlight.set(domain, calls)
    }
    const call = { requestId }
    calls.add(call)
    return () => {
      if (!calls.delete(call)) return
      if (calls.size === 0 && this.inFlight.get(domain) === calls) this.inFlight.delete(domain)
      this.settledOne()
    }
  }

  /**
   * Waits (up to DRAIN_MS) until no request but the work's own is admitted in its domains. The
   * request of work asked for after this one is not waited for: it reads nothing more until this
   * one's request has ended (it waits for it here), and two group changes sent together waited
   * for each other until DRAIN_MS ran out. Only where its id names one call of the domain: the
   * frames of one websocket, the calls of one script, share theirs, and another may still be reading.
   */
  private async drained(w: Running): Promise<void> {
    const laterWork = (calls: Set<{ requestId: string }>, requestId: string) =>
      [...this.running].some((r) => r.order > w.order && r.spec.requestId === requestId) &&
      [...calls].filter((c) => c.requestId === requestId).length === 1
    const busy = () =>
      [...w.domains].some((d) => {
        const calls = this.inFlight.get(d) ?? new Set()
        return [...calls].some((c) => c.requestId !== w.spec.requestId && !laterWork(calls, c.requestId))
      })
    const until = performance.now() + DRAIN_MS
    while (busy() && performance.now() < until) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50)
        this.settledOne = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    }
    if (busy()) this.log.warn('long work starts while requests of its domains still run', this.fields(w))
  }

  /** No long work runs any more (undefined when none runs now). */
  idle(): Promise<unknown> | undefined {
    if (this.running.size === 0) return undefined
    return Promise.all([...this.running].map((w) => w.ended)).then(() => this.idle())
  }

  /** The kinds of the work running now (`layer install`, `clear`...), one entry each. */
  kinds(): string[] {
    return [...this.running].map((w) => w.spec.kind)
  }

  /** The progress of the work on `key` in the domain, while it runs in this process. */
  progress(domain: string, key: string): Progress | undefined {
    for (const w of this.running) if (w.spec.domain === domain && w.spec.key === key) return this.shown(w)
    return undefined
  }

  /** Runs `work` with the domains gated; `work` reports its progress through `report`. */
  async run<T>(spec: LongWorkSpec, work: (report: (done: number, total: number) => void) => Promise<T>): Promise<T> {
    let end!: () => void
    const w: Running = {
      spec,
      order: ++this.asked,
      domains: new Set([spec.domain, ...(spec.gates ?? [])]),
      ended: new Promise<void>((resolve) => (end = resolve)),
      started: performance.now(),
      done: 0,
      total: 0,
      logged: performance.now(),
    }
    this.running.add(w)
    const { kind, domain, key } = spec
    this.log.info('long work started', { kind, domain, key })
    const report = (done: number, total: number) => {
      w.done = done
      w.total = total
      if (performance.now() - w.logged < LOG_EVERY_MS) return
      w.logged = performance.now()
      this.log.info('long work progress', this.fields(w))
    }
    try {
      await this.drained(w) // the gate is up: no request enters; those already in finish first
      const result = await work(report)
      this.log.info('long work done', this.fields(w))
      return result
    } catch (err) {
      this.log.info('long work failed, nothing of it stays', { ...this.fields(w), error: String(err) })
      throw err
    } finally {
      this.running.delete(w)
      end()
    }
  }

  private shown(w: Running): Progress {
    const { kind, domain, key } = w.spec
    return { kind, domain, key, done: w.done, total: w.total, ms: Math.round(performance.now() - w.started) }
  }

  private fields(w: Running): Record<string, unknown> {
    const { key, ...rest } = this.shown(w)
    return key === undefined ? rest : { ...rest, key }
  }
}
