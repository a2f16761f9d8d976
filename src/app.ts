/** The Elysia application: every route of the manifest, and one error mapping for what no route handles. */
import { Elysia } from 'elysia'
import type { Deps } from './deps'
import { ApiError } from './http/errors'
import { errorResponse, mountRoutes, requestIdOf } from './http/kernel'
import type { RouteEntry } from './http/route'

export function createApp(deps: Deps, routes: RouteEntry[]) {
  const app = new Elysia()
  app.onError(({ code, error, request }) => {
    const requestId = requestIdOf(request)
    if (code === 'NOT_FOUND')
      return errorResponse(new ApiError(404, `no resource at ${new URL(request.url).pathname}`), requestId, deps)
    if (code === 'PARSE') return errorResponse(new ApiError(400, 'request could not be parsed'), requestId, deps)
    return errorResponse(error, requestId, deps)
  })
  mountRoutes(app, routes, deps)
  return app
}

export type App = ReturnType<typeof createApp>
