/** Routes of /rest/v1/service/svcscript_runtimes: start, list, read and stop script handlers. */
import * as v from 'valibot'
import { DEFAULT_LIMITS } from '../entities/entity'
import { FieldSet } from '../query/fields'
import { applyListQuery } from '../query/list-memory'
import { parseListParams } from '../query/list-query'
import { present } from '../query/present'
import { listQuery, NoQuery } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer, errors, IdParams, NoContent } from '../http/schemas'
import { Instant, objectBody, Uuid } from '../values'

const FIELDS = new FieldSet(['id', 'site', 'node', 'domain', 'type', 'code', 'name', 'starttime'])
const listShape = { fields: FIELDS, output: FIELDS, limits: DEFAULT_LIMITS }
const START_PARAMS = Array.from({ length: 9 }, (_, i) => `startparam${i + 1}`)
const param = v.optional(v.pipe(v.unknown(), v.description("any JSON value: the script's start parameter")))

const StartBody = objectBody({
  code: v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(128)),
  ...(Object.fromEntries(START_PARAMS.map((name) => [name, param])) as Record<string, typeof param>),
})

/** Where a handler runs and what it runs (src/scripts/handlers.ts `HandlerInfo`). */
const Started = {
  id: Uuid,
  site: v.string(),
  node: v.pipe(v.string(), v.description('the node the handler runs on')),
  domain: v.pipe(v.string(), v.description("the domain's name")),
  type: v.literal('svc'),
  code: v.pipe(v.string(), v.description("the script's code")),
}
const HandlerEntries = { ...Started, name: v.pipe(v.string(), v.description("the script's name")), starttime: Instant }
const Handler = v.strictObject(HandlerEntries)

/** The lines its script wrote with `log()`, oldest first (the first 200, then a line saying the rest are in the service log). */
const Log = v.pipe(
  v.array(v.strictObject({ time: Instant, level: v.string(), message: v.string() })),
  v.description('the lines the script wrote with log(), oldest first; the first 200 are kept, then a line saying so'),
)
const StateEntries = { ...HandlerEntries, log: Log }

/** A handler that ended: how (`status`), when, and what it gave or why it stopped. */
const ended = <const E extends v.ObjectEntries>(entries: E) =>
  v.strictObject({ ...StateEntries, ...entries, endtime: Instant, durationMs: v.number() })
const HandlerState = v.variant('status', [
  v.strictObject({ ...StateEntries, status: v.literal('running') }),
  ended({
    status: v.literal('done'),
    // what the script's code gave, if anything
    result: v.optional(v.unknown()),
  }),
  ended({ status: v.picklist(['failed', 'stopped']), error: v.string() }),
  ended({ status: v.literal('limit'), error: v.string(), limit: v.picklist(['memory', 'stack', 'cpu', 'duration']) }),
])

/** No such handler, or its script (404); a script in the original's visual form (409). */
const START_ERRORS = errors(404, 409, 502, 504)
/** The node running the handler failed (502) or did not answer in time (504). */
const REMOTE_ERRORS = errors(502, 504)

export const startHandlerRoute = defineRoute({
  summary: 'Start a service script handler',
  description:
    'Runs the script of `code` on an svc node (this site first) with start parameters 1 to 9 (null when not ' +
    'given); answers once it started. 429 when the domain runs as many handlers on that node as it may.',
  query: NoQuery,
  body: StartBody,
  response: { 200: answer(v.strictObject(Started)), ...START_ERRORS },
  async handle(req) {
    const body = req.body as typeof req.body & Record<string, unknown>
    const params = START_PARAMS.map((name) => body[name] ?? null)
    const { id, site, node, domain, type, code } = await req.deps.scripts.launch(req.ctx, body.code, params)
    return { id, site, node, domain, type, code }
  },
})

export const listHandlersRoute = defineRoute({
  summary: 'List the running service script handlers',
  description: 'The handlers running in the domain, on every node.',
  query: listQuery(),
  response: { 200: answer(v.array(Handler)) },
  async handle(req) {
    const { query, mask, flat } = parseListParams(req.query, listShape)
    const handlers = applyListQuery(await req.deps.scripts.list(req.ctx.domain), query, 'starttime')
    return handlers.map((h) => present(h, mask, flat))
  },
})

/** Beyond the spec: a running handler, or how one that ended in the last day ended. */
export const readHandlerRoute = defineRoute({
  summary: 'Read a service script handler',
  description:
    'A running handler (status running), or how one that ended within the last day ended; with the lines its ' +
    'script logged (`log`).',
  params: IdParams,
  query: NoQuery,
  response: { 200: answer(HandlerState), ...errors(404) },
  handle: (req) => req.deps.scripts.read(req.ctx.domain, req.params.id),
})

/** The first stop takes the script's onStop branch when it registered one; a second one ends it. */
export const stopHandlerRoute = defineRoute({
  summary: 'Stop a service script handler',
  description:
    "The first stop runs the script's onStop branch when it registered one; a second one ends it. 404 when " +
    'no such handler runs.',
  params: IdParams,
  query: NoQuery,
  response: { 204: NoContent, ...errors(404), ...REMOTE_ERRORS },
  async handle(req) {
    await req.deps.scripts.stopAnywhere(req.ctx.domain, req.params.id)
    return undefined
  },
})
