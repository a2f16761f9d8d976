/**
 * The HTTP application: one Elysia app over the routes of the manifest (routes/_manifest.gen.ts),
 * with each concern of a call in one hook (src/http/hooks): the method override before routing, the
 * call's start and CORS preflights (onRequest), admission (the `admit` macro, at transform), error
 * bodies (onError), answers and the request log (mapResponse). `app.fetch` is its
 * web-standard entry; Bun.serve serves it on a port or on the gateway's unix socket, the gateway
 * hands it the requests it answers in-process, and `dispatch` the calls of websocket frames and
 * scripts. Websocket endpoints are upgraded before the app is asked.
 */
import type { Server, ServerWebSocket } from 'bun'
import type { AdmittedSocket, SocketData, SocketHandlers, SocketLimits } from './ws/endpoint'
import { Elysia } from 'elysia'
import { ApiError, badRequest, codeOf } from './errors'
import { RequestBody } from './http/body'
import { bodyLimitOf, limitOf } from './http/body-limits'
import type { RouteLimits } from './gateway/request-stream'
import { acceptKey } from './gateway/ws-frames'
import type { Answer } from './http/answer'
import { ANSWERED, answerCall, toHttpResponse } from './http/hooks/answers'
import { effectiveRequest, requestIdOf, startCall } from './http/hooks/call'
import { inlineOf } from './http/inline-request'
import { answerPreflight } from './http/hooks/cors'
import { answerFailure, apiErrorOf } from './http/hooks/errors'
import { logRequest } from './http/hooks/request-log'
import { clientAddressOf, type Origin } from './http/req'
import type { RouteEntry } from './http/route'
import { mountEntries, routeBase } from './http/route-base'
import { type HttpDeps, Router, readAccessOf } from './http/router'

// biome-ignore lint/suspicious/noExplicitAny: any Elysia instance of routes
type AnyRoutes = Elysia<any, any, any, any, any, any, any>

/** The routes of the manifest: the files (route table, Allow, overrides) and the typed Elysia plugin. */
export interface Manifest<R extends AnyRoutes = AnyRoutes> {
  routes: RouteEntry[]
  api: R
}

/** The Elysia app over `routes`; `native` says where requests a listener parsed come from (its server, set at listen). */
export function elysiaApp<const R extends AnyRoutes>(deps: HttpDeps, routes: R, native: Origin) {
  // a host may be shorter than the four characters Elysia assumes by default when it cuts the path from the URL
  return (
    new Elysia({ name: 'platform', handler: { standardHostname: false } })
      .use(routeBase)
      .wrap(beforeRouting(deps))
      .onRequest(answerPreflight(deps))
      .onRequest(startCall(deps, native))
      .onError(answerFailure(deps))
      // the request log is written as the answer is made: Elysia's onAfterResponse costs a setImmediate
      // and a promise per request, which measured 6 µs of CPU on a point read (twice its routing)
      .mapResponse(answerCall(deps, logRequest(deps)))
      .use(routes)
  )
}

/**
 * The method override and HEAD, before routing (an Elysia `wrap`). Elysia asks a wrap for the handler
 * on every request; the same one is given each time.
 */
function beforeRouting(deps: HttpDeps) {
  let routed: (request: Request) => unknown
  let wrapped: ((request: Request) => unknown) | undefined
  return (route: (request: Request) => unknown) => {
    if (route !== routed) {
      routed = route
      wrapped = (request: Request) => route(effectiveRequest(deps, request))
    }
    return wrapped!
  }
}

/** The app's type, given its routes: what a typed client (Eden) is made from (see app.ts at the root). */
export type PlatformApp<R extends AnyRoutes> = ReturnType<typeof elysiaApp<R>>

export type ListenOptions = {
  hostname?: string
  port?: number
  unix?: string
  reusePort?: boolean
  /** Seconds an idle connection is kept (Bun's default, 10, when absent; 0: until the peer closes it). */
  idleTimeout?: number
}

/** What a websocket endpoint does with its sockets. */
/** The app as the service runs it: in-process, on a listener, and with its websocket endpoints. */
export interface HttpApp {
  /** Answers one request in-process. */
  handle(request: Request): Promise<Response>
  /** Answers one request in-process, before the answer is a Response (the gateway writes it itself). */
  answer(request: Request): Promise<Answer>
  listen(options: ListenOptions): Server<SocketData>
  /** Its routes' body limits, for the gateway to refuse a larger declared body itself. */
  bodyLimits: RouteLimits
  /** Serves a websocket endpoint at `path`. */
  ws(path: string, handlers: SocketHandlers, limits: SocketLimits): HttpApp
  /**
   * Decides an upgrade request in-process, for the gateway's front to serve the socket itself: the
   * endpoint admitted it, or the answer (its refusal; an answer as to any request where no endpoint is).
   */
  admitSocket(request: Request): Promise<AdmittedSocket | Answer>
}

/** The app over the service's routes, or (tests) over route files of their own. */
export function createApp(service: HttpDeps, routes: Manifest | readonly RouteEntry[]): HttpApp {
  const native: Origin = {}
  const own = Array.isArray(routes)
  // route files of a test's own are the app's whole route table (Allow, overrides)
  const table = own ? new Router(routes) : null
  const deps = table ? { ...service, routes: table, readAccess: readAccessOf(table) } : service
  const api = own ? mountEntries(new Elysia().use(routeBase), routes) : (routes as Manifest).api
  const app = elysiaApp(deps, api, native)
  const handle = (request: Request) => app.handle(request)
  if (!own) deps.http = { handle }
  const sockets = new Map<string, SocketHandlers>()
  let socketLimits: SocketLimits = { idleTimeoutSec: 120, maxPayloadLength: 1024 * 1024 }
  /** An error answered outside the app (a failing upgrade, the listener's own failure): still the error body. */
  const failure = (err: unknown, request: Request) => {
    const e = apiErrorOf(deps, { code: 'UNKNOWN', error: err, request, req: undefined })
    const headers = { 'content-type': 'application/json', 'x-request-id': requestIdOf(request), ...e.headers }
    return toHttpResponse({ status: e.status, headers, cookies: [], body: JSON.stringify(e.body()), bytes: 0 })
  }
  /** A Response as an answer: it carries its status, headers and body itself. */
  const answerOf = (response: Response): Answer => ({
    status: response.status,
    headers: {},
    cookies: [],
    body: response,
    bytes: 0,
  })
  const specs = deps.routes.routes.flatMap((r) => Object.values(r.module))
  const http: HttpApp = {
    handle,
    bodyLimits: {
      smallest: Math.min(...specs.map((spec) => limitOf(spec, deps.config))),
      of: (method, rawPath, overridable) => bodyLimitOf(deps.routes, deps.config, method, rawPath, overridable),
    },
    async answer(request) {
      const response = await handle(request)
      // the gateway's own requests carry their answer (./http/hooks/answers.ts)
      const answered = response === ANSWERED ? inlineOf(request)?.answered : undefined
      return answered ?? answerOf(response)
    },
    async admitSocket(request) {
      const path = new URL(request.url).pathname
      const handlers = sockets.get(path)
      if (!handlers || request.headers.get('upgrade')?.toLowerCase() !== 'websocket') return http.answer(request)
      try {
        const attached = await handlers.upgrade(request, clientAddressOf(request, undefined, deps.trustedProxies))
        if (attached instanceof Response) return answerOf(attached)
        // what Bun.serve's upgrade checks: another version is a 426 naming the one spoken (RFC 6455 4.4)
        if (request.headers.get('sec-websocket-version') !== '13') {
          const version = new ApiError(
            426,
            'this websocket speaks version 13',
            { field: 'sec-websocket-version' },
            codeOf(426),
            {
              'sec-websocket-version': '13',
            },
          )
          return answerOf(failure(version, request))
        }
        if (request.method !== 'GET' || acceptKey(request.headers.get('sec-websocket-key')) === null)
          return answerOf(failure(badRequest('not a websocket upgrade request'), request))
        const headers = { 'x-request-id': requestIdOf(request) }
        return { handlers, data: { path, attached }, headers, limits: socketLimits }
      } catch (err) {
        return answerOf(failure(err, request))
      }
    },
    ws(path, handlers, limits) {
      sockets.set(path, handlers)
      socketLimits = limits
      return http
    },
    listen(options) {
      const net = options.unix
        ? { unix: options.unix }
        : { hostname: options.hostname, port: options.port, reusePort: options.reusePort }
      const handlersOf = (ws: ServerWebSocket<SocketData>) => sockets.get(ws.data.path)!
      const server = Bun.serve<SocketData>({
        ...net,
        // Bun's types allow it on ports only; on a unix socket it is kept all the same (checked: 0 keeps it open)
        ...((options.idleTimeout === undefined ? {} : { idleTimeout: options.idleTimeout }) as object),
        // no limit of Bun's own: its refusal is no JSON and resets the connection. Each route reads
        // within its own limit (src/http/body.ts), and the app bounds what it drops after answering
        maxRequestBodySize: Number.MAX_SAFE_INTEGER,
        fetch(request, server) {
          if (sockets.size && request.headers.get('upgrade')?.toLowerCase() === 'websocket') {
            const path = new URL(request.url).pathname
            const handlers = sockets.get(path)
            if (handlers) return upgrade(handlers, path, request, server)
          }
          return handle(request)
        },
        websocket: {
          idleTimeout: socketLimits.idleTimeoutSec,
          maxPayloadLength: socketLimits.maxPayloadLength,
          sendPings: true,
          // a client too slow to take its frames is closed, not silently skipped: it resumes with `since`
          backpressureLimit: socketLimits.backpressureLimit ?? 1024 * 1024,
          closeOnBackpressureLimit: true,
          open: (ws) => handlersOf(ws).open?.(ws),
          message: (ws, message) => handlersOf(ws).message(ws, message),
          close: (ws, code, reason) => handlersOf(ws).close?.(ws, code, reason),
        },
        // only reached if the app itself fails: still the service's error body
        error: (err) => failure(err, new Request('http://localhost/')),
      })
      // on the private unix socket the peer is the gateway, which names the client in X-Real-IP:
      // asking the socket (a system call per request) would tell nothing
      if (!options.unix) native.server = server
      return server
    },
  }
  /** The endpoint admits or refuses the caller; a socket exists only for an admitted one. */
  async function upgrade(handlers: SocketHandlers, path: string, request: Request, server: Server<SocketData>) {
    try {
      const peer = native.server === server ? server : undefined
      const attached = await handlers.upgrade(request, clientAddressOf(request, peer, deps.trustedProxies))
      if (attached instanceof Response) {
        const body = new RequestBody(request, deps.config.maxBodyBytes)
        if (!(await body.settle())) attached.headers.set('connection', 'close')
        return attached
      }
      // the 101 names its request as any answer does (its prefix: the process that holds the socket)
      const headers = { 'x-request-id': requestIdOf(request) }
      if (server.upgrade(request, { headers, data: { path, attached } })) return undefined
      return failure(badRequest('not a websocket upgrade request'), request)
    } catch (err) {
      return failure(err, request)
    }
  }
  return http
}
