/**
 * The one error type of the service and its wire form `{error_code, error_message, error_details?}`.
 * error_code is 1000 + HTTP status unless the spec fixes another (1413, 1501). The spec gives 1413
 * and 1501 meanings of their own (412: not found, a field refused), so a 413 and a 501 carry
 * 2000 + status (2413, 2501) rather than a code that says something else.
 */

/** Statuses whose 1000 + status the spec uses for another meaning. */
const SPEC_TAKEN: ReadonlySet<number> = new Set([413, 501])
/** The error_code of an error answer with this status (see above). */
export const codeOf = (status: number) => (SPEC_TAKEN.has(status) ? 2000 : 1000) + status

export interface ErrorDetails {
  field?: string
  [key: string]: unknown
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details?: ErrorDetails,
    readonly code: number = codeOf(status),
    readonly headers?: Record<string, string>,
  ) {
    super(message)
  }

  body(): { error_code: number; error_message: string; error_details?: ErrorDetails } {
    return this.details
      ? { error_code: this.code, error_message: this.message, error_details: this.details }
      : { error_code: this.code, error_message: this.message }
  }
}

/** 400: the request is malformed; `field` names the offending part when there is one. */
export const badRequest = (message: string, field?: string, extra?: ErrorDetails) =>
  new ApiError(400, message, field || extra ? { ...(field ? { field } : {}), ...extra } : undefined)
export const unauthorized = (message = 'authorization required') => new ApiError(401, message)
/** 401 to a context whose domain was deleted (or deleted and created again) meanwhile: background work ends quietly on it. */
export class DomainGone extends ApiError {
  constructor(ctx: { session?: unknown }) {
    super(401, `the domain of this ${ctx.session ? 'session' : 'context'} no longer exists`)
  }
}
export const domainGone = (ctx: { session?: unknown }) => new DomainGone(ctx)
export const forbidden = (message: string) => new ApiError(403, message)
export const notFound = (message = 'not found') => new ApiError(404, message)
export const conflict = (message: string, field?: string) => new ApiError(409, message, field ? { field } : undefined)
export const payloadTooLarge = (message: string, field?: string) =>
  new ApiError(413, message, field ? { field } : undefined)
/** 412 with the spec's field-validation code 1501 (credential areas). */
export const fieldInvalid = (field: string, message: string, extra?: ErrorDetails) =>
  new ApiError(412, message, { field, ...extra }, 1501)
export const tooManyRequests = (message: string, retryAfterSec: number) =>
  new ApiError(429, message, { retry_after: retryAfterSec }, 1429, { 'retry-after': String(retryAfterSec) })

/**
 * 503: the shared store (Redis) cannot be reached now; what needs it is refused rather than left
 * waiting, and the caller may retry in a second. `what` says what could not be done.
 */
export const storeUnavailable = (what = 'this request needs the shared store (Redis), which is unavailable') =>
  new ApiError(503, `${what}; try again shortly`, { retry_after: 1 }, 1503, { 'retry-after': '1' })
