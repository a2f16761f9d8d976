/**
 * The one runner of background work. A worker is a name, a schedule (an interval, or a cron pattern
 * through croner), the signals that wake it early, whether one process of the cluster runs it at a
 * time, and a `step` that does one batch and returns how much it did. The runner gives every worker
 * the same rules: one pass at a time per process (a wake-up during a pass runs another pass after
 * it); a pass repeats its step while the step finds work; a cluster lease (a KV lock renewed while
 * the pass runs, the pass stopped if it is lost; a woken pass that finds it held tries again soon;
 * or kept between passes, ./held-lease.ts);
 * errors logged with the worker's name; `stop()`
 * waits for passes in flight; `runOnce` for tests. A worker is made by a factory where it keeps
 * state (src/workers/index.ts): what it holds between passes lives in the factory's closure.
 */
import { Cron } from 'croner'
import { Stopping } from '~storage/db'
import { KvUnavailable, type Lock } from '~storage/kv/kv'
import type { Deps } from '../deps'
import type { HandoffTaker } from '../integration/delivery-handoff'
import type { SignalName } from '../signals'
import { HELD_LEASE_MS, HeldLease, RELEASED, WAKE_CHANNEL } from './held-lease'

/**
 * What a worker's step receives, built by the service: the services a call may use, and the
 * handles only background work needs (they are not in Deps, so domain code cannot reach them; the
 * deliveries' hand-off is there only as the port that reserves, not the side that takes).
 */
export interface WorkerContext {
  deps: Deps
  /** This process's websockets: those whose session expired are closed (ws-sessions). */
  sockets: { sweep(): Promise<number> }
  /** This process's script handlers: their records are renewed with the heartbeat (node-heartbeat). */
  scripts: { refresh(): Promise<void> }
  /** Webhook deliveries handed over as they are enqueued: the deliveries worker takes them (webhook-deliveries). */
  deliveries: { attach(taker: HandoffTaker): () => void; settled(): Promise<void> }
}

/** The ports the runner itself uses: leases, wake-ups, the long-work gate and the log. */
export type RunnerPorts = Pick<Deps, 'kv' | 'log' | 'signals' | 'longWork'>

/** `C` is what the step receives: the service's WorkerContext (tests of the runner give their own). */
export interface Worker<C = WorkerContext> {
  name: string
  /** Runs every `every` ms when nothing wakes it earlier... */
  every?: number
  /** ...or on a cron pattern (croner syntax, seconds allowed). */
  cron?: string
  wakeOn?: SignalName[]
  /**
   * 'cluster': a pass holds the cluster's lease, so one process at a time runs it; 'none': every
   * process runs it (its step claims the rows it works on, so processes never share one).
   */
  lease: 'cluster' | 'none'
  /**
   * With a cluster lease: keep it between passes (./held-lease.ts), for a worker woken by every
   * commit; the other processes pass their wake-ups on to the holder.
   */
  holdLease?: boolean
  /**
   * A `holdLease` worker's: this process has just taken the lease (again), before the step that
   * follows. What another holder did meanwhile may still be on its way here.
   */
  leaseTaken?(context: C): void
  /** A `holdLease` worker's: another process passed a wake-up on to it (it committed). */
  wokenElsewhere?(context: C): void
  /**
   * A `holdLease` worker's, woken where another process holds the lease: it tells the holder itself
   * (the journal's followers pass the records on: src/journal/relay.ts) instead of the wake-up the
   * runner passes on.
   */
  passOn?(context: C): void
  /**
   * The most a step does at once: a step that did fewer reached the end of the work there was, and
   * the pass ends without another step to find nothing (a wake-up meanwhile runs the next pass).
   */
  batch?: number
  /** Runs even where BACKGROUND=off: work that keeps the process itself going (its node heartbeat). */
  always?: boolean
  /** One batch of work; how much it did (more than zero: there may be more, so it runs again at once). */
  step(context: C, signal: AbortSignal): Promise<number>
  /** Work a step started and left running (deliveries in flight): `stop()` waits for it. */
  drain?(context: C): Promise<void>
  /**
   * What brings the worker work between passes, started with it and ended by `stop()` (the
   * webhook-events worker's bus listener, which keeps what comes and raises its signal); answers
   * how to end it. Started also where passes are not scheduled (tests run them with `runOnce`).
   */
  feed?(context: C): () => void
}

export interface RunnerOptions {
  /** Lifetime of a cluster lease; renewed at a third of it while a pass runs. */
  leaseMs?: number
  /** Steps a pass may take before it yields to the schedule (a bound on one pass's length). */
  maxStepsPerPass?: number
}

interface State<C> {
  worker: Worker<C>
  running: Promise<number> | null
  again: boolean
  timer?: ReturnType<typeof setTimeout>
  cron?: Cron
  runs: number
  failures: number
  /** The last pass failed for want of the store (an outage is logged once, not every pass). */
  storeDown?: boolean
  /** The last pass found another process holding the lease: the next one comes this soon (ms). */
  leaseRetryMs?: number
  /** The lease a `holdLease` worker keeps between passes. */
  held?: HeldLease
  /** The pass running now stops when this aborts (its lease was lost). */
  abort?: AbortController
}

/**
 * A woken pass that finds the lease held may have come while the holder's pass was ending (its last
 * read before this process's commit): the wake-up would wait for the schedule (the journal pump's
 * 500 ms). It tries again after 1, 2, 4 ... ms, at most this, until it holds the lease once.
 */
const LEASE_RETRY_MAX_MS = 50

export class WorkerRunner<C = WorkerContext> {
  private readonly states = new Map<string, State<C>>()
  private readonly unsubscribe: (() => void)[] = []
  /** The subscription to wake-ups other processes pass on to the leases held here. */
  private wakeRelay?: Promise<(() => Promise<void>) | null>
  private stopping = false
  private readonly leaseMs: number
  private readonly maxSteps: number

  constructor(
    private readonly deps: RunnerPorts,
    workers: readonly Worker<C>[],
    private readonly context: C,
    options: RunnerOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? 30_000
    this.maxSteps = options.maxStepsPerPass ?? 1000
    for (const worker of workers) {
      if (this.states.has(worker.name)) throw new Error(`two workers are named ${worker.name}`)
      const state: State<C> = { worker, running: null, again: false, runs: 0, failures: 0 }
      if (worker.lease === 'cluster' && worker.holdLease) {
        const ttl = Math.min(this.leaseMs, HELD_LEASE_MS)
        state.held = new HeldLease(
          deps.kv,
          worker.name,
          ttl,
          (reason) => state.abort?.abort(reason),
          () => worker.leaseTaken?.(context),
        )
      }
      this.states.set(worker.name, state)
    }
  }

  /**
   * Starts every worker's feed and schedules every worker (`onlyAlways`: those marked `always`;
   * `schedule: false`: feeds only, passes run by `runOnce`) and listens for their wake-ups. Interval
   * workers make a first pass at once: work left by a previous process (queued jobs, unpublished
   * journal) does not wait a period.
   */
  start(options: { onlyAlways?: boolean; schedule?: boolean } = {}): void {
    for (const state of this.states.values()) {
      const { worker } = state
      if (options.onlyAlways && !worker.always) continue
      if (worker.feed) this.unsubscribe.push(worker.feed(this.context))
      if (options.schedule === false) continue
      for (const signal of worker.wakeOn ?? [])
        this.unsubscribe.push(this.deps.signals.on(signal, () => this.wake(worker.name)))
      if (worker.cron) state.cron = new Cron(worker.cron, { protect: true }, () => this.wake(worker.name))
      else if (worker.every !== undefined) this.wake(worker.name)
    }
    if (options.schedule !== false && !options.onlyAlways && [...this.states.values()].some((s) => s.held))
      this.wakeRelay = this.deps.kv
        .subscribe(WAKE_CHANNEL, (message) => {
          const released = message.startsWith(RELEASED)
          const state = this.states.get(released ? message.slice(RELEASED.length) : message)
          if (!state?.held) return
          if (released) state.held.released()
          else state.worker.wokenElsewhere?.(this.context)
          if (released || state.held.held) this.wake(state.worker.name)
        })
        .catch((err) => {
          // their commits wait for a holder's periodic read of the journal (src/journal/recent.ts)
          this.deps.log.warn('wake-ups of other processes will wait for the schedule', { error: String(err) })
          return null
        })
  }

  /** Runs the worker soon: now if idle, after the current pass if one runs. */
  wake(name: string): void {
    const state = this.state(name)
    if (this.stopping) return
    if (state.running) {
      state.again = true
      return
    }
    void this.pass(state)
  }

  /** One pass now (or the end of the one running, then another): for tests and shutdown. */
  async runOnce(name: string): Promise<number> {
    const state = this.state(name)
    while (state.running) await state.running
    return this.pass(state)
  }

  /** Waits for the work the worker's steps left running (its `drain`): for tests. */
  async settled(name: string): Promise<void> {
    await this.state(name).worker.drain?.(this.context)
  }

  /** Stops scheduling and waits for the passes in flight. */
  async stop(): Promise<void> {
    this.stopping = true
    for (const off of this.unsubscribe.splice(0)) off()
    for (const state of this.states.values()) {
      clearTimeout(state.timer)
      state.cron?.stop()
    }
    await Promise.all([...this.states.values()].map((s) => s.running))
    await (await this.wakeRelay)?.().catch(() => {})
    // a held lease goes back as soon as its own worker has drained, whatever the others still wait for
    const drained = await Promise.allSettled(
      [...this.states.values()].map(async (s) => {
        try {
          await s.worker.drain?.(this.context)
        } finally {
          await s.held?.release()
        }
      }),
    )
    for (const d of drained) if (d.status === 'rejected') throw d.reason
  }

  /** Resolves once wake-ups passed on by other processes reach this runner (tests start a second runner after it). */
  async ready(): Promise<void> {
    await this.wakeRelay
  }

  /** Passes (including those that found another process holding the lease) and failures of each worker since start. */
  stats(): Record<string, { runs: number; failures: number; running: boolean }> {
    return Object.fromEntries(
      [...this.states].map(([name, s]) => [name, { runs: s.runs, failures: s.failures, running: s.running !== null }]),
    )
  }

  private state(name: string): State<C> {
    const state = this.states.get(name)
    if (!state) throw new Error(`no worker named ${name}`)
    return state
  }

  private schedule(state: State<C>): void {
    clearTimeout(state.timer)
    if (this.stopping || state.worker.every === undefined) return
    const delay = Math.min(state.leaseRetryMs ?? state.worker.every, state.worker.every)
    state.timer = setTimeout(() => this.wake(state.worker.name), delay)
    state.timer.unref?.()
  }

  private pass(state: State<C>): Promise<number> {
    const run = this.runPass(state.worker).finally(() => {
      state.running = null
      state.runs++
      if (state.again && !this.stopping) {
        state.again = false
        void this.pass(state)
      } else this.schedule(state)
    })
    state.running = run
    return run
  }

  private async runPass(worker: Worker<C>): Promise<number> {
    const abort = new AbortController()
    const state = this.state(worker.name)
    state.abort = abort
    let lock: Lock | null = null
    let renewal: ReturnType<typeof setInterval> | undefined
    try {
      if (state.held) {
        // the holder does this work: it is told of the wake-up
        if (!(await state.held.take())) {
          if (worker.passOn) worker.passOn(this.context)
          else state.held.forward()
          return 0
        }
      } else if (worker.lease === 'cluster') {
        lock = await this.deps.kv.lock(`worker:${worker.name}`, this.leaseMs)
        if (!lock) {
          // another process holds the lease; it does this work, unless its pass was ending
          if (worker.wakeOn?.length) state.leaseRetryMs = Math.min(LEASE_RETRY_MAX_MS, (state.leaseRetryMs ?? 0.5) * 2)
          return 0
        }
        state.leaseRetryMs = undefined
        renewal = setInterval(() => {
          void lock!.extend(this.leaseMs).then(
            (kept) => kept || abort.abort(new Error('the cluster lease was lost')),
            () => abort.abort(new Error('the cluster lease could not be renewed')),
          )
        }, this.leaseMs / 3)
      }
      let total = 0
      for (let i = 0; i < this.maxSteps && !abort.signal.aborted && !this.stopping; i++) {
        // long work's uncommitted rows are visible to reads across domains: a step waits for its end
        const busy = worker.always ? undefined : this.deps.longWork.idle()
        if (busy) await busy
        const done = await worker.step(this.context, abort.signal)
        total += done
        if (done === 0 || done < (worker.batch ?? 1)) break
      }
      if (abort.signal.aborted) throw abort.signal.reason
      this.state(worker.name).storeDown = false
      return total
    } catch (err) {
      state.failures++
      // an outage of the store fails every pass until it ends: said once per worker, without a stack
      if (err instanceof Stopping) {
        this.deps.log.info('worker step cut short by the stop', { worker: worker.name })
      } else if (err instanceof KvUnavailable) {
        if (!state.storeDown)
          this.deps.log.warn('worker waits for the store', { worker: worker.name, error: err.message })
        state.storeDown = true
      } else
        this.deps.log.error('worker failed', { worker: worker.name, error: String(err), stack: (err as Error)?.stack })
      return 0
    } finally {
      state.abort = undefined
      clearInterval(renewal)
      await lock?.release().catch(() => {})
    }
  }
}
