/**
 * Schema pieces every route shares: the error body, UUID path parameters, and answers. An answer's
 * schema is what Elysia holds for a status: it types the client (Eden) and the API description, and
 * the answers of a test run are checked against it (./hooks/answers.ts); a running service does not
 * check its own answers (a list of a thousand records would cost more than reading it).
 */
import * as v from 'valibot'

/** A schema of an answer: the valibot schema behind it, and a Standard Schema that lets every value pass. */
export interface AnswerSchema<S extends v.GenericSchema = v.GenericSchema> {
  readonly schema: S
  readonly '~standard': {
    readonly version: 1
    readonly vendor: 'platform'
    readonly validate: (value: unknown) => { value: unknown }
    readonly types?: { readonly input: v.InferInput<S>; readonly output: v.InferOutput<S> }
  }
}

const pass = (value: unknown) => ({ value })

export function answer<const S extends v.GenericSchema>(schema: S): AnswerSchema<S> {
  return { schema, '~standard': { version: 1, vendor: 'platform', validate: pass } }
}

/** The answers of a route by status. */
export type Responses = Record<number, AnswerSchema>

export const ErrorBody = v.object({
  error_code: v.pipe(v.number(), v.integer(), v.description('1000 + the HTTP status (the spec fixes 1413 and 1501)')),
  error_message: v.string(),
  error_details: v.optional(
    v.looseObject({ field: v.optional(v.pipe(v.string(), v.description('the part of the request at fault'))) }),
  ),
})
export type ErrorBody = v.InferOutput<typeof ErrorBody>

const errorAnswer = answer(ErrorBody)

/** The error body under each status given. */
export function errors<const S extends number>(...statuses: S[]): Record<S, AnswerSchema<typeof ErrorBody>> {
  return Object.fromEntries(statuses.map((s) => [s, errorAnswer])) as Record<S, AnswerSchema<typeof ErrorBody>>
}

/** 204: no body. */
export const NoContent = answer(v.undefined())

const UUID = /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i
export const Uuid = v.pipe(v.string(), v.regex(UUID, 'must be a UUID'), v.toLowerCase())
