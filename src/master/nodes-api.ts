/** Routes of /rest/v1/master/nodes (and the spec's singular /rest/v1/master/node/<name>). */
import * as v from 'valibot'
import { DEFAULT_LIMITS } from '../entities/entity'
import { FieldSet } from '../query/fields'
import { parseFlat, parseListParams, parseMask } from '../query/list-query'
import { applyListQuery } from '../query/list-memory'
import { present } from '../query/present'
import { ITEM_PARAMS, listQuery, NoQuery, queryOf } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer, errors, NoContent } from '../http/schemas'
import { Instant, objectBody } from '../values'
import { NODE_LOG_LEVELS } from '../log'
import { badRequest } from '../errors'

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

const LogLevel = v.picklist(NODE_LOG_LEVELS, `must be one of ${NODE_LOG_LEVELS.join(', ')}`)

/** A live service process, as src/master/nodes.ts records it. */
const Node = v.strictObject({
  name: v.pipe(v.string(), v.description('NODE_NAME of the process')),
  fullName: v.pipe(v.string(), v.description('name@address')),
  ipAddress: v.string(),
  server: v.pipe(v.string(), v.description('the host name')),
  site: v.string(),
  type: v.literal('role'),
  roles: v.pipe(v.array(v.string()), v.description('webserver, worker (background work), svc (runs scripts), …')),
  status: v.literal('active'),
  dtStart: Instant,
  upTimeSec: v.pipe(v.number(), v.integer()),
  maxLogLevel: LogLevel,
})
const nodeAnswer = answer(Node)

const NameParams = v.object({ name: v.pipe(v.string(), v.description('the name or the full name of the node')) })
/** A node named that is not alive (404); another process that fails (502) or does not answer in time (504). */
const NODE_ERRORS = errors(404, 502, 504)

export const listNodesRoute = defineRoute({
  domainKind: 'master',
  summary: 'List the nodes of the cluster',
  description:
    'Every live service process: each keeps a record of itself under a heartbeat, gone within seconds of its stop.',
  query: listQuery(),
  response: { 200: answer(v.array(Node)) },
  async handle(req) {
    const { query, mask, flat } = parseListParams(req.query, listShape)
    const nodes = applyListQuery(await req.deps.nodes.list(), query, 'name')
    return nodes.map((n) => present(n, mask, flat))
  },
})

export const readNodeRoute = defineRoute({
  domainKind: 'master',
  summary: 'Read a node',
  params: NameParams,
  query: queryOf(ITEM_PARAMS),
  response: { 200: nodeAnswer, ...errors(404) },
  async handle(req) {
    const mask = req.query.mask === undefined ? null : parseMask(req.query.mask, FIELDS)
    return present(await req.deps.nodes.find(req.params.name), mask, parseFlat(req.query.flat))
  },
})

export const patchNodeRoute = defineRoute({
  domainKind: 'master',
  summary: "Change a node's log level",
  description: 'Wherever the node runs; answers the node as it now is.',
  params: NameParams,
  query: NoQuery,
  // optional in the schema, so an unknown field is named before a missing maxLogLevel is
  body: objectBody({ maxLogLevel: v.optional(LogLevel) }),
  response: { 200: nodeAnswer, ...NODE_ERRORS },
  handle: (req) => {
    const level = req.body.maxLogLevel
    if (level === undefined) throw badRequest('maxLogLevel is required: the only field a node takes', 'maxLogLevel')
    return req.deps.nodes.setLogLevel(req.params.name, level)
  },
})

/** The original's "node termination": the process stops gracefully and leaves the registry. */
export const terminateNodeRoute = defineRoute({
  domainKind: 'master',
  summary: 'Terminate a node',
  description: 'The process leaves the registry at once and stops gracefully; answers once it has acknowledged.',
  params: NameParams,
  query: NoQuery,
  response: { 204: NoContent, ...NODE_ERRORS },
  async handle(req) {
    await req.deps.nodes.terminate(req.params.name)
    return undefined
  },
})
