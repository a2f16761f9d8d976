/**
 * SYNC /rest/v1/design/classes: waits until every class of the domain is loaded and its storage
 * ready, then answers `{ready: true, classes: <count>, classnames: [...]}`. The body is optional;
 * `{"timeout_ms": n}` bounds the wait (default 10 s; 504 when it runs out).
 */
import * as v from 'valibot'
import { ApiError } from '../errors'
import { NoQuery } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer, errors } from '../http/schemas'
import { objectBody } from '../values'

const Body = v.optional(
  objectBody({
    timeout_ms: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(1),
        v.maxValue(60_000),
        v.description('how long to wait (10000 unless given)'),
      ),
    ),
  }),
)

const Synced = v.strictObject({
  ready: v.literal(true),
  classes: v.pipe(v.number(), v.integer()),
  classnames: v.array(v.string()),
})

export const syncClasses = defineRoute({
  summary: 'Wait until the classes are ready',
  description:
    'Reads the classes of the domain afresh and waits until each is loaded and its storage ready (another process ' +
    'may have just changed them); 504 when that takes longer than `timeout_ms`.',
  query: NoQuery,
  body: Body,
  response: { 200: answer(Synced), ...errors(504) },
  async handle(req) {
    const timeout = req.body?.timeout_ms ?? 10_000
    await req.deps.model.invalidate(req.ctx.domain) // read the classes afresh, as another process may have just changed them
    const loading = req.deps.model.ready(req.ctx.domain)
    const timer = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new ApiError(504, `classes not ready within ${timeout} ms`)), timeout).unref(),
    )
    const models = await Promise.race([loading, timer])
    return { ready: true as const, classes: models.size, classnames: [...models.keys()] }
  },
})
