/** Routes of /rest/v1/service/svcscript_runtimes: start, list, read and stop script handlers. */
import * as v from 'valibot'
import { DEFAULT_LIMITS } from '../entities/entity'
import { validate } from '../entities/validate'
import { FieldSet } from '../http/fields'
import { parseListParams } from '../http/list-query'
import { applyListQuery } from '../http/list-memory'
import { present } from '../http/present'
import { defineRoute } from '../http/route'

const FIELDS = new FieldSet(['id', 'site', 'node', 'domain', 'type', 'code', 'name', 'starttime'])
const listShape = { fields: FIELDS, output: FIELDS, limits: DEFAULT_LIMITS }
const param = v.optional(v.unknown())
const StartBody = v.strictObject({
  code: v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(128)),
  ...Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`startparam${i + 1}`, param])),
})

export const startHandlerRoute = defineRoute({
  async handle(req) {
    const body = validate(StartBody, await req.json()) as Record<string, unknown> & { code: string }
    const params = Array.from({ length: 9 }, (_, i) => body[`startparam${i + 1}`] ?? null)
    const { id, site, node, domain, type, code } = await req.deps.scripts.launch(req.ctx, body.code, params)
    return { id, site, node, domain, type, code }
  },
})

export const listHandlersRoute = defineRoute({
  async handle(req) {
    const { query, mask, flat } = parseListParams(req.query, listShape)
    const handlers = applyListQuery(await req.deps.scripts.list(req.ctx.domain), query, 'starttime')
    return handlers.map((h) => present(h, mask, flat))
  },
})

/** Beyond the spec: a running handler, or how one that ended in the last day ended. */
export const readHandlerRoute = defineRoute({
  handle: (req) => req.deps.scripts.read(req.ctx.domain, req.uuidParam('id')),
})

/** The first stop takes the script's onStop branch when it registered one; a second one ends it. */
export const stopHandlerRoute = defineRoute({
  async handle(req) {
    await req.deps.scripts.stopAnywhere(req.ctx.domain, req.uuidParam('id'))
    return undefined
  },
})
