/**
 * Prometheus metrics (prom-client): requests by route pattern, method and status with latency
 * histograms, and figures read when scraped — sessions and websockets of this process, background
 * workers, the process's memory and CPU — in one registry per process, every series of it labelled
 * `app_process` with the process's index (0: the one `npm start` began). Queue depths and ages and
 * the event pump's lag are the database's, the same whichever process reads them: a second registry
 * holds them, without that label, read only by the process answering the scrape.
 *
 * With APP_PROCESSES > 1 a scrape of the shared public port reaches any one of the processes: it
 * answers the figures of all of them (its own, and those the others send through the first one,
 * src/cluster/app-processes.ts), merged into one answer by prom-client's aggregation, so successive
 * scrapes carry the same series whichever process answered. prom-client's default collectors are
 * not used: their event-loop figures are wrong under Bun.
 */
import {
  AggregatorRegistry,
  Counter,
  Gauge,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
} from 'prom-client'
import type { Db } from '~storage/db'
import { journalBounds, journalCursor } from '~storage/journal'
import { queueDepths } from '~storage/queue'
import { RequestMetrics } from './request-metrics'

/** What the service lends the metrics at scrape time (its workers and sockets live outside deps). */
export interface MetricSources {
  db: Db
  sockets(): { sockets: number; subscriptions: number }
  workers(): Record<string, { runs: number; failures: number; running: boolean }>
  sessionsCached(): number
}

/** One process's figures as prom-client gives them as JSON: what app processes send each other. */
export type ProcessFigures = MetricObjectWithValues<MetricValue<string>>[]

/** The label naming the app process a series is of. */
export const PROCESS_LABEL = 'app_process'

/** When this process started, in seconds since the epoch. */
const STARTED_AT = Math.round(Date.now() - performance.now()) / 1000

type Collect<M> = (metric: M) => Promise<void> | void

export class Metrics {
  /** This process's own figures, each series labelled with its index. */
  private readonly own = new Registry()
  /** Figures of the database, the same from every process: read by the one that answers. */
  private readonly shared = new Registry()
  private readonly requests = new RequestMetrics(this.own)
  readonly kvErrors = new Counter({
    name: 'platform_kv_unavailable_total',
    help: 'Requests refused because Redis could not be reached',
    registers: [this.own],
  })
  readonly internalErrors = new Counter({
    name: 'platform_internal_errors_total',
    help: 'Requests that failed inside the service (answered 500), database errors among them',
    registers: [this.own],
  })
  /** The answer's media type (the Prometheus text format). */
  readonly contentType: string = this.own.contentType
  private readonly merged = new Gauge({
    name: 'platform_app_processes_scraped',
    help: 'App processes whose figures this answer holds (one that did not answer in time is left out)',
    registers: [this.shared],
  })
  private sources?: MetricSources
  /** The other app processes' figures (APP_PROCESSES > 1). */
  private peers?: () => Promise<ProcessFigures[]>

  /** `appProcess`: this app process's index (0 for the first, which `npm start` began). */
  constructor(appProcess = 0) {
    this.own.setDefaultLabels({ [PROCESS_LABEL]: String(appProcess) })
    const from = () => this.sources
    // figures read when scraped: a gauge is set, a counter is given the total kept elsewhere
    const gauge = (registry: Registry, name: string, help: string, labelNames: string[], read: Collect<Gauge>) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers: [registry],
        async collect() {
          this.reset()
          await read(this)
        },
      })
    const total = (name: string, help: string, labelNames: string[], read: Collect<Counter>) =>
      new Counter({
        name,
        help,
        labelNames,
        registers: [this.own],
        async collect() {
          this.reset()
          await read(this)
        },
      })
    gauge(this.own, 'platform_websocket_connections', 'Open websockets of this process', [], (g) => {
      g.set(from()?.sockets().sockets ?? 0)
    })
    gauge(this.own, 'platform_websocket_subscriptions', 'Subscriptions of the open websockets', [], (g) => {
      g.set(from()?.sockets().subscriptions ?? 0)
    })
    gauge(this.own, 'platform_sessions_cached', 'Sessions this process holds in its cache', [], (g) => {
      g.set(from()?.sessionsCached() ?? 0)
    })
    total(
      'platform_worker_runs_total',
      'Passes of each background worker since the process started',
      ['worker'],
      (c) => {
        for (const [worker, s] of Object.entries(from()?.workers() ?? {})) c.inc({ worker }, s.runs)
      },
    )
    total(
      'platform_worker_failures_total',
      'Failed passes of each background worker since the process started',
      ['worker'],
      (c) => {
        for (const [worker, s] of Object.entries(from()?.workers() ?? {})) c.inc({ worker }, s.failures)
      },
    )
    gauge(this.own, 'process_resident_memory_bytes', 'Resident memory of the process', [], (g) => {
      g.set(process.memoryUsage().rss)
    })
    total('process_cpu_seconds_total', 'CPU time of the process (user and system)', [], (c) => {
      const { user, system } = process.cpuUsage()
      c.inc((user + system) / 1e6)
    })
    gauge(this.own, 'process_start_time_seconds', 'When the process started, in seconds since the epoch', [], (g) => {
      g.set(STARTED_AT)
    })
    gauge(this.shared, 'platform_queue_jobs', 'Durable queue jobs waiting, by kind', ['kind'], async (g) => {
      const s = from()
      if (s) for (const q of await queueDepths(s.db)) g.set({ kind: q.kind }, q.waiting)
    })
    gauge(
      this.shared,
      'platform_queue_oldest_age_seconds',
      'Age of the oldest waiting job, by kind',
      ['kind'],
      async (g) => {
        const s = from()
        if (!s) return
        for (const q of await queueDepths(s.db))
          if (q.oldest) g.set({ kind: q.kind }, Math.max(0, (Date.now() - Date.parse(q.oldest)) / 1000))
      },
    )
    gauge(
      this.shared,
      'platform_journal_pump_lag',
      'Journal records the event pump has not yet published',
      [],
      async (g) => {
        const s = from()
        if (!s) return
        const { last } = await journalBounds(s.db)
        g.set(Math.max(0, last - (await journalCursor(s.db, 'events'))))
      },
    )
  }

  /** The background workers' passes and failures (readiness shows them). */
  workers(): Record<string, { runs: number; failures: number; running: boolean }> {
    return this.sources?.workers() ?? {}
  }

  /** The service has begun to stop: it is no longer ready for new work. */
  stopping = false

  /** Connects the scrape-time figures to the running service. */
  provide(sources: MetricSources): void {
    this.sources = sources
  }

  /** Where the other app processes' figures come from (APP_PROCESSES > 1). */
  gatherFrom(peers: () => Promise<ProcessFigures[]>): void {
    this.peers = peers
  }

  /** This process's own figures, for the process that answers a scrape. */
  ownFigures(): Promise<ProcessFigures> {
    return this.own.getMetricsAsJSON() as Promise<ProcessFigures>
  }

  /** GET /metrics: the figures of every app process and of the database, in the Prometheus text format. */
  async exposition(): Promise<string> {
    const [own, others] = await Promise.all([this.ownFigures(), this.peers?.() ?? []])
    this.merged.set(1 + others.length)
    const shared = (await this.shared.getMetricsAsJSON()) as ProcessFigures
    return AggregatorRegistry.aggregate([own, ...others, shared]).metrics()
  }

  /** One answered HTTP request. `route` is the route pattern (or `unmatched`), never the raw path. */
  observe(route: string, method: string, status: number, seconds: number): void {
    this.requests.observe(route, method, status, seconds)
  }
}
