/**
 * CORS for the web origins CORS_ORIGINS lists (with credentials): the headers every answer to such
 * an origin carries (./answers.ts), and the answer to a preflight, which onRequest gives before any
 * route runs. Any other origin gets no CORS header: the browser keeps the answer from its page.
 */
import type { Config } from '../../config'
import type { HttpDeps } from '../router'
import { allowedMethods, rawPathOf } from './call'

/** The headers that let `origin` read the answer, when CORS_ORIGINS lists it. */
export function corsHeaders(config: Pick<Config, 'corsOrigins'>, origin: string | null): Record<string, string> {
  if (origin === null || !config.corsOrigins.includes(origin)) return {}
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-credentials': 'true',
    'access-control-expose-headers': 'x-request-id, etag, retry-after, x-journal-horizon, x-total-count, x-next-after',
    vary: 'Origin',
  }
}

/** A preflight (OPTIONS with Access-Control-Request-Method) for a URL that serves `allow`. */
function preflight(config: Pick<Config, 'corsOrigins'>, request: Request, allow: string): Response {
  const cors = corsHeaders(config, request.headers.get('origin'))
  if (!cors['access-control-allow-origin']) return new Response(null, { status: 204, headers: { allow } })
  return new Response(null, {
    status: 204,
    headers: {
      ...cors,
      allow,
      'access-control-allow-methods': allow,
      'access-control-allow-headers':
        request.headers.get('access-control-request-headers') ?? 'authorization, content-type, x-http-method-override',
      'access-control-max-age': '600',
    },
  })
}

/** onRequest: OPTIONS on a URL a route serves is answered here (an unknown URL goes on to its 404). */
export function answerPreflight(deps: Pick<HttpDeps, 'config' | 'routes'>) {
  return (c: { request: Request }): Response | undefined => {
    if (c.request.method !== 'OPTIONS') return undefined
    const match = deps.routes.match(rawPathOf(c.request.url))
    return match ? preflight(deps.config, c.request, allowedMethods(match.entry.module)) : undefined
  }
}
