/**
 * The script threads of this process (SCRIPT_THREADS Bun workers running script-thread.ts): a
 * handler's sandbox lives on the least loaded one, its host calls are answered here on the main
 * thread, and its outcome comes back as a message. A thread that dies ends its handlers as failed
 * and is replaced.
 */
import type { HostApi, HostFunction, Outcome, Running, SandboxLimits } from './sandbox'
import type { FromThread, ToThread } from './script-thread'

interface Thread {
  worker: Worker
  handlers: Map<string, Handler>
}

interface Handler {
  host: HostApi
  finish(o: Outcome): void
  branch?: (had: boolean) => void
}

export class ScriptThreads {
  private readonly threads: Thread[] = []

  constructor(private readonly size: number) {}

  /** Runs `source` on a script thread with `host` answering its calls; startparam, sleep and onStop are the thread's. */
  run(id: string, source: string, params: unknown[], host: HostApi, limits: SandboxLimits): Running {
    const thread = this.pick()
    let finish!: (o: Outcome) => void
    const outcome = new Promise<Outcome>((resolve) => (finish = resolve))
    const handler: Handler = {
      host,
      finish: (o) => {
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
    this.send(thread, { t: 'run', id, source, params, limits, api })
    return {
      outcome,
      callRegistered: (name) =>
        new Promise<boolean>((resolve) => {
          if (!thread.handlers.has(id)) return resolve(false)
          handler.branch = resolve
          this.send(thread, { t: 'branch', id, name })
        }),
      end: (o) => (thread.handlers.has(id) ? this.send(thread, { t: 'end', id, outcome: o }) : undefined),
    }
  }

  /** Ends every thread (the service is stopping; its handlers were ended first). */
  stop(): void {
    for (const t of this.threads.splice(0)) t.worker.terminate()
  }

  private pick(): Thread {
    while (this.threads.length < this.size) this.threads.push(this.spawn())
    return this.threads.reduce((a, b) => (b.handlers.size < a.handlers.size ? b : a))
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
  private lost(thread: Thread): void {
    const at = this.threads.indexOf(thread)
    if (at < 0) return
    this.threads.splice(at, 1)
    thread.worker.terminate()
    for (const h of [...thread.handlers.values()]) h.finish({ status: 'failed', error: 'the script thread failed' })
  }

  private receive(thread: Thread, m: FromThread): void {
    const handler = thread.handlers.get(m.id)
    if (!handler) return
    if (m.t === 'outcome') return handler.finish(m.outcome)
    if (m.t === 'branch') return handler.branch?.(m.had)
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
