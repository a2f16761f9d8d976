/**
 * An outcome as an HTTP response: the baseline headers every answer carries, CORS for listed
 * origins, a strong ETag on JSON answers to GET (If-None-Match answers 304), and gzip or brotli for
 * JSON bodies over COMPRESS_MIN_BYTES when the client accepts them.
 */
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import type { Config } from '../config'
import type { Outcome } from './dispatch'
import { etagOf, JsonText } from '~storage/json-text'
import { JSON_TYPE } from './json'

/**
 * What every answer carries unless its route says otherwise: answers are per caller (no caches keep
 * them), their type is what they say, and a 401 tells how to authenticate.
 */
const baselineWith = (requestId: string): Record<string, string> => ({
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-request-id': requestId,
})
/**
 * The baseline's own headers, which a route's Response may set itself. The baseline is written out
 * for each answer: a spread of a shared object cost a point read more than the rest of its headers.
 */
const BASELINE = new Set(['cache-control', 'x-content-type-options'])
const CHALLENGE = 'Bearer realm="platform"'
const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }

/** What of the request shapes the answer; absent for answers made without one (a failing listener). */
export interface Asked {
  method: string
  header(name: string): string | null
}

/**
 * An answer before it is a Response: what Bun.serve gets as a Response, the gateway writes as bytes
 * itself when it answers in-process (src/http/gateway/inline.ts), without making one.
 */
export interface Answer {
  status: number
  headers: Record<string, string>
  cookies: string[]
  /** The body; a Response of the route's own (a file, a page) carries its body, status and headers itself. */
  body: string | Uint8Array | null | Response
  /** Bytes of the body as sent (compressed when it was); of a text, its length in UTF-8. */
  bytes: number
}

/** The answer as a Response. */
export function toHttpResponse(answer: Answer): Response {
  const response =
    answer.body instanceof Response
      ? answer.body
      : new Response(answer.body, { status: answer.status, headers: answer.headers })
  for (const cookie of answer.cookies) response.headers.append('set-cookie', cookie)
  return response
}

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
export function preflight(config: Pick<Config, 'corsOrigins'>, asked: Asked, allow: string): Response {
  const cors = corsHeaders(config, asked.header('origin'))
  if (!cors['access-control-allow-origin']) return new Response(null, { status: 204, headers: { allow } })
  return new Response(null, {
    status: 204,
    headers: {
      ...cors,
      allow,
      'access-control-allow-methods': allow,
      'access-control-allow-headers':
        asked.header('access-control-request-headers') ?? 'authorization, content-type, x-http-method-override',
      'access-control-max-age': '600',
    },
  })
}

export function respond(
  config: Pick<Config, 'corsOrigins' | 'compressMinBytes'>,
  outcome: Outcome,
  requestId: string,
  asked?: Asked,
): Answer {
  const head = asked?.method === 'HEAD'
  const headers = baselineWith(requestId)
  for (const name in outcome.headers) headers[name] = outcome.headers[name]!
  if (asked && config.corsOrigins.length) Object.assign(headers, corsHeaders(config, asked.header('origin')))
  if (outcome.status === 401) headers['www-authenticate'] ??= CHALLENGE
  const answer = (body: Answer['body'], bytes: number, status = outcome.status): Answer => ({
    status,
    headers,
    cookies: outcome.cookies,
    body,
    bytes,
  })
  if (outcome.body instanceof Response) {
    const response = head ? new Response(null, outcome.body) : outcome.body
    for (const [name, value] of Object.entries(headers))
      if (!BASELINE.has(name) || !response.headers.has(name)) response.headers.set(name, value)
    return answer(response, Number(response.headers.get('content-length') ?? 0), response.status)
  }
  if (outcome.body === undefined) return answer(null, 0)
  const text = outcome.body instanceof JsonText ? outcome.body.text : JSON.stringify(outcome.body)
  headers['content-type'] = JSON_TYPE
  if (outcome.status === 200 && (asked?.method === 'GET' || head)) {
    const etag = outcome.body instanceof JsonText ? outcome.body.etag : etagOf(text)
    headers.etag = etag
    if (asked!.header('if-none-match') === etag) return { ...answer(null, 0, 304), cookies: [] }
  }
  if (head) return answer(null, 0)
  if (text.length >= config.compressMinBytes && asked) {
    const accepted = asked.header('accept-encoding') ?? ''
    const encoding = /\bbr\b/.test(accepted) ? 'br' : /\bgzip\b/.test(accepted) ? 'gzip' : null
    if (encoding) {
      const body = encoding === 'br' ? brotliCompressSync(text, BROTLI) : gzipSync(text)
      headers['content-encoding'] = encoding
      headers.vary = headers.vary ? `${headers.vary}, Accept-Encoding` : 'Accept-Encoding'
      return answer(body, body.byteLength)
    }
  }
  return answer(text, outcome.body instanceof JsonText ? outcome.body.bytes : Buffer.byteLength(text))
}
