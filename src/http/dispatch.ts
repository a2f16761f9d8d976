/**
 * Running a route: find it, admit the caller (the route's access rule, its domain kind, the
 * caller's roles), run its handler, and turn what it returns or throws into an outcome (status,
 * body, headers). The HTTP kernel and `dispatch` (websocket frames, scripts' data calls) both go
 * through `runRoute`, so a call is checked and answered the same way whatever carried it.
 */
import { DuplicateError } from '~storage/repository'
import type { Ctx } from '../context'
import type { Deps } from '../deps'
import { ApiError, badRequest, unauthorized } from '../errors'
import { admit } from '../identity/authenticate'
import { JsonText } from './json'
import { Req, type RequestSource } from './req'
import { METHODS, type Method, type RouteDef, type RouteModule } from './route'

export interface Outcome {
  status: number
  /** A JSON value, a JsonText (sent as is), a Response (HTTP only), or undefined (no body). */
  body: unknown
  headers: Record<string, string>
  cookies: string[]
}

export interface Call {
  /** The effective method. */
  method: string
  /** The URL path as sent (percent-encoded), without the query string. */
  rawPath: string
  query: Record<string, string | undefined>
  requestId: string
  source: RequestSource
  /** Set by the HTTP kernel when a request other than POST carries X-HTTP-Method-Override. */
  misusedOverride?: boolean
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
  // HEAD is GET without the body: the same handler, and the same permission
  const method = call.method === 'HEAD' && !module.HEAD ? 'GET' : call.method
  const def = module[method as Method]
  if (!def) {
    const allow = allowedMethods(module)
    const body = errorBody(405, `${call.method} is not allowed here; allowed: ${allow}`)
    return { status: 405, body, headers: { allow }, cookies: [] }
  }
  const target = {
    method,
    route: url,
    path: () => decodePath(call.rawPath),
    params: match.params,
    query: call.query,
    requestId: call.requestId,
  }
  const req = new Req(deps, target, call.source)
  try {
    if (call.misusedOverride)
      throw badRequest('X-HTTP-Method-Override is accepted only with POST', 'X-HTTP-Method-Override')
    if (def.access !== 'public') await admission(req, def)
    const result = await def.handle(req)
    return { status: result === undefined ? 204 : 200, body: result, headers: req.headers, cookies: req.cookies }
  } catch (err) {
    return errorOutcome(deps, err, call.requestId, `${call.method} ${url}`)
  }
}

function decodePath(raw: string): string {
  try {
    return decodeURI(raw)
  } catch {
    throw badRequest('the URL path is not valid percent-encoding', 'path')
  }
}

/** The one mapping from anything thrown to the wire error body. */
export function errorOutcome(deps: Deps, err: unknown, requestId: string, where?: string): Outcome {
  let e: ApiError
  if (err instanceof ApiError) e = err
  else if (err instanceof DuplicateError)
    e = new ApiError(409, `${err.field} already exists in this domain`, { field: err.field })
  else {
    deps.log.error('unhandled error', { requestId, where, error: String(err), stack: (err as Error)?.stack })
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
 * as an HTTP call. The context's session (if any) is what the call presents as its credential.
 */
export async function dispatch(ctx: Ctx, request: DispatchRequest): Promise<DispatchResult> {
  const method = request.method.toUpperCase()
  const session = ctx.session
  const source: RequestSource = {
    json: async () => request.body,
    bytes: async () => new TextEncoder().encode(request.body === undefined ? '' : JSON.stringify(request.body)),
    header: () => null,
    clientAddress: () => request.clientAddress ?? 'internal',
    credentials: () => ({
      token: session?.kind === 'token' ? session.id : null,
      cookie: session?.kind === 'cookie' ? session.id : null,
    }),
  }
  // as the HTTP kernel reads a URL: the query starts at the first '?' (later ones belong to it),
  // and of a parameter given twice the first counts
  const q = request.path.indexOf('?')
  const rawPath = q < 0 ? request.path : request.path.slice(0, q)
  const query: Record<string, string | undefined> = {}
  if (q >= 0) for (const [k, v] of new URLSearchParams(request.path.slice(q + 1))) if (!(k in query)) query[k] = v
  Object.assign(query, request.query)
  const outcome = await runRoute(
    ctx.deps,
    { method, rawPath, query, requestId: ctx.requestId, source },
    async (req, def) => {
      // a context outlives no session: a logout or an ended account stops its dispatched calls at once
      if (session && !(await ctx.deps.sessions.get(session.id)))
        throw unauthorized('the session of this context has ended')
      await admit(req, ctx, def)
    },
  )
  return { status: outcome.status, body: await plainBody(outcome.body) }
}

async function plainBody(body: unknown): Promise<unknown> {
  if (body instanceof JsonText) return JSON.parse(body.text)
  if (body instanceof Response) {
    const text = await body.text()
    return text ? text : undefined
  }
  return body
}
