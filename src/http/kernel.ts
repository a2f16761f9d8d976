/**
 * Turns route files into Elysia routes: one wrapper per method that assigns the request id,
 * resolves the effective method, authenticates, runs the handler and shapes the response or the
 * error. LOOKUP, SYNC and CLEAR arrive as POST + X-HTTP-Method-Override (see src/http/gateway).
 */
import type { Elysia } from 'elysia'
import { DuplicateError } from '~storage/repository'
import type { Deps } from '../deps'
import { authenticate } from '../identity/authenticate'
import { inCidrs, type Cidr } from './cidr'
import { ApiError, badRequest } from './errors'
import { JSON_TYPE, jsonResponse } from './json'
import { Req } from './req'
import { METHODS, OVERRIDE_METHODS, type Method, type RouteDef, type RouteEntry } from './route'

export const OVERRIDE_HEADER = 'x-http-method-override'
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/

interface ElysiaContext {
  request: Request
  params: Record<string, string>
  query: Record<string, string | undefined>
  server: { requestIP(r: Request): { address: string } | null } | null
}

/** Generated request ids: a random per-process prefix and a counter, unique across a cluster and cheap. */
const ID_PREFIX = crypto.randomUUID().slice(0, 8)
let requestCounter = 0

export function requestIdOf(request: Request): string {
  const given = request.headers.get('x-request-id')
  return given !== null && SANE_REQUEST_ID.test(given) ? given : `${ID_PREFIX}-${(++requestCounter).toString(36)}`
}

/**
 * The client's address: the peer (on the gateway's private unix socket, the peer the gateway
 * reports); when the peer is a trusted proxy, the last address in X-Forwarded-For it did not add.
 */
export function clientAddressOf(ctx: ElysiaContext, trusted: Cidr[]): string {
  const peer = unmapped(
    ctx.server?.requestIP(ctx.request)?.address ?? ctx.request.headers.get('x-real-ip') ?? 'unknown',
  )
  if (trusted.length === 0 || !inCidrs(peer, trusted)) return peer
  const hops = (ctx.request.headers.get('x-forwarded-for') ?? '')
    .split(',')
    .map((h) => unmapped(h.trim()))
    .filter(Boolean)
  for (let i = hops.length - 1; i >= 0; i--) if (!inCidrs(hops[i]!, trusted)) return hops[i]!
  return hops[0] ?? peer
}

/** `::ffff:1.2.3.4` is shown as `1.2.3.4`. */
const unmapped = (address: string) =>
  address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address

export function mountRoutes(app: Elysia, routes: RouteEntry[], deps: Deps): void {
  for (const { url, module } of routes) {
    const exported = METHODS.filter((m) => module[m])
    const allow = [...new Set(exported.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])))].join(', ')
    for (const method of exported) {
      if (method === 'POST' || OVERRIDE_METHODS.has(method)) continue
      const def = module[method]!
      // Destructured so that Elysia's static analysis sees which parts of the context are used: a
      // handler that passes the whole context on makes Elysia build cookie jars and copy every response.
      app.route(
        method,
        url,
        ({ request, params, query, server }: ElysiaContext) =>
          run(deps, def, method, url, { request, params, query, server }),
        { parse: 'none' } as never,
      )
    }
    if (exported.some((m) => m === 'POST' || OVERRIDE_METHODS.has(m))) {
      app.route(
        'POST',
        url,
        ({ request, params, query, server }: ElysiaContext) =>
          dispatchPost(deps, module, url, allow, { request, params, query, server }),
        { parse: 'none' } as never,
      )
    }
    app.all(url, ({ request }: ElysiaContext) => methodNotAllowed(request, allow))
  }
}

/** POST serves the route's POST, or the method named by the override header. */
function dispatchPost(deps: Deps, module: RouteEntry['module'], url: string, allow: string, ctx: ElysiaContext) {
  const override = ctx.request.headers.get(OVERRIDE_HEADER)
  if (override === null)
    return module.POST ? run(deps, module.POST, 'POST', url, ctx) : methodNotAllowed(ctx.request, allow)
  const method = override.trim().toUpperCase()
  if (!OVERRIDE_METHODS.has(method)) {
    return errorResponse(
      badRequest(
        `X-HTTP-Method-Override must be LOOKUP, SYNC or CLEAR, got ${JSON.stringify(override)}`,
        'X-HTTP-Method-Override',
      ),
      requestIdOf(ctx.request),
      deps,
    )
  }
  const def = module[method as Method]
  return def ? run(deps, def, method, url, ctx) : methodNotAllowed(ctx.request, allow)
}

async function run(deps: Deps, def: RouteDef, method: string, url: string, ctx: ElysiaContext): Promise<Response> {
  const requestId = requestIdOf(ctx.request)
  try {
    if (method === ctx.request.method && ctx.request.headers.has(OVERRIDE_HEADER)) {
      throw badRequest('X-HTTP-Method-Override is accepted only with POST', 'X-HTTP-Method-Override')
    }
    const req = new Req(deps, ctx.request, method, url, ctx.params ?? {}, ctx.query ?? {}, requestId, () =>
      clientAddressOf(ctx, deps.trustedProxies),
    )
    if (def.access !== 'public') await authenticate(req, def)
    const result = await def.handle(req)
    return respond(result, req)
  } catch (err) {
    return errorResponse(err, requestId, deps, `${method} ${url}`)
  }
}

function respond(result: unknown, req: Req): Response {
  const headers = { 'x-request-id': req.requestId, ...req.headers }
  let response: Response
  if (result instanceof Response) {
    response = result
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value)
  } else if (result === undefined) response = new Response(null, { status: 204, headers })
  else response = jsonResponse(result, 200, headers)
  for (const cookie of req.cookies) response.headers.append('set-cookie', cookie)
  return response
}

/** The one mapping from anything thrown to the wire error body. */
export function errorResponse(err: unknown, requestId: string, deps: Deps, where?: string): Response {
  let e: ApiError
  if (err instanceof ApiError) e = err
  else if (err instanceof DuplicateError)
    e = new ApiError(409, `${err.field} already exists in this domain`, { field: err.field })
  else {
    deps.log.error('unhandled error', { requestId, where, error: String(err), stack: (err as Error)?.stack })
    e = new ApiError(500, 'internal error')
  }
  return jsonResponse(e.body(), e.status, { 'x-request-id': requestId, ...e.headers })
}

function methodNotAllowed(request: Request, allow: string): Response {
  const body = { error_code: 1405, error_message: `${request.method} is not allowed here; allowed: ${allow}` }
  return new Response(JSON.stringify(body), {
    status: 405,
    headers: { 'content-type': JSON_TYPE, allow, 'x-request-id': requestIdOf(request) },
  })
}
