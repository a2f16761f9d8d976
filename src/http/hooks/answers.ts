/**
 * Every answer, made in one place (mapResponse, for results and error bodies alike): the baseline
 * headers (no caching, nosniff, the request id), the route's own headers and cookies (Elysia's
 * `set`), CORS for listed origins, a strong ETag on JSON answers to GET (If-None-Match answers 304),
 * brotli or gzip for JSON bodies over COMPRESS_MIN_BYTES. The call ends here: what it entered (long
 * work's gate) is left, and what is left of an unread body is dropped within bounds.
 */
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import { serializeCookie } from 'elysia/cookies'
import { etagOf, JsonText } from '~storage/json-text'
import type { Config } from '../../config'
import type { HttpDeps } from '../router'
import { answerViolation } from './answer-checks'
import { inlineOf } from '../inline-request'
import type { Answer } from '../answer'
import type { Req, ResponseSet } from '../req'
import { JSON_TYPE } from '../json'
import { wireMethod } from './call'
import { corsHeaders } from './cors'

/**
 * What the app answers a request whose caller writes the answer itself (the gateway's in-process
 * requests): the answer is on the request (`answered`), and this one Response says so. A Response
 * made for each such request cost a point read more than a tenth of its time (allocated natively
 * and collected).
 */
export const ANSWERED = new Response(null, { status: 204 })

/** What `set` holds once its headers are in the answer: shared, never changed. */
const NO_HEADERS = Object.freeze(Object.create(null))

/** The baseline's own headers, which a route's Response may set itself. */
const BASELINE = new Set(['cache-control', 'x-content-type-options'])
const CHALLENGE = 'Bearer realm="platform"'
const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }

/** The answer as a Response. */
export function toHttpResponse(answer: Answer): Response {
  const response =
    answer.body instanceof Response
      ? answer.body
      : new Response(answer.body, { status: answer.status, headers: answer.headers })
  for (const cookie of answer.cookies) response.headers.append('set-cookie', cookie)
  return response
}

/**
 * mapResponse: the value a handler returned (or the error body onError made) as the answer. Elysia
 * is handed back a Response and an empty `set`, so it adds nothing of its own to it.
 */
export function answerCall(deps: Pick<HttpDeps, 'config' | 'routes' | 'log'>, answered: (req: Req) => void) {
  const { config } = deps
  const check = config.checkAnswers ? checked(deps) : undefined
  return ({ responseValue, set, req }: { responseValue: unknown; set: ResponseSet; req: Req }) => {
    if (check) responseValue = check(req, set, responseValue)
    const finish = req.finisher
    if (finish) {
      req.finisher = undefined
      finish()
    }
    const keepOpen = req.settle()
    if (keepOpen instanceof Promise)
      return keepOpen.then((open) => respond(config, req, set, responseValue, open, answered))
    return respond(config, req, set, responseValue, keepOpen, answered)
  }
}

/** The value, or the error body that says how it differs from what its route declares (CHECK_ANSWERS=on). */
function checked(deps: Pick<HttpDeps, 'routes' | 'log'>) {
  return (req: Req, set: ResponseSet, value: unknown): unknown => {
    let status = typeof set.status === 'number' ? set.status : 200
    if (value === undefined && status === 200) status = 204
    const violation = answerViolation(deps.routes, req, status, value)
    if (!violation) return value
    deps.log.error('an answer does not match its schema', { requestId: req.requestId, violation })
    set.status = 500
    return { error_code: 1500, error_message: `CHECK_ANSWERS: ${violation}` }
  }
}

function respond(
  config: Pick<Config, 'corsOrigins' | 'compressMinBytes'>,
  req: Req,
  set: ResponseSet,
  value: unknown,
  keepOpen: boolean,
  answered: (req: Req) => void,
): Response {
  const answer = answerOf(config, req, set, value, keepOpen)
  req.answered = answer
  req.finished = performance.now()
  answered(req)
  // what `set` held is in the answer now: Elysia finds nothing to merge and takes the Response as it is
  set.headers = NO_HEADERS
  set.status = 200
  set.cookie = undefined
  const inline = inlineOf(req.request)
  if (!inline) return toHttpResponse(answer)
  inline.answered = answer
  return ANSWERED
}

function answerOf(
  config: Pick<Config, 'corsOrigins' | 'compressMinBytes'>,
  req: Req,
  set: ResponseSet,
  value: unknown,
  keepOpen: boolean,
): Answer {
  const method = req.method
  const head = wireMethod(req.request) === 'HEAD'
  let status = typeof set.status === 'number' ? set.status : 200
  if (value === undefined && status === 200) status = 204
  const headers: Record<string, string> = {
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'x-request-id': req.requestId,
  }
  for (const name in set.headers) headers[name] = String(set.headers[name])
  if (config.corsOrigins.length) Object.assign(headers, corsHeaders(config, req.request.headers.get('origin')))
  if (status === 401) headers['www-authenticate'] ??= CHALLENGE
  if (!keepOpen) headers.connection = 'close'
  const cookie = set.cookie && serializeCookie(set.cookie)
  const cookies = cookie === undefined ? [] : Array.isArray(cookie) ? cookie : [cookie]
  const answer = (body: Answer['body'], bytes: number, s = status): Answer => ({
    status: s,
    headers,
    cookies,
    body,
    bytes,
  })
  if (value instanceof Response) {
    const response = head ? new Response(null, value) : value
    for (const [name, v] of Object.entries(headers))
      if (!BASELINE.has(name) || !response.headers.has(name)) response.headers.set(name, v)
    return answer(response, Number(response.headers.get('content-length') ?? 0), response.status)
  }
  if (value === undefined) return answer(null, 0)
  const text = value instanceof JsonText ? value.text : JSON.stringify(value)
  headers['content-type'] = JSON_TYPE
  if (status === 200 && (method === 'GET' || head)) {
    const etag = value instanceof JsonText ? value.etag : etagOf(text)
    headers.etag = etag
    const live = value instanceof JsonText && value.live
    if (!live && req.request.headers.get('if-none-match') === etag) return { ...answer(null, 0, 304), cookies: [] }
  }
  if (head) return answer(null, 0)
  if (text.length >= config.compressMinBytes) {
    const accepted = req.request.headers.get('accept-encoding') ?? ''
    const encoding = /\bbr\b/.test(accepted) ? 'br' : /\bgzip\b/.test(accepted) ? 'gzip' : null
    if (encoding) {
      const body = encoding === 'br' ? brotliCompressSync(text, BROTLI) : gzipSync(text)
      headers['content-encoding'] = encoding
      headers.vary = headers.vary ? `${headers.vary}, Accept-Encoding` : 'Accept-Encoding'
      return answer(body, body.byteLength)
    }
  }
  return answer(text, value instanceof JsonText ? value.bytes : Buffer.byteLength(text))
}
