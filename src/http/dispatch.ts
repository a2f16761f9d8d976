/**
 * Running a route: find it, admit the caller (the route's access rule, its domain kind, the
 * caller's roles), run its handler, and turn what it returns or throws into an outcome (status,
 * body, headers). The HTTP kernel and `dispatch` (websocket frames, scripts' data calls) both go
 * through `runRoute`, so a call is checked and answered the same way whatever carried it.
 */
import { DbBusy, Stopping } from '~storage/db'
import { KvUnavailable } from '~storage/kv/kv'
import { BadCursor } from '~storage/query'
import { DuplicateError } from '~storage/repository'
import { type Ctx, sessionCtx } from '../context'
import type { Deps } from '../deps'
import { ApiError, badRequest, payloadTooLarge, storeUnavailable, unauthorized } from '../errors'
import { admit } from '../identity/authenticate'
import { JsonText } from '~storage/json-text'
import { UnstorableValue } from '~storage/doc'
import { Req, type RequestSource } from './req'
import { METHODS, type Method, OVERRIDE_METHODS, type RouteDef, type RouteModule } from './route'

export interface Outcome {
  status: number
  /** A JSON value, a JsonText (sent as is), a Response (HTTP only), or undefined (no body). */
  body: unknown
  headers: Record<string, string>
  cookies: string[]
  /** The route pattern that answered (logs, metrics), when one did. */
  route?: string
  /** Who was admitted: the actor's id and the domain it acted in. */
  actor?: { id: string; domain: string }
}

export interface Call {
  /** The method as the caller sent it. */
  method: string
  /** HTTP: the X-HTTP-Method-Override header, which makes a POST a LOOKUP, SYNC or CLEAR. */
  override?: string | null
  /** The URL path as sent (percent-encoded), without the query string. */
  rawPath: string
  query: Record<string, string | undefined>
  requestId: string
  source: RequestSource
}

/** Admits the caller of a route or throws (401, 403). */
export type Admission = (req: Req, def: RouteDef) => Promise<void>

const errorBody = (status: number, message: string) => ({ error_code: 1000 + status, error_message: message })

/** `GET, HEAD, POST, ...`: what a route file serves. */
export function allowedMethods(module: RouteModule): string {
  return [...new Set(METHODS.filter((m) => module[m]).flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])))].join(', ')
}

export async function runRoute(deps: Deps, call: Call, admission: Admission): Promise<Outcome> {
  const match = deps.routes.match(call.rawPath)
  if (!match) return { status: 404, body: errorBody(404, `no resource at ${call.rawPath}`), headers: {}, cookies: [] }
  const { module, url } = match.entry
  const resolved = effectiveMethod(call, module)
  if (resolved instanceof ApiError) return errorOutcome(deps, resolved, call.requestId)
  const method = resolved
  const def = module[method as Method]
  if (!def) {
    const allow = allowedMethods(module)
    const body = errorBody(405, `${call.method} is not allowed here; allowed: ${allow}`)
    return { status: 405, body, headers: { allow }, cookies: [] }
  }
  const target = {
    method,
    route: url,
    rawPath: call.rawPath,
    params: match.params,
    query: call.query,
    requestId: call.requestId,
  }
  const req = new Req(deps, target, call.source)
  let outcome: Outcome
  try {
    if (call.override != null && call.method !== 'POST') {
      throw badRequest('X-HTTP-Method-Override is accepted only with POST', 'X-HTTP-Method-Override')
    }
    if (def.access !== 'public') await admission(req, def)
    const result = await def.handle(req)
    outcome = { status: result === undefined ? 204 : 200, body: result, headers: req.headers, cookies: req.cookies }
  } catch (err) {
    outcome = errorOutcome(deps, err, call.requestId, `${call.method} ${url}`)
  }
  for (const finish of req.finishers) finish()
  outcome.route = url
  if (req.isAdmitted) outcome.actor = { id: req.ctx.actor.id, domain: req.ctx.domain }
  return outcome
}

/**
 * The method a call runs as. HEAD is GET without the body (the same handler and permission). A
 * POST carrying X-HTTP-Method-Override runs as LOOKUP, SYNC or CLEAR, where the route takes one of
 * them or POST (elsewhere the POST itself is refused with 405); any other value is a 400.
 */
function effectiveMethod(call: Call, module: RouteModule): string | ApiError {
  if (call.method === 'HEAD' && !module.HEAD) return 'GET'
  if (call.override == null || call.method !== 'POST') return call.method
  if (!module.POST && ![...OVERRIDE_METHODS].some((m) => module[m as Method])) return call.method
  const method = call.override.trim().toUpperCase()
  if (OVERRIDE_METHODS.has(method)) return method // a route without it answers 405 to the POST
  const message = `X-HTTP-Method-Override must be LOOKUP, SYNC or CLEAR, got ${JSON.stringify(call.override)}`
  return badRequest(message, 'X-HTTP-Method-Override')
}

/**
 * A query string's parameters, read as URLSearchParams reads them; of a parameter given twice, the
 * first counts. Cut by hand: URLSearchParams and its iterator cost a list request more than its SQL.
 */
export function parseQuery(search: string): Record<string, string | undefined> {
  // no prototype: `__proto__` is kept as a parameter like any other instead of setting the prototype
  const query: Record<string, string | undefined> = Object.create(null)
  for (let at = 0; at < search.length; ) {
    let end = search.indexOf('&', at)
    if (end < 0) end = search.length
    if (end > at) {
      let eq = search.indexOf('=', at)
      if (eq < 0 || eq > end) eq = end
      const name = formDecode(search.slice(at, eq))
      if (!Object.hasOwn(query, name)) query[name] = eq < end ? formDecode(search.slice(eq + 1, end)) : ''
    }
    at = end + 1
  }
  return query
}

/** One name or value of a query string: `+` is a space, then percent-decoding (malformed escapes as URLSearchParams keeps them). */
function formDecode(part: string): string {
  if (part.indexOf('%') < 0 && part.indexOf('+') < 0) return part
  try {
    return decodeURIComponent(part.replaceAll('+', ' '))
  } catch {
    return new URLSearchParams(`a=${part}`).get('a')!
  }
}

/** The one mapping from anything thrown to the wire error body. */
export function errorOutcome(deps: Deps, err: unknown, requestId: string, where?: string): Outcome {
  let e: ApiError
  if (err instanceof ApiError) e = err
  else if (err instanceof KvUnavailable) {
    deps.metrics.kvErrors.inc()
    e = storeUnavailable()
  } else if (err instanceof DbBusy)
    e = new ApiError(503, `the database is busy: ${err.message}; try again`, undefined, 1503, { 'retry-after': '1' })
  else if (err instanceof DuplicateError)
    e = new ApiError(409, `${err.field} already exists in this domain`, { field: err.field })
  else if (err instanceof Stopping)
    e = new ApiError(503, `${err.message}; try again`, undefined, 1503, { 'retry-after': '5' })
  else if (err instanceof BadCursor) e = badRequest(err.message, 'after')
  else if (err instanceof UnstorableValue) e = badRequest(err.message, err.field)
  else {
    deps.log.error('unhandled error', { requestId, where, error: String(err), stack: (err as Error)?.stack })
    deps.metrics.internalErrors.inc()
    e = new ApiError(500, 'internal error')
  }
  return { status: e.status, body: e.body(), headers: { ...e.headers }, cookies: [] }
}

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
  const method = request.method.toUpperCase()
  const session = ctx.session
  let text: string | undefined
  const bodyText = () => (text ??= jsonText(request.body, ctx.deps.config.maxBodyBytes))
  const source: RequestSource = {
    json: async () => (bodyText() === '' ? undefined : JSON.parse(bodyText())),
    bytes: async () => new TextEncoder().encode(bodyText()),
    // the body is already a bounded copy in memory; the route's own limit still applies to it
    stream(limit) {
      const bytes = new TextEncoder().encode(bodyText())
      if (bytes.byteLength > limit)
        throw payloadTooLarge(`request body is larger than the limit of ${limit} bytes`, 'body')
      return new Blob([bytes]).stream()
    },
    header: () => null,
    clientAddress: () => request.clientAddress ?? 'internal',
    credentials: () => ({
      token: session?.kind === 'token' ? session.id : null,
      cookie: session?.kind === 'cookie' ? session.id : null,
    }),
  }
  // as the HTTP kernel reads a URL: the query starts at the first '?' (later ones belong to it)
  const q = request.path.indexOf('?')
  const rawPath = q < 0 ? request.path : request.path.slice(0, q)
  const query = { ...(q < 0 ? {} : parseQuery(request.path.slice(q + 1))), ...request.query }
  const call = { method, rawPath, query, requestId: ctx.requestId, source }
  const outcome = await runRoute(ctx.deps, call, async (req, def) => {
    if (!session) return admit(req, ctx, def)
    const { sessions } = ctx.deps
    // a context outlives no session: a logout or an ended account stops its dispatched calls at once
    const live = await sessions.get(session.id)
    if (!live) throw unauthorized('the session of this context has ended')
    await admit(req, { ...sessionCtx(ctx.deps, live, ctx.requestId), via: ctx.via }, def)
    await sessions.touch(live)
  })
  return { status: outcome.status, body: await plainBody(outcome.body) }
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

async function plainBody(body: unknown): Promise<unknown> {
  if (body instanceof JsonText) return JSON.parse(body.text)
  if (body instanceof Response) {
    const text = await body.text()
    return text ? text : undefined
  }
  return body
}
