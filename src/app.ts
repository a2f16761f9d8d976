/**
 * The HTTP application: every route of the manifest behind one request handler (src/http/kernel.ts),
 * served by Bun.serve on a port or a unix socket, or called in-process (`handle`, for tests).
 * Websocket endpoints are upgraded before routing.
 */
import type { Server, ServerWebSocket } from 'bun'
import type { Deps } from './deps'
import { errorOutcome } from './http/dispatch'
import { handleHttp, toResponse } from './http/kernel'
import type { RouteEntry } from './http/route'
import { Router } from './http/router'

export type ListenOptions = {
  hostname?: string
  port?: number
  unix?: string
  reusePort?: boolean
  maxRequestBodySize: number
}

/** What a websocket endpoint does with its sockets. */
export interface SocketHandlers {
  open?(ws: ServerWebSocket<SocketData>): void
  message(ws: ServerWebSocket<SocketData>, message: string | Buffer): void
  close?(ws: ServerWebSocket<SocketData>, code: number, reason: string): void
}

export interface SocketData {
  path: string
}

export interface App {
  /** Answers one request in-process. */
  handle(request: Request): Promise<Response>
  listen(options: ListenOptions): Server<SocketData>
  /** Serves a websocket endpoint at `path`. */
  ws(path: string, handlers: SocketHandlers): App
}

/** The app over the service's routes, or (tests) over routes of its own. */
export function createApp(deps: Deps, routes?: readonly RouteEntry[]): App {
  const served = routes ? { ...deps, routes: new Router(routes) } : deps
  const sockets = new Map<string, SocketHandlers>()
  const app: App = {
    handle: (request) => handleHttp(served, request),
    ws(path, handlers) {
      sockets.set(path, handlers)
      return app
    },
    listen(options) {
      const net = options.unix
        ? { unix: options.unix }
        : { hostname: options.hostname, port: options.port, reusePort: options.reusePort }
      const handlersOf = (ws: ServerWebSocket<SocketData>) => sockets.get(ws.data.path)!
      return Bun.serve<SocketData>({
        ...net,
        maxRequestBodySize: options.maxRequestBodySize,
        fetch(request, server) {
          if (sockets.size && request.headers.get('upgrade')?.toLowerCase() === 'websocket') {
            const path = new URL(request.url).pathname
            if (sockets.has(path) && server.upgrade(request, { data: { path } })) return undefined
          }
          return handleHttp(served, request, server)
        },
        websocket: {
          open: (ws) => handlersOf(ws).open?.(ws),
          message: (ws, message) => handlersOf(ws).message(ws, message),
          close: (ws, code, reason) => handlersOf(ws).close?.(ws, code, reason),
        },
        // only reached if the kernel itself fails: still the service's error body
        error: (err) => toResponse(errorOutcome(served, err, 'unknown'), 'unknown', false),
      })
    },
  }
  return app
}
