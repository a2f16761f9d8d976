/**
 * Values every layer shares, apart from any transport: the schemas of identifiers, instants and JSON
 * objects that entity declarations and route schemas are built from, the names schemas are known by
 * in the API description, the kinds of domain, and the request methods (a route file exports one
 * spec per method; a role grants them).
 */
import * as v from 'valibot'

/**
 * Names of schemas that the API description holds once, as components, and refers to wherever they
 * are used (an item of a collection, a body, the error body).
 */
const NAMES = new WeakMap<object, string>()

/** `schema`, known by `name` in the API description. */
export function named<S extends v.GenericSchema>(schema: S, name: string): S {
  NAMES.set(schema, name)
  return schema
}

export const nameOf = (schema: object): string | undefined => NAMES.get(schema)

/** `a user cache` -> `UserCache`: a component's name from a collection's. */
export const pascal = (words: string) => words.replace(/(^|[\s_-]+)(\w)/g, (_, _s, c: string) => c.toUpperCase())

export const UUID = /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i
/** A UUID in a body or an answer. */
export const Uuid = v.pipe(v.string(), v.regex(UUID, 'must be a UUID'))

/** An instant as the service writes it: ISO 8601 UTC with milliseconds. */
export const Instant = v.pipe(v.string(), v.isoTimestamp())
/** What the server sets on every stored item: when it was created and last written. */
export const Ext = v.object({ ct: Instant, lwt: Instant })

/** A body that must be a JSON object (an array is one to valibot's object schemas): what a body schema pipes from. */
export const JsonObject = v.custom<Record<string, unknown>>(
  (x) => typeof x === 'object' && x !== null && !Array.isArray(x),
  'must be a JSON object',
)

/** An object body of these members and no other. */
export const objectBody = <const E extends v.ObjectEntries>(entries: E) => v.pipe(JsonObject, v.strictObject(entries))

/**
 * Any JSON value (a script's answer, a setting's value): described as the union of JSON's kinds, so
 * a typed client reads one of them, not `unknown`.
 */
export const JsonValue = v.union([
  v.string(),
  v.number(),
  v.boolean(),
  v.null(),
  v.array(v.unknown()),
  v.record(v.string(), v.unknown()),
])

/** The kind of domain a route or a collection serves: the master domain, a working domain, or either. */
export type DomainKind = 'any' | 'master' | 'working'

/** Methods a route file may export, in the order the route table lists them; a role grants them. */
export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'LOOKUP', 'SYNC', 'CLEAR'] as const
export type Method = (typeof METHODS)[number]
