/**
 * The one mapping from anything a call throws to the wire error body {error_code, error_message,
 * error_details?} (onError): the service's ApiError as it is, Elysia's own failures (no route,
 * a body that is no JSON, a schema refusing a value) as the 400, 404 and 405 the spec asks for,
 * store failures as 503 with Retry-After, anything else as a logged 1500 without internals.
 */
import type * as v from 'valibot'
import { UnstorableValue } from '~storage/doc'
import { DbBusy, Stopping } from '~storage/db'
import { KvUnavailable } from '~storage/kv/kv'
import { BadCursor } from '~storage/query'
import { DuplicateError } from '~storage/repository'
import type { HttpDeps } from '../router'
import { describeIssue, issuePath } from '../../entities/validate'
import { ApiError, badRequest, storeUnavailable } from '../../errors'
import type { Req, ResponseSet } from '../req'
import { allowedMethods, rawPathOf, wireMethod } from './call'

/** What Elysia tells onError. */
export interface Failure {
  code: string | number
  error: unknown
  request: Request
  req: Req | undefined
}

/** The ApiError a failure is answered with. */
export function apiErrorOf(deps: HttpDeps, failure: Failure): ApiError {
  const { code, error, request } = failure
  switch (code) {
    case 'NOT_FOUND':
      return notRouted(deps, request)
    case 'VALIDATION':
      return invalid(error as { type: string; valueError?: v.BaseIssue<unknown> })
    case 'PARSE': {
      // our body parser's refusals (413, 415, 400) arrive wrapped
      const cause = (error as { cause?: unknown }).cause
      return cause instanceof ApiError ? cause : badRequest('request body could not be read', 'body')
    }
  }
  return thrown(deps, error, failure.req)
}

/** A URL no route serves is a 404; a method the URL does not serve a 405 with Allow. */
function notRouted(deps: HttpDeps, request: Request): ApiError {
  const rawPath = rawPathOf(request.url)
  const match = deps.routes.match(rawPath)
  if (!match) return new ApiError(404, `no resource at ${rawPath}`)
  const allow = allowedMethods(match.entry.module)
  const method = wireMethod(request)
  return new ApiError(405, `${method} is not allowed here; allowed: ${allow}`, undefined, 1405, { allow })
}

/**
 * A schema's refusal: the first issue, naming the field. A query parameter's is told as a sentence
 * that begins with its name (`limit must be a non-negative integer, got "ten"`), as are the
 * parameters of a path.
 */
function invalid(error: { type: string; valueError?: v.BaseIssue<unknown> }): ApiError {
  const issue = error.valueError
  if (!issue) return badRequest(`${error.type === 'params' ? 'path' : error.type} is not valid`, error.type)
  return schemaRefusal(error.type, issue)
}

/** The 400 a schema's refusal of a part of the call (`params`, `query`, `body`) is answered with. */
export function schemaRefusal(part: string, issue: v.BaseIssue<unknown>): ApiError {
  const what = part === 'params' ? 'path' : part
  if (what === 'body') return describeIssue(issue, what)
  const name = issuePath(issue) || what
  if (issue.type === 'raw_check') return badRequest(issue.message, name)
  return badRequest(`${name} ${issue.received === 'undefined' ? 'is required' : issue.message}`, name)
}

/** What the service's own code threw. */
function thrown(deps: HttpDeps, err: unknown, req: Req | undefined): ApiError {
  if (err instanceof ApiError) return err
  if (err instanceof KvUnavailable) {
    deps.metrics.kvErrors.inc()
    return storeUnavailable()
  }
  if (err instanceof DbBusy)
    return new ApiError(503, `the database is busy: ${err.message}; try again`, undefined, 1503, { 'retry-after': '1' })
  if (err instanceof DuplicateError)
    return new ApiError(409, `${err.field} already exists in this domain`, { field: err.field })
  if (err instanceof Stopping)
    return new ApiError(503, `${err.message}; try again`, undefined, 1503, { 'retry-after': '5' })
  if (err instanceof BadCursor) return badRequest(err.message, 'after')
  if (err instanceof UnstorableValue) return badRequest(err.message, err.field)
  const where = req ? `${req.method} ${req.route}` : undefined
  deps.log.error('unhandled error', {
    requestId: req?.requestId,
    where,
    error: String(err),
    stack: (err as Error)?.stack,
  })
  deps.metrics.internalErrors.inc()
  return new ApiError(500, 'internal error')
}

/** onError: the error body, its status and headers in Elysia's `set`. */
export function answerFailure(deps: HttpDeps) {
  // the context is taken apart: Elysia reads a hook's source, and a context handed on whole makes it
  // parse every request's headers and cookies for every route
  return ({ code, error, request, req, set }: Failure & { set: ResponseSet }) => {
    const e = apiErrorOf(deps, { code, error, request, req })
    set.status = e.status
    if (e.headers) Object.assign(set.headers, e.headers)
    return e.body()
  }
}
