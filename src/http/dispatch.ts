/**
 * Calls of routes without HTTP: a websocket `rest` frame, a script's data call. `dispatch` makes the
 * call a Request (a CallRequest that carries the actor context) and hands it to the same app HTTP
 * requests go to, so it is routed, admitted, validated and answered as an HTTP call would be.
 */
import type { Ctx } from '../context'
import { ApiError, badRequest, payloadTooLarge } from '../errors'
import { CallRequest } from './hooks/call'
import { OVERRIDE_METHODS } from './route'

export interface DispatchRequest {
  method: string
  /** A path such as `/rest/v1/model/crm/deals/<id>`. */
  path: string
  query?: Record<string, string | undefined>
  body?: unknown
  /** The caller's address, when the transport knows it (a websocket's peer). */
  clientAddress?: string
}

export interface DispatchResult {
  status: number
  /** The answer as a JSON value (an error body for errors), or undefined for 204. */
  body: unknown
}

/**
 * Runs a route for an actor context without HTTP: the same route file, admission and error mapping
 * as an HTTP call. A context with a session acts as that session does now, as HTTP would: the
 * session must still be alive, its current domain is where the call acts, its roles are read live,
 * and each call extends its lifetime. The body is taken as JSON (a copy, within MAX_BODY_BYTES).
 */
export async function dispatch(ctx: Ctx, request: DispatchRequest): Promise<DispatchResult> {
  const app = ctx.deps.http
  if (!app) throw new Error('dispatch before the app was made')
  const method = request.method.toUpperCase()
  let text: string
  try {
    text = jsonText(request.body, ctx.deps.config.maxBodyBytes)
  } catch (err) {
    if (err instanceof ApiError) return { status: err.status, body: err.body() }
    throw err
  }
  // as a URL is read: the query starts at the first '?' (later ones belong to it); given parameters win
  const q = request.path.indexOf('?')
  const search = new URLSearchParams(q < 0 ? '' : request.path.slice(q + 1))
  for (const [name, value] of Object.entries(request.query ?? {})) if (value !== undefined) search.set(name, value)
  const query = search.size ? `?${search}` : ''
  const wire = OVERRIDE_METHODS.has(method) ? 'POST' : method
  const bodyless = wire === 'GET' || wire === 'HEAD'
  const init: RequestInit = {
    method: wire,
    headers: text && !bodyless ? { 'content-type': 'application/json' } : {},
    body: text && !bodyless ? text : undefined,
  }
  // a call without a client (a script's) counts as its actor kind and domain: the brute-force filter
  // and the rate limits keep one bucket per domain, so one domain's failing sign-ins hold back no other's
  const clientAddress = request.clientAddress ?? `${ctx.actor.type}:${ctx.domain}`
  const origin = { ctx, clientAddress, requestId: ctx.requestId }
  const path = q < 0 ? request.path : request.path.slice(0, q)
  const response = await app.handle(new CallRequest(`http://dispatch.local${path}${query}`, init, method, origin))
  return { status: response.status, body: await plainBody(response) }
}

/** The body as the JSON text a client would have sent; a 413 beyond the limit, a 400 when it is no JSON value. */
function jsonText(body: unknown, limit: number): string {
  if (body === undefined) return ''
  let text: string | undefined
  try {
    text = JSON.stringify(body)
  } catch (err) {
    throw badRequest(`body is not a JSON value: ${(err as Error).message}`, 'body')
  }
  if (text === undefined) throw badRequest('body is not a JSON value', 'body')
  if (Buffer.byteLength(text) > limit)
    throw payloadTooLarge(`request body is larger than the limit of ${limit} bytes`, 'body')
  return text
}

/** The answer as a JSON value, or its text when it is no JSON (a page, a file); undefined when it has no body. */
async function plainBody(response: Response): Promise<unknown> {
  const text = await response.text()
  if (!text) return undefined
  return response.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text
}
