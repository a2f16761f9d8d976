/**
 * The API description (OpenAPI 3.1), made from the route table: every route file's methods, path
 * parameters, the body schema a route declares (valibot, through @valibot/to-json-schema), the
 * error body; for a signed-in caller also the data-model classes of its domain, with their
 * properties. LOOKUP, SYNC and CLEAR are no OpenAPI methods: they are described under
 * `x-method-override` of their path (sent as POST with X-HTTP-Method-Override, or as themselves).
 */
import { toJsonSchema } from '@valibot/to-json-schema'
import pkg from '../../package.json' with { type: 'json' }
import type { RouteEntry, RouteSpec } from '../http/route'
import { METHODS, OVERRIDE_METHODS } from '../http/route'
import type { ClassModel } from '../model/class-model'
import type { DataType } from '../model/properties'

type Json = Record<string, unknown>

const ERROR_BODY: Json = {
  type: 'object',
  required: ['error_code', 'error_message'],
  properties: {
    error_code: { type: 'integer', description: '1000 + the HTTP status (the spec fixes 1413 and 1501)' },
    error_message: { type: 'string' },
    error_details: { type: 'object', properties: { field: { type: 'string' } } },
  },
}
const json = (schema: Json) => ({ 'application/json': { schema } })
const ERROR = { description: 'error body', content: json({ $ref: '#/components/schemas/Error' }) }

/** `/a/:id/*` → `/a/{id}/{path}` and the names of its parameters. */
function pathOf(url: string): { path: string; params: string[] } {
  const params: string[] = []
  const path = url
    .split('/')
    .map((seg) => {
      if (seg.startsWith(':')) return params.push(seg.slice(1)), `{${seg.slice(1)}}`
      if (seg === '*') return params.push('path'), '{path}'
      return seg
    })
    .join('/')
  return { path, params }
}

function schemaOf(def: RouteSpec): Json | undefined {
  if (!def.hook.body) return undefined
  const { $schema: _, ...schema } = toJsonSchema(def.hook.body, { target: 'draft-2020-12', errorMode: 'ignore' }) as Json
  return schema
}

function operation(url: string, method: string, def: RouteSpec, params: string[]): Json {
  const body = schemaOf(def)
  const takesBody = ['POST', 'PUT', 'PATCH', 'LOOKUP', 'SYNC', 'CLEAR'].includes(method)
  return {
    operationId: `${method.toLowerCase()} ${url}`,
    ...(def.hook.detail.summary ? { summary: def.hook.detail.summary } : {}),
    ...(def.hook.admit.access === 'public' ? { security: [] } : {}),
    ...(params.length
      ? { parameters: params.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })) }
      : {}),
    ...(takesBody ? { requestBody: { required: method !== 'POST' || !!body, content: json(body ?? {}) } } : {}),
    responses: {
      '200': { description: 'the answer', content: json({}) },
      ...(method === 'DELETE' ? { '204': { description: 'done, no body' } } : {}),
      default: ERROR,
    },
  }
}

const TYPE: Record<DataType, Json> = {
  string: { type: 'string' },
  any: {},
  long: { type: 'integer' },
  int: { type: 'integer', format: 'int32' },
  integer: { type: 'integer', format: 'int32' },
  datetime: { type: 'string', format: 'date-time' },
  boolean: { type: 'boolean' },
  time: { type: 'string', pattern: '^\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,6})?)?$' },
  date: { type: 'string', format: 'date' },
  float: { type: 'number' },
  enum: { type: 'string' },
  uuid: { type: 'string', format: 'uuid' },
  attachment: { type: 'object' },
}

/** The record schema of a data-model class. */
function recordSchema(model: ClassModel): Json {
  const properties: Json = { id: { type: 'string', format: 'uuid' } }
  for (const p of model.properties) {
    const one = p.data_type === 'enum' && p.items ? { type: 'string', enum: p.items } : TYPE[p.data_type]
    properties[p.name] = {
      ...(p.multi ? { type: 'array', items: one } : one),
      ...(p.caption ? { description: p.caption } : {}),
    }
  }
  const required = model.properties.filter((p) => p.required).map((p) => p.name)
  return { type: 'object', properties, ...(required.length ? { required } : {}) }
}

export function openApiDocument(routes: readonly RouteEntry[], classes: ClassModel[] = []): Json {
  const paths: Record<string, Json> = {}
  for (const entry of routes) {
    const { path, params } = pathOf(entry.url)
    const item: Json = {}
    const overrides: Json = {}
    for (const method of METHODS) {
      const def = entry.module[method]
      if (!def) continue
      const op = operation(entry.url, method, def, params)
      if (OVERRIDE_METHODS.has(method)) overrides[method] = op
      else item[method.toLowerCase()] = op
    }
    if (Object.keys(overrides).length) item['x-method-override'] = overrides
    paths[path] = item
  }
  const schemas: Json = { Error: ERROR_BODY }
  for (const model of classes) {
    if (!model.table) continue // abstract classes have no records
    const name = `model_${model.classname.replace(/[^A-Za-z0-9_]/g, '_')}`
    schemas[name] = recordSchema(model)
    const ref = { $ref: `#/components/schemas/${name}` }
    const base = `/rest/v1/model/${model.classname}`
    paths[base] = {
      get: {
        operationId: `list ${base}`,
        summary: `list ${model.classname} records`,
        responses: { '200': { description: 'records', content: json({ type: 'array', items: ref }) }, default: ERROR },
      },
      post: {
        operationId: `create ${base}`,
        requestBody: { required: true, content: json(ref) },
        responses: { '200': { description: 'the record', content: json(ref) }, default: ERROR },
      },
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Platform service', version: pkg.version, description: pkg.description },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }, { cookie: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'a session token or an integration channel token' },
        cookie: { type: 'apiKey', in: 'cookie', name: 'RSession' },
      },
    },
  }
}
