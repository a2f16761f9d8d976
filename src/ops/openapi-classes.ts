/**
 * The model classes of a signed-in caller's domain in the API description: each class with records
 * gets its collection path (list, create, LOOKUP, CLEAR) and its record path (read, replace, change,
 * delete), typed by a component made of the class's properties. What every model route does is the
 * catch-all route's (routes/rest/v1/model/[...path].ts); these paths are the same calls, named.
 */
import { ErrorBody } from '../http/schemas'
import type { ClassModel } from '../model/class-model'
import type { DataType } from '../model/properties'
import type { Components, Json } from './openapi-operation'

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

/** A record of the class as it is written: its properties, those the class requires required. */
function bodySchema(model: ClassModel): Json {
  const properties: Json = { id: { type: 'string', format: 'uuid' } }
  for (const p of model.properties) {
    const one = p.data_type === 'enum' && p.items ? { type: 'string', enum: p.items } : TYPE[p.data_type]
    properties[p.name] = {
      ...(p.multi ? { type: 'array', items: one } : one),
      ...(p.caption ? { description: p.caption } : {}),
      ...(p.default !== undefined ? { default: p.default } : {}),
    }
  }
  const required = model.properties.filter((p) => p.required).map((p) => p.name)
  return { type: 'object', properties, ...(required.length ? { required } : {}) }
}

/** A record as answered: the body, with the server's stamps. */
const recordSchema = (body: string): Json => ({
  allOf: [
    { $ref: `#/components/schemas/${body}` },
    {
      type: 'object',
      required: ['id'],
      properties: {
        ext: {
          type: 'object',
          properties: { ct: { type: 'string', format: 'date-time' }, lwt: { type: 'string', format: 'date-time' } },
        },
      },
    },
  ],
})

/** The paths of every class of `classes` that holds records, by key. */
export function classPaths(
  classes: ClassModel[],
  components: Components,
  idFor: (summary: string, method: string, path: string) => string,
): Record<string, Json> {
  const error = components.ref(ErrorBody)!
  const errorsOf = (...statuses: number[]) =>
    Object.fromEntries(
      statuses.map((s) => [s, { description: 'The error', content: { 'application/json': { schema: error } } }]),
    )
  const json = (schema: Json) => ({ 'application/json': { schema } })
  const paths: Record<string, Json> = {}
  for (const model of classes) {
    if (!model.table) continue // abstract classes have no records
    const name = `Model_${model.classname.replace(/[^A-Za-z0-9_]/g, '_')}`
    components.define(name, bodySchema(model))
    components.define(`${name}_record`, recordSchema(name))
    const record = { $ref: `#/components/schemas/${name}_record` }
    const base = `/rest/v1/model/${model.classname}`
    const op = (method: string, path: string, summary: string, rest: Json) => ({
      operationId: idFor(`${summary} ${model.classname}`, method, path),
      tags: ['model'],
      summary: `${summary} (${model.classname})`,
      ...rest,
    })
    const id = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }
    const override = (method: string) => ({
      name: 'X-HTTP-Method-Override',
      in: 'header',
      required: true,
      schema: { type: 'string', enum: [method] },
    })
    const ok = (schema: Json) => ({ 200: { description: 'The answer', content: json(schema) } })
    // a partitioned class's list needs the dates it covers (or a partition in the path)
    const { partition } = model
    const interval = partition && {
      name: 'interval',
      in: 'query',
      required: true,
      description: `JSON ["from","to"]: dates of ${partition.property}, both included (or list /<partition>)`,
      schema: { type: 'string', examples: ['["2026-01-01","2026-01-31"]'] },
    }
    paths[base] = {
      get: op('GET', base, 'List records of', {
        ...(interval ? { parameters: [interval] } : {}),
        responses: { ...ok({ type: 'array', items: record }), ...errorsOf(400, 401, 403) },
      }),
      post: op('POST', base, 'Create a record of', {
        requestBody: { required: true, content: json({ $ref: `#/components/schemas/${name}` }) },
        responses: { ...ok(record), ...errorsOf(400, 401, 403, 409) },
      }),
    }
    paths[`${base}#LOOKUP`] = {
      post: op('LOOKUP', base, 'Look up records of', {
        parameters: [override('LOOKUP')],
        requestBody: { required: true, content: json({ type: ['string', 'number'] }) },
        responses: { ...ok({ type: 'array', items: { type: 'string' } }), ...errorsOf(400, 401, 403, 404) },
      }),
    }
    paths[`${base}#CLEAR`] = {
      post: op('CLEAR', base, 'Delete every record of', {
        parameters: [override('CLEAR')],
        responses: { 204: { description: 'Done; no body' }, ...errorsOf(400, 401, 403) },
      }),
    }
    const item = `${base}/{id}`
    paths[item] = {
      get: op('GET', item, 'Read a record of', {
        parameters: [id],
        responses: { ...ok(record), ...errorsOf(400, 401, 403, 404) },
      }),
      put: op('PUT', item, 'Replace a record of', {
        parameters: [id],
        requestBody: { required: true, content: json({ $ref: `#/components/schemas/${name}` }) },
        responses: { ...ok(record), ...errorsOf(400, 401, 403, 404, 412) },
      }),
      patch: op('PATCH', item, 'Change a record of', {
        parameters: [id],
        requestBody: { required: true, content: json({ type: 'object' }) },
        responses: { ...ok(record), ...errorsOf(400, 401, 403, 404, 412) },
      }),
      delete: op('DELETE', item, 'Delete a record of', {
        parameters: [id],
        responses: { 204: { description: 'Done; no body' }, ...errorsOf(400, 401, 403, 404, 412) },
      }),
    }
  }
  return paths
}
