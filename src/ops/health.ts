/**
 * Probes for load balancers and orchestrators. `/healthz`: the process answers. `/readyz`: it can
 * do its work — the database answers, carries every migration this build knows and takes this
 * process's writes (not refused for seconds, no old snapshot pinned), the shared
 * store (Redis) answers, and the service is not stopping (its workers and listeners winding down);
 * otherwise 503 naming the failing parts (each check bounded by a second).
 */
import { migrations } from '~storage/migrations/index'
import * as v from 'valibot'
import { ApiError } from '../errors'
import { IgnoredQuery } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer } from '../http/schemas'

const CHECK_MS = 1000

const within = <T>(work: Promise<T>, what: string): Promise<T> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${CHECK_MS} ms`)), CHECK_MS)
  })
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}

/** What each check found: `ok`, or why not. */
const Checks = v.strictObject({ database: v.string(), kv: v.string(), workers: v.string() })

export const healthzRoute = defineRoute({
  access: 'public',
  summary: 'Tell that the process answers',
  description: 'Liveness: answers as long as the process does, whatever the state of its database and store.',
  query: IgnoredQuery,
  response: { 200: answer(v.strictObject({ status: v.literal('up') })) },
  handle: () => ({ status: 'up' as const }),
})

export const readyzRoute = defineRoute({
  access: 'public',
  summary: 'Tell whether the service can do its work',
  description:
    'Readiness: the database answers, carries every migration and takes writes, the shared store answers, and the service is ' +
    'not stopping. Otherwise 503 (with Retry-After) naming what fails, each check in error_details.checks.',
  query: IgnoredQuery,
  response: { 200: answer(v.strictObject({ status: v.literal('ready'), checks: Checks })) },
  async handle(req) {
    const { db, kv } = req.deps
    const latest = migrations[migrations.length - 1]!.id
    const checks = {
      database: async () => {
        const row = await within(db.get('SELECT max(id) FROM migrations'), 'database')
        if (row?.[0] !== latest) throw new Error(`migrations: ${String(row?.[0])} applied, ${latest} expected`)
        const trouble = db.writeTrouble?.()
        if (trouble) throw new Error(`cannot write: ${trouble}`)
      },
      kv: () => within(kv.ping(), kv.kind === 'redis' ? 'Redis' : 'store'),
      workers: async () => {
        if (req.deps.metrics.stopping) throw new Error('the service is stopping')
      },
    }
    const results = await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        try {
          await check()
          return [name, 'ok'] as const
        } catch (err) {
          return [name, (err as Error).message] as const
        }
      }),
    )
    const failing = results.filter(([, outcome]) => outcome !== 'ok')
    if (failing.length)
      throw new ApiError(
        503,
        `not ready: ${failing.map(([name, why]) => `${name} (${why})`).join('; ')}`,
        { checks: Object.fromEntries(results) },
        1503,
        { 'retry-after': '1' },
      )
    return { status: 'ready' as const, checks: Object.fromEntries(results) as v.InferOutput<typeof Checks> }
  },
})
