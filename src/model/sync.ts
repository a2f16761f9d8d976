/**
 * SYNC /rest/v1/design/classes: waits until every class of the domain is loaded and its storage
 * ready, then answers `{ready: true, classes: <count>, classnames: [...]}`. The body is optional;
 * `{"timeout_ms": n}` bounds the wait (default 10 s; 504 when it runs out).
 */
import * as v from 'valibot'
import { validate } from '../entities/validate'
import { ApiError } from '../errors'
import { defineRoute } from '../http/route'

const Body = v.optional(
  v.strictObject({ timeout_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(60_000))) }),
)

export const syncClasses = defineRoute({
  async handle(req) {
    const body = validate(Body, await req.json())
    const timeout = body?.timeout_ms ?? 10_000
    await req.deps.model.invalidate(req.ctx.domain) // read the classes afresh, as another process may have just changed them
    const loading = req.deps.model.ready(req.ctx.domain)
    const timer = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new ApiError(504, `classes not ready within ${timeout} ms`)), timeout).unref(),
    )
    const models = await Promise.race([loading, timer])
    return { ready: true, classes: models.size, classnames: [...models.keys()] }
  },
})
