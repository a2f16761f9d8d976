/** Routes of /rest/v1/master/nodes (and the spec's singular /rest/v1/master/node/<name>). */
import * as v from 'valibot'
import { DEFAULT_LIMITS } from '../entities/entity'
import { validate } from '../entities/validate'
import { FieldSet } from '../http/fields'
import { parseFlat, parseListParams, parseMask } from '../http/list-query'
import { applyListQuery } from '../http/list-memory'
import { present } from '../http/present'
import { defineRoute } from '../http/route'
import { LOG_LEVELS } from '../log'

const FIELDS = new FieldSet([
  'name',
  'fullName',
  'ipAddress',
  'site',
  'server',
  'isSystem',
  'type',
  'dtStart',
  'upTimeSec',
  'status',
  'maxLogLevel',
  'roles',
  'srvIdx',
])
const listShape = { fields: FIELDS, output: FIELDS, limits: DEFAULT_LIMITS }

const PatchBody = v.strictObject({
  maxLogLevel: v.picklist(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(', ')}`),
})

export const listNodesRoute = defineRoute({
  domainKind: 'master',
  async handle(req) {
    const { query, mask, flat } = parseListParams(req.query, listShape)
    const nodes = applyListQuery(await req.deps.nodes.list(), query, 'name')
    return nodes.map((n) => present(n, mask, flat))
  },
})

export const readNodeRoute = defineRoute({
  domainKind: 'master',
  async handle(req) {
    const mask = req.query.mask === undefined ? null : parseMask(req.query.mask, FIELDS)
    return present(await req.deps.nodes.find(req.params.name!), mask, parseFlat(req.query.flat))
  },
})

export const patchNodeRoute = defineRoute({
  domainKind: 'master',
  async handle(req) {
    const body = validate(PatchBody, await req.json())
    return req.deps.nodes.setLogLevel(req.params.name!, body.maxLogLevel)
  },
})

/** The original's "node termination": the process stops gracefully and leaves the registry. */
export const terminateNodeRoute = defineRoute({
  domainKind: 'master',
  async handle(req) {
    await req.deps.nodes.terminate(req.params.name!)
    return undefined
  },
})
