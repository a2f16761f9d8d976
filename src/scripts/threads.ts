/**
 * The script threads of this process (SCRIPT_THREADS Bun workers running script-thread.ts): a
 * handler's sandbox lives on one, its host calls are answered here on the main thread, and its
 * outcome comes back as a message.
 *
 * Shares between domains: one domain's handlers go to at most all threads but one (one of one), so
 * a domain computing on every thread it may use leaves the others a thread; among the threads it
 * may use, a handler goes where no slice has run long (BUSY_MS), then where the fewest other
 * domains' handlers are, then to the least loaded. Inside a thread the domains take turns.
 *
 * An end is answered here at once: the handler is abandoned (no round trip to a thread that may be
 * busy), its thread is told, and the stop flag they share interrupts the slice it may be in. A
 * thread still in that slice STUCK_MS later is replaced, as is a thread that dies; their other
 * handlers end as failed.
 */
import type { HostApi, HostFunction, Outcome, Running, SandboxLimits } from './sandbox-contract'
import { newControl, type SandboxControl } from './sandbox-instance'
import type { FromThread, ToThread } from './script-thread'

/** A slice running this long makes its thread busy, for placement. */
const BUSY_MS = 50
/** How long an ended handler may stay in its slice before its thread counts as stuck. */
const STUCK_MS = 1000

interface Thread {
  worker: Worker
  handlers: Map<string, Handler>
}

interface Handler {
  domain: string
  host: HostApi
  control: SandboxControl
  finish(o: Outcome): void
  branch?: (had: boolean) => void
}

export class ScriptThreads {
  private readonly threads: Thread[] = []
  /** How many threads one domain's handlers may be spread over. */
  private readonly cap: number

  constructor(private readonly size: number) {
    this.cap = Math.max(1, size - 1)
  }

  /** Runs `source` on a script thread with `host` answering its calls; startparam, sleep and onStop are the thread's. */
  run(id: string, domain: string, source: string, params: unknown[], host: HostApi, limits: SandboxLimits): Running {
    const thread = this.pick(domain)
    const control = newControl()
    let finish!: (o: Outcome) => void
    const outcome = new Promise<Outcome>((resolve) => (finish = resolve))
    const handler: Handler = {
      domain,
      host,
      control,
      finish: (o) => {
        if (thread.handlers.get(id) !== handler) return
        thread.handlers.delete(id)
        // a stop whose onStop branch let the script finish is answered as taken
        handler.branch?.(true)
        finish(o)
      },
    }
    thread.handlers.set(id, handler)
    const api = Object.entries(host).flatMap(([name, v]) =>
      typeof v === 'function' ? [name] : Object.keys(v).map((member) => `${name}.${member}`),
    )
    this.send(thread, { t: 'run', id, domain, source, params, limits, api, control })
    return {
      outcome,
      callRegistered: (name) =>
        new Promise<boolean>((resolve) => {
          if (!thread.handlers.has(id)) return resolve(false)
          handler.branch = resolve
          this.send(thread, { t: 'branch', id, name })
        }),
      end: (o) => {
        if (thread.handlers.get(id) !== handler) return
        Atomics.store(control.stop, 0, 1)
        this.send(thread, { t: 'end', id, outcome: o })
        handler.finish(o)
        this.watch(thread, control)
      },
    }
  }

  /** An ended handler still in its slice after STUCK_MS holds its thread for good: the thread is replaced. */
  private watch(thread: Thread, control: SandboxControl): void {
    const timer = setTimeout(() => {
      const since = control.since[0]!
      if (since !== 0 && Date.now() - since >= STUCK_MS)
        this.lost(thread, 'the script thread was stuck and was replaced')
    }, STUCK_MS)
    timer.unref?.()
  }

  /** Ends every thread (the service is stopping; its handlers were ended first). */
  stop(): void {
    for (const t of this.threads.splice(0)) t.worker.terminate()
  }

  /** The thread for a new handler of `domain` (see the file's comment). */
  private pick(domain: string): Thread {
    while (this.threads.length < this.size) this.threads.push(this.spawn())
    const held = this.threads.filter((t) => [...t.handlers.values()].some((h) => h.domain === domain))
    const pool = held.length >= this.cap ? held : this.threads
    const now = Date.now()
    const rank = (t: Thread) => {
      let busy = 0
      let others = 0
      for (const h of t.handlers.values()) {
        const since = h.control.since[0]!
        if (since !== 0 && now - since > BUSY_MS) busy = 1
        if (h.domain !== domain) others++
      }
      return [busy, others, t.handlers.size]
    }
    const ranked = pool.map((t) => ({ t, r: rank(t) }))
    return ranked.reduce((best, next) => (lessThan(next.r, best.r) ? next : best)).t
  }

  private spawn(): Thread {
    // the compiled binary carries this file as an entrypoint at its root (scripts/build.ts)
    const worker = new Worker(new URL('./script-thread.ts', import.meta.url).href)
    const thread: Thread = { worker, handlers: new Map() }
    worker.onmessage = (e: MessageEvent<FromThread>) => this.receive(thread, e.data)
    worker.onerror = () => this.lost(thread)
    worker.addEventListener('close', () => this.lost(thread))
    worker.unref()
    return thread
  }

  /** A thread that failed: its handlers end as failed (without its internals in their outcome), a new one replaces it. */
  private lost(thread: Thread, why = 'the script thread failed'): void {
    const at = this.threads.indexOf(thread)
    if (at < 0) return
    this.threads.splice(at, 1)
    thread.worker.terminate()
    for (const h of [...thread.handlers.values()]) h.finish({ status: 'failed', error: why })
  }

  private receive(thread: Thread, m: FromThread): void {
    const handler = thread.handlers.get(m.id)
    if (!handler) return
    if (m.t === 'outcome') {
      handler.finish(m.outcome)
      return
    }
    if (m.t === 'branch') {
      handler.branch?.(m.had)
      return
    }
    const [outer, inner] = m.name.split('.') as [string, string | undefined]
    const entry = handler.host[outer]
    const fn = (
      inner === undefined ? entry : (entry as Record<string, HostFunction> | undefined)?.[inner]
    ) as HostFunction
    const answer = (ok: boolean, value?: unknown, error?: string) =>
      this.send(thread, { t: 'answer', id: m.id, call: m.call, ok, value, error })
    Promise.resolve()
      .then(() => fn(...m.args))
      .then(
        (value) => answer(true, value),
        (err: Error) => answer(false, undefined, err.message),
      )
  }

  private send(thread: Thread, m: ToThread): void {
    thread.worker.postMessage(m)
  }
}

/** Whether rank `a` comes before rank `b`, term by term. */
function lessThan(a: number[], b: number[]): boolean {
  for (const [i, x] of a.entries()) if (x !== b[i]) return x < b[i]!
  return false
}
