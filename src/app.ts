/**
 * The HTTP application: every route of the manifest behind one request handler (src/http/kernel.ts),
 * served by Bun.serve on a port or a unix socket, or called in-process (`handle`, for tests).
 * Websocket endpoints are upgraded before routing.
 */
import type { Server, ServerWebSocket } from 'bun'
import { largestBody } from './config'
import type { Deps } from './deps'
import { errorOutcome } from './http/dispatch'
import { badRequest } from './errors'
import { RequestBody } from './http/body'
import { answerHttp, clientAddressOf, handleHttp, type IncomingRequest, settled, toResponse } from './http/kernel'
import type { Answer } from './http/respond'
import type { RouteEntry } from './http/route'
import { Router } from './http/router'

export type ListenOptions = {
  hostname?: string
  port?: number
  unix?: string
  reusePort?: boolean
  /** Seconds an idle connection is kept (Bun's default, 10, when absent; 0: until the peer closes it). */
  idleTimeout?: number
}

/** What a websocket endpoint does with its sockets. */
export interface SocketHandlers {
  /**
   * Decides the upgrade before it happens: what the socket carries (its caller), or the Response
   * that refuses it (a 401 error body). `clientAddress` is the peer as the HTTP kernel reads it.
   */
  upgrade(request: Request, clientAddress: string): Promise<unknown | Response>
  open?(ws: ServerWebSocket<SocketData>): void
  message(ws: ServerWebSocket<SocketData>, message: string | Buffer): void
  close?(ws: ServerWebSocket<SocketData>, code: number, reason: string): void
}

export interface SocketData {
  path: string
  /** What the endpoint's `upgrade` attached. */
  attached: unknown
}

/** Limits Bun applies to every socket. */
export interface SocketLimits {
  idleTimeoutSec: number
  maxPayloadLength: number
}

export interface App {
  /** Answers one request in-process. */
  handle(request: Request): Promise<Response>
  /** Answers one request in-process, before the answer is a Response (the gateway writes it itself). */
  answer(request: IncomingRequest): Promise<Answer>
  listen(options: ListenOptions): Server<SocketData>
  /** Serves a websocket endpoint at `path`. */
  ws(path: string, handlers: SocketHandlers, limits: SocketLimits): App
}

/** The app over the service's routes, or (tests) over routes of its own. */
export function createApp(deps: Deps, routes?: readonly RouteEntry[]): App {
  const served = routes ? { ...deps, routes: new Router(routes) } : deps
  const sockets = new Map<string, SocketHandlers>()
  let socketLimits: SocketLimits = { idleTimeoutSec: 120, maxPayloadLength: 1024 * 1024 }
  const app: App = {
    handle: (request) => handleHttp(served, request),
    answer: (request) => answerHttp(served, request),
    ws(path, handlers, limits) {
      sockets.set(path, handlers)
      socketLimits = limits
      return app
    },
    listen(options) {
      const net = options.unix
        ? { unix: options.unix }
        : { hostname: options.hostname, port: options.port, reusePort: options.reusePort }
      const handlersOf = (ws: ServerWebSocket<SocketData>) => sockets.get(ws.data.path)!
      // on the private unix socket the peer is the gateway, which names the client in X-Real-IP:
      // asking the socket (a system call per request) would tell nothing
      const peerOf = (server: Server<SocketData>) => (options.unix ? undefined : server)
      return Bun.serve<SocketData>({
        ...net,
        // Bun's types allow it on ports only; on a unix socket it is kept all the same (checked: 0 keeps it open)
        ...((options.idleTimeout === undefined ? {} : { idleTimeout: options.idleTimeout }) as object),
        // no limit of Bun's own: its refusal is no JSON and resets the connection. Each route reads
        // within its own limit (src/http/body.ts), and the kernel bounds what it drops after answering
        maxRequestBodySize: Number.MAX_SAFE_INTEGER,
        fetch(request, server) {
          if (sockets.size && request.headers.get('upgrade')?.toLowerCase() === 'websocket') {
            const path = new URL(request.url).pathname
            const handlers = sockets.get(path)
            if (handlers) return upgrade(handlers, path, request, server)
          }
          return handleHttp(served, request, peerOf(server))
        },
        websocket: {
          idleTimeout: socketLimits.idleTimeoutSec,
          maxPayloadLength: socketLimits.maxPayloadLength,
          sendPings: true,
          // a client too slow to take its frames is closed, not silently skipped: it resumes with `since`
          closeOnBackpressureLimit: true,
          open: (ws) => handlersOf(ws).open?.(ws),
          message: (ws, message) => handlersOf(ws).message(ws, message),
          close: (ws, code, reason) => handlersOf(ws).close?.(ws, code, reason),
        },
        // only reached if the kernel itself fails: still the service's error body
        error: (err) => toResponse(errorOutcome(served, err, 'unknown'), 'unknown', served.config),
      })
    },
  }
  /** The endpoint admits or refuses the caller; a socket exists only for an admitted one. */
  async function upgrade(handlers: SocketHandlers, path: string, request: Request, server: Server<SocketData>) {
    try {
      const attached = await handlers.upgrade(request, clientAddressOf(request, server, served.trustedProxies))
      if (attached instanceof Response) return settled(new RequestBody(request, largestBody(served.config)), attached)
      if (server.upgrade(request, { data: { path, attached } })) return undefined
      return toResponse(
        errorOutcome(served, badRequest('not a websocket upgrade request'), 'unknown'),
        'unknown',
        served.config,
      )
    } catch (err) {
      return toResponse(errorOutcome(served, err, 'unknown', path), 'unknown', served.config)
    }
  }

  return app
}
