/**
 * Schema pieces every route shares: the error body, UUID path parameters, and answers. An answer's
 * schema is what Elysia holds for a status: it types the client (Eden) and the API description, and
 * the answers of a test run are checked against it (./hooks/answers.ts); a running service does not
 * check its own answers (a list of a thousand records would cost more than reading it).
 */
import * as v from 'valibot'
import { named, UUID } from '../values'

/** A schema of an answer: the valibot schema behind it, and a Standard Schema that lets every value pass. */
export interface AnswerSchema<S extends v.GenericSchema = v.GenericSchema> {
  readonly schema: S
  /** The media type of the body when it is no JSON (a page, a file, a script). */
  readonly media?: string
  readonly '~standard': {
    readonly version: 1
    readonly vendor: 'platform'
    readonly validate: (value: unknown) => { value: unknown }
    readonly types?: { readonly input: v.InferInput<S>; readonly output: v.InferOutput<S> }
  }
}

const pass = (value: unknown) => ({ value })

/**
 * A body the route's handler checks itself, after checks of its own that must come first (the
 * credential areas' rate limits, answered 412/1501 as the spec asks): described and typed by
 * `schema`, let through by Elysia as it is.
 */
export function checkedByHandler<const S extends v.GenericSchema>(schema: S): AnswerSchema<S> {
  return { schema, '~standard': { version: 1, vendor: 'platform', validate: pass } }
}

/** The media type of a body that is a file of any type (its own). */
export const ANY_MEDIA = '*/*'

export function answer<const S extends v.GenericSchema>(schema: S, media?: string): AnswerSchema<S> {
  return { schema, ...(media ? { media } : {}), '~standard': { version: 1, vendor: 'platform', validate: pass } }
}

/** The answers of a route by status. */
export type Responses = Record<number, AnswerSchema>

export const ErrorBody = named(
  v.object({
    error_code: v.pipe(
      v.number(),
      v.integer(),
      v.description('1000 + the HTTP status; the spec fixes 1413 and 1501 (412), so 413 is 2413 and 501 is 2501'),
    ),
    error_message: v.string(),
    error_details: v.optional(
      v.looseObject({ field: v.optional(v.pipe(v.string(), v.description('the part of the request at fault'))) }),
    ),
  }),
  'Error',
)
export type ErrorBody = v.InferOutput<typeof ErrorBody>

const errorAnswer = answer(ErrorBody)

/** The error body under each status given. */
export function errors<const S extends number>(...statuses: S[]): Record<S, AnswerSchema<typeof ErrorBody>> {
  return Object.fromEntries(statuses.map((s) => [s, errorAnswer])) as Record<S, AnswerSchema<typeof ErrorBody>>
}

/** 204: no body. */
export const NoContent = answer(v.undefined())

/** A UUID in the path: taken in lower case. */
export const UuidParam = v.pipe(
  v.string(),
  v.regex(UUID, (issue) => `in the path must be a UUID, got ${JSON.stringify(issue.input)}`),
  v.toLowerCase(),
)
/** The path of an item: its id. */
export const IdParams = v.object({ id: UuidParam })

// ---- shaping an item's schema as the list and mask shape the item ----

type Entries = Record<string, v.GenericSchema>
interface ObjectLike {
  type: string
  entries?: Entries
  wrapped?: v.GenericSchema
  pipe?: readonly unknown[]
}

/** The object schema inside optional, nullable or piped wrappers, or null for another kind. */
function objectOf(schema: v.GenericSchema): { entries: Entries; strict: boolean } | null {
  const s = schema as unknown as ObjectLike
  if (s.type === 'optional' || s.type === 'nullable' || s.type === 'nullish') return objectOf(s.wrapped!)
  if (s.pipe) {
    const first = s.pipe[0] as v.GenericSchema
    if (first !== schema) return objectOf(first)
  }
  if (s.type === 'object' || s.type === 'strict_object' || s.type === 'loose_object')
    return { entries: s.entries!, strict: s.type === 'strict_object' }
  return null
}

const objectLike = (entries: Entries, strict: boolean) => (strict ? v.strictObject(entries) : v.looseObject(entries))

/**
 * The item as a list or a mask presents it: only the given field paths (`opts.title` keeps `opts`
 * with `title`); a path ending in `.*` keeps its member whole. What the item may lack stays optional.
 */
export function project(schema: v.GenericSchema, paths: readonly string[]): v.GenericSchema {
  const object = objectOf(schema)
  if (!object) return schema
  const byHead = new Map<string, string[]>()
  for (const path of paths) {
    const [head, ...rest] = path.split('.')
    const below = byHead.get(head!) ?? []
    if (rest.length && rest[0] !== '*') below.push(rest.join('.'))
    else below.push('')
    byHead.set(head!, below)
  }
  const entries: Entries = {}
  for (const [name, below] of byHead) {
    const entry = object.entries[name]
    if (!entry) continue
    entries[name] = below.includes('') ? entry : keepWrapper(entry, project(entry, below))
  }
  return objectLike(entries, object.strict)
}

/** `inner` in the optional or nullable wrapper `entry` has. */
function keepWrapper(entry: v.GenericSchema, inner: v.GenericSchema): v.GenericSchema {
  const type = (entry as unknown as ObjectLike).type
  if (type === 'optional') return v.optional(inner)
  if (type === 'nullable') return v.nullable(inner)
  if (type === 'nullish') return v.nullish(inner)
  return inner
}

/** Every member optional, at every depth: what a mask may leave of an item. */
export function deepPartial(schema: v.GenericSchema): v.GenericSchema {
  const s = schema as unknown as { type: string; item?: v.GenericSchema; options?: v.GenericSchema[] }
  if (s.type === 'array') return v.array(deepPartial(s.item!))
  if (s.type === 'union') return v.union(s.options!.map(deepPartial))
  const object = objectOf(schema)
  if (!object) return schema
  const entries: Entries = {}
  for (const [name, entry] of Object.entries(object.entries)) entries[name] = v.optional(deepPartial(entry))
  return objectLike(entries, object.strict)
}
