/**
 * One operation of the API description, from the spec a route file exports: its parameters (path,
 * query, the headers that matter), its body and every answer it declares, each schema converted from
 * valibot to JSON Schema (2020-12, the dialect of OpenAPI 3.1). LOOKUP, SYNC and CLEAR are described
 * as they travel: a POST carrying X-HTTP-Method-Override.
 */
import { toJsonSchema } from '@valibot/to-json-schema'
import type * as v from 'valibot'
import { OVERRIDE_METHODS } from '../http/route'
import type { DeclaredRoute } from '../http/route-declaration'
import type { Method } from '../values'
import type { AnswerSchema } from '../http/schemas'

export type Json = Record<string, unknown>

/** JSON Schema of a valibot schema; what JSON Schema cannot say (checks, transforms) is left to the service. */
export function jsonSchema(schema: v.GenericSchema): Json {
  const { $schema: _, ...json } = toJsonSchema(schema, { target: 'draft-2020-12', errorMode: 'ignore' }) as Json
  return json
}

/** The entries of an object schema, under the pipes, optional and nullable wrappers around it. */
function entriesOf(schema: v.GenericSchema | undefined): Record<string, v.GenericSchema> {
  let s = schema as unknown as {
    type?: string
    pipe?: unknown[]
    wrapped?: unknown
    entries?: Record<string, v.GenericSchema>
  }
  while (s && !s.entries) {
    if (s.pipe && s.pipe[0] !== s) s = s.pipe[0] as typeof s
    else if (s.wrapped) s = s.wrapped as typeof s
    else break
  }
  return s?.entries ?? {}
}

const isOptional = (schema: v.GenericSchema) => ['optional', 'nullish', 'undefinedable'].includes(schema.type)

/** What every answer of a status says, whatever the route. */
const STATUS_TEXT: Record<number, string> = {
  200: 'The answer',
  204: 'Done; no body',
  304: 'Not modified since the ETag given in If-None-Match',
  400: 'The request is malformed; `error_details.field` names the part at fault',
  401: 'Not signed in, or the session has ended',
  403: 'The caller may not do this here',
  404: 'No such item in this domain',
  405: 'The URL does not serve this method',
  409: 'The item conflicts with another (a key already taken, a reference still held)',
  412: 'If-Match names another version than the stored one',
  413: 'The body is larger than the service takes',
  415: 'The body is not JSON',
  429: 'Too many failed sign-ins from this address: Retry-After says when to try again',
  500: 'A fault of the service (logged with the request id)',
  503: 'The store is out of reach or the service is stopping: Retry-After says when to try again',
}

/** A named component of an answer's schema (an item of a collection): referenced instead of repeated. */
export interface Components {
  ref(schema: v.GenericSchema): Json | undefined
  /** Adds a component made elsewhere (a model class's record). */
  define(name: string, schema: Json): void
}

function answerObject(status: number, answer: AnswerSchema, components: Components): Json {
  const description = STATUS_TEXT[status] ?? 'The answer'
  if (status === 204 || status === 304) return { description }
  const media = answer.media ?? 'application/json'
  const schema = components.ref(answer.schema) ?? jsonSchema(answer.schema)
  return { description, content: { [media]: { schema } } }
}

function parametersOf(spec: DeclaredRoute, pathParams: string[], method: Method): Json[] {
  const out: Json[] = []
  const params = entriesOf(spec.hook.params as v.GenericSchema | undefined)
  for (const name of pathParams)
    out.push({
      name,
      in: 'path',
      required: true,
      schema: params[name] ? jsonSchema(params[name]!) : { type: 'string' },
    })
  for (const [name, schema] of Object.entries(entriesOf(spec.hook.query as v.GenericSchema | undefined))) {
    const json = jsonSchema(schema)
    const { description, ...rest } = json
    out.push({
      name,
      in: 'query',
      required: !isOptional(schema),
      ...(description ? { description } : {}),
      schema: rest,
    })
  }
  if (OVERRIDE_METHODS.has(method))
    out.push({
      name: 'X-HTTP-Method-Override',
      in: 'header',
      required: true,
      description: `${method} travels as a POST that names it here (the public port also takes ${method} itself)`,
      schema: { type: 'string', enum: [method] },
    })
  if (method === 'PATCH' || method === 'PUT' || method === 'DELETE')
    out.push({
      name: 'If-Match',
      in: 'header',
      required: false,
      description:
        'The ETag of the version read (a GET answers it, and so does a write that answers the object): the change ' +
        'applies only to it (412 otherwise)',
      schema: { type: 'string' },
    })
  if (method === 'GET')
    out.push({
      name: 'If-None-Match',
      in: 'header',
      required: false,
      description: 'The ETag of the answer held: 304 when it is still the one',
      schema: { type: 'string' },
    })
  return out
}

/** The operation of `spec` at `path` (its `{param}` names in `pathParams`). */
export function operationOf(
  spec: DeclaredRoute,
  method: Method,
  tag: string,
  operationId: string,
  pathParams: string[],
  components: Components,
): Json {
  const { hook } = spec
  const responses: Json = {}
  for (const [status, answer] of Object.entries(hook.response).sort(([a], [b]) => Number(a) - Number(b)))
    responses[status] = answerObject(Number(status), answer, components)
  // a body its handler checks (checkedByHandler) is described by the schema it wraps
  const given = hook.body as v.GenericSchema | AnswerSchema | undefined
  const body = given && 'schema' in given && !('~run' in given) ? given.schema : (given as v.GenericSchema | undefined)
  return {
    operationId,
    tags: [tag],
    summary: hook.detail.summary,
    ...(hook.detail.description ? { description: hook.detail.description } : {}),
    ...(hook.admit.access === 'public' ? { security: [] } : {}),
    parameters: parametersOf(spec, pathParams, method),
    ...(body
      ? {
          requestBody: {
            required: !isOptional(body),
            content: { 'application/json': { schema: components.ref(body) ?? jsonSchema(body) } },
          },
        }
      : hook.parse === 'none' && method !== 'GET'
        ? { requestBody: { required: false, content: { 'application/octet-stream': { schema: {} } } } }
        : {}),
    responses,
  }
}
