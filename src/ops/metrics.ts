/**
 * Prometheus metrics (prom-client), one registry per service: requests by route pattern, method and
 * status with latency histograms, and gauges read when scraped — sessions and websockets of this
 * process, queue depths and ages, background workers, the event pump's lag behind the journal, the
 * process's memory and CPU. prom-client's default collectors are not used: their event-loop figures
 * are wrong under Bun.
 */
import { Counter, Gauge, Registry } from 'prom-client'
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

export class Metrics {
  readonly registry = new Registry()
  private readonly requests = new RequestMetrics(this.registry)
  readonly kvErrors = new Counter({
    name: 'platform_kv_unavailable_total',
    help: 'Requests refused because Redis could not be reached',
    registers: [this.registry],
  })
  readonly internalErrors = new Counter({
    name: 'platform_internal_errors_total',
    help: 'Requests that failed inside the service (answered 500), database errors among them',
    registers: [this.registry],
  })
  private sources?: MetricSources

  constructor() {
    const gauge = (name: string, help: string, labelNames: string[], read: (g: Gauge) => Promise<void> | void) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers: [this.registry],
        async collect() {
          this.reset()
          await read(this)
        },
      })
    const from = () => this.sources
    gauge('platform_websocket_connections', 'Open websockets of this process', [], (g) => {
      g.set(from()?.sockets().sockets ?? 0)
    })
    gauge('platform_websocket_subscriptions', 'Subscriptions of the open websockets', [], (g) => {
      g.set(from()?.sockets().subscriptions ?? 0)
    })
    gauge('platform_sessions_cached', 'Sessions this process holds in its cache', [], (g) => {
      g.set(from()?.sessionsCached() ?? 0)
    })
    gauge('platform_queue_jobs', 'Durable queue jobs waiting or running, by kind', ['kind'], async (g) => {
      const s = from()
      if (s) for (const q of await queueDepths(s.db)) g.set({ kind: q.kind }, q.waiting)
    })
    gauge('platform_queue_oldest_age_seconds', 'Age of the oldest waiting job, by kind', ['kind'], async (g) => {
      const s = from()
      if (!s) return
      for (const q of await queueDepths(s.db))
        if (q.oldest) g.set({ kind: q.kind }, Math.max(0, (Date.now() - Date.parse(q.oldest)) / 1000))
    })
    gauge('platform_worker_runs', 'Passes of each background worker since start', ['worker'], (g) => {
      for (const [worker, s] of Object.entries(from()?.workers() ?? {})) g.set({ worker }, s.runs)
    })
    gauge('platform_worker_failures', 'Failed passes of each background worker since start', ['worker'], (g) => {
      for (const [worker, s] of Object.entries(from()?.workers() ?? {})) g.set({ worker }, s.failures)
    })
    gauge('platform_journal_pump_lag', 'Journal records the event pump has not yet published', [], async (g) => {
      const s = from()
      if (!s) return
      const { last } = await journalBounds(s.db)
      g.set(Math.max(0, last - (await journalCursor(s.db, 'events'))))
    })
    gauge('process_resident_memory_bytes', 'Resident memory of the process', [], (g) => {
      g.set(process.memoryUsage().rss)
    })
    gauge('process_cpu_seconds_total', 'CPU time of the process (user and system)', [], (g) => {
      const { user, system } = process.cpuUsage()
      g.set((user + system) / 1e6)
    })
  }

  /** The background workers' passes and failures (readiness shows them). */
  workers(): Record<string, { runs: number; failures: number; running: boolean }> {
    return this.sources?.workers() ?? {}
  }

  /** The service has begun to stop: it is no longer ready for new work. */
  stopping = false

  /** Connects the scrape-time gauges to the running service. */
  provide(sources: MetricSources): void {
    this.sources = sources
  }

  /** One answered HTTP request. `route` is the route pattern (or `unmatched`), never the raw path. */
  observe(route: string, method: string, status: number, seconds: number): void {
    this.requests.observe(route, method, status, seconds)
  }
}
