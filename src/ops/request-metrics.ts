/**
 * Requests by route pattern, method and status, and their latency histogram: counted on the request
 * path in plain maps, and turned into the two metric families only when scraped. prom-client's
 * Counter and Histogram sort and hash a label object on every call, which cost about 8 % of a point
 * read's CPU; these families go into the same prom-client registry and text format. The maps are
 * keyed by the route's and the method's own strings, whose hashes their strings keep: a key joined
 * per request was a new string to hash each time.
 */

import type { Registry } from 'prom-client'
import { METHODS } from '../values'

/** The methods the service serves (preflights included); the label of every other one is `other`. */
const SERVED = new Set<string>([...METHODS, 'OPTIONS'])

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10]

/** The requests of one route pattern and method. */
interface Series {
  route: string
  method: string
  /** Requests by status. */
  statuses: Map<number, number>
  /** Observations per bucket (not cumulative); the last is +Inf. */
  buckets: number[]
  sum: number
  count: number
}

type Value = { metricName?: string; labels: Record<string, string | number>; value: number }

/** A metric family in the shape prom-client's registry formats. */
const family = (name: string, help: string, type: 'counter' | 'histogram', values: () => Value[]) => ({
  name,
  help,
  type,
  aggregator: 'sum' as const,
  get: async () => ({ name, help, type, aggregator: 'sum' as const, values: values() }),
  reset() {},
})

export class RequestMetrics {
  private readonly byRoute = new Map<string, Map<string, Series>>()

  constructor(registry: Registry) {
    const series = () => [...this.byRoute.values()].flatMap((methods) => [...methods.values()])
    registry.registerMetric(
      family('platform_http_requests_total', 'HTTP requests by route pattern, method and status', 'counter', () =>
        series().flatMap((c) =>
          [...c.statuses].map(([status, n]) => ({
            labels: { route: c.route, method: c.method, status: String(status) },
            value: n,
          })),
        ),
      ) as never,
    )
    const name = 'platform_http_request_duration_seconds'
    registry.registerMetric(
      family(name, 'HTTP request latency by route pattern and method', 'histogram', () =>
        series().flatMap((l) => {
          const labels = { route: l.route, method: l.method }
          let below = 0
          const buckets = [...BUCKETS, '+Inf' as const].map((le, i) => {
            below += l.buckets[i]!
            return { metricName: `${name}_bucket`, labels: { ...labels, le }, value: below }
          })
          return [
            ...buckets,
            { metricName: `${name}_sum`, labels, value: l.sum },
            { metricName: `${name}_count`, labels, value: l.count },
          ]
        }),
      ) as never,
    )
  }

  observe(route: string, rawMethod: string, status: number, seconds: number): void {
    // a label's values must stay few: any other method a client sends counts as `other` (each new
    // one added its own series, and an 8,000-character method 137 KB of them, before any sign-in)
    const method = SERVED.has(rawMethod) ? rawMethod : 'other'
    let methods = this.byRoute.get(route)
    if (!methods) {
      methods = new Map()
      this.byRoute.set(route, methods)
    }
    let s = methods.get(method)
    if (!s) {
      s = { route, method, statuses: new Map(), buckets: new Array(BUCKETS.length + 1).fill(0), sum: 0, count: 0 }
      methods.set(method, s)
    }
    s.statuses.set(status, (s.statuses.get(status) ?? 0) + 1)
    let bucket = 0
    while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]!) bucket++
    s.buckets[bucket]!++
    s.sum += seconds
    s.count++
  }
}
