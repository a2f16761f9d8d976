/**
 * Probes for load balancers and orchestrators. `/healthz`: the process answers. `/readyz`: it can
 * do its work — the database answers and carries every migration this build knows, the shared
 * store (Redis) answers, and the service is not stopping (its workers and listeners winding down);
 * otherwise 503 naming the failing parts (each check bounded by a second).
 */
import { migrations } from '~storage/migrations/index'
import { ApiError } from '../errors'
import { defineRoute } from '../http/route'

const CHECK_MS = 1000

const within = <T>(work: Promise<T>, what: string): Promise<T> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${CHECK_MS} ms`)), CHECK_MS)
  })
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}

export const healthzRoute = defineRoute({ access: 'public', handle: () => ({ status: 'up' }) })

export const readyzRoute = defineRoute({
  access: 'public',
  async handle(req) {
    const { db, kv } = req.deps
    const latest = migrations[migrations.length - 1]!.id
    const checks = {
      database: async () => {
        const row = await within(db.get('SELECT max(id) FROM migrations'), 'database')
        if (row?.[0] !== latest) throw new Error(`migrations: ${String(row?.[0])} applied, ${latest} expected`)
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
    return { status: 'ready', checks: Object.fromEntries(results) }
  },
})
