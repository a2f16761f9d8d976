/**
 * GET /metrics: the Prometheus text format. Open unless METRICS_TOKEN is set; then the scraper sends
 * it as a Bearer token (compared in constant time).
 */
import { timingSafeEqual } from 'node:crypto'
import * as v from 'valibot'
import { unauthorized } from '../errors'
import { NoQuery } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer } from '../http/schemas'

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

export const metricsRoute = defineRoute({
  access: 'public',
  summary: 'Read the metrics of the service',
  description:
    'The Prometheus text format: the figures of every app process, each series labelled `app_process`, and those of ' +
    'the database. When METRICS_TOKEN is set, send it as a Bearer token (401 otherwise).',
  query: NoQuery,
  response: { 200: answer(v.string(), 'text/plain') },
  async handle(req) {
    const wanted = req.deps.config.metricsToken
    if (wanted !== undefined) {
      // the scheme's name is case-insensitive (RFC 9110), as for every other route
      const given = /^Bearer\s+(\S+)$/i.exec(req.header('authorization') ?? '')?.[1]
      if (given === undefined || !sameText(given, wanted)) throw unauthorized('metrics need the METRICS_TOKEN')
    }
    const { metrics } = req.deps
    return new Response(await metrics.exposition(), { headers: { 'content-type': metrics.contentType } })
  },
})
