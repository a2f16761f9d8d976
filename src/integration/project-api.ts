/**
 * Incoming HTTP to a channel (the original's "project API"): a request to
 * `/rest/v1/integration/in/<anything>` with a channel's token runs the channel's
 * `recv_svcscriptcode` script with the request as `startparam(1)`; what the script returns is the
 * answer. A script may answer `{status, body, headers}` to choose them; any other value is sent as
 * JSON with 200. The channel's `opts.recv_timeout` (seconds, default 30) bounds the wait.
 */
import { STATUS_CODES } from 'node:http'
import * as v from 'valibot'
import { ApiError, forbidden } from '../errors'
import type { Req } from '../http/req'
import { defineRoute } from '../http/route'
import { answer, errors } from '../http/schemas'
import { JsonValue } from '../values'
import { channels } from './channels'

const DEFAULT_TIMEOUT_SEC = 30
const FORWARDED_HEADERS = ['content-type', 'user-agent', 'accept', 'x-request-id']

/** The request as the script sees it: method, path below /in, query, chosen headers, body (JSON or text). */
async function describe(req: Req) {
  const raw = new TextDecoder().decode(await req.bytes())
  let body: unknown = raw === '' ? null : raw
  if (raw && (req.header('content-type') ?? '').includes('json')) {
    try {
      body = JSON.parse(raw)
    } catch {
      // not JSON after all: the script gets the text
    }
  }
  const headers = Object.fromEntries(FORWARDED_HEADERS.flatMap((h) => (req.header(h) ? [[h, req.header(h)]] : [])))
  return { method: req.method, path: `/${req.params['*'] ?? ''}`, query: req.query, headers, body }
}

/**
 * Headers a script may not set (compared in lower case): they would act on the service's whole
 * origin (a cookie, the browser's stored data, HSTS, CORS, a service worker's scope, where the
 * browser reports (NEL, Reporting), another endpoint for the origin (Alt-Svc)) or on the
 * connection's framing, which the service owns (a Content-Encoding the body does not have breaks it).
 */
const REFUSED_HEADERS = new Set([
  'set-cookie',
  'set-cookie2',
  'clear-site-data',
  'strict-transport-security',
  'service-worker-allowed',
  'nel',
  'report-to',
  'reporting-endpoints',
  'alt-svc',
  'content-encoding',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'trailer',
  'x-request-id',
])
const refusedHeader = (name: string) => REFUSED_HEADERS.has(name) || name.startsWith('access-control-')

/** Statuses sent without a body, nor a Content-Type for one. */
const NO_CONTENT = new Set([204, 205, 304])

/** A 502 naming what in the script's answer cannot be sent. */
const badAnswer = (code: string, message: string, field: string) =>
  new ApiError(502, `the channel's script ${code} answered ${message}`, { field })

function answerOf(code: string, result: unknown): Response {
  const r = result as { status?: unknown; body?: unknown; headers?: unknown } | null
  if (!r || typeof r !== 'object' || typeof r.status !== 'number') return Response.json(result ?? null)
  if (!Number.isInteger(r.status) || r.status < 200 || r.status > 599)
    throw badAnswer(code, `status ${r.status}, which is no final HTTP status (200-599)`, 'status')
  const headers = new Headers()
  if (r.headers !== undefined && r.headers !== null) {
    if (typeof r.headers !== 'object' || Array.isArray(r.headers))
      throw badAnswer(code, 'headers that are no object of names and values', 'headers')
    for (const [name, value] of Object.entries(r.headers)) {
      const lower = name.toLowerCase()
      if (refusedHeader(lower))
        throw badAnswer(code, `the header ${name.slice(0, 100)}, which a script may not set`, `headers.${lower}`)
      try {
        headers.append(name, typeof value === 'string' ? value : String(value))
      } catch {
        throw badAnswer(
          code,
          `the header ${name.slice(0, 100)}, which is no valid header`,
          `headers.${name.slice(0, 100)}`,
        )
      }
    }
  }
  // these statuses have no content (RFC 9110 15.3.5, 15.3.6, 15.4.5): whatever body the script gave is dropped
  if (NO_CONTENT.has(r.status)) {
    headers.delete('content-type')
    return new Response(null, { status: r.status, headers })
  }
  if (typeof r.body === 'string') return new Response(r.body, { status: r.status, headers })
  if (!headers.has('content-type')) headers.set('content-type', 'application/json')
  return new Response(JSON.stringify(r.body ?? null), { status: r.status, headers })
}

/** What the script answers: any value as JSON, or the body and media type it chose. */
const ScriptAnswer = answer(
  v.pipe(JsonValue, v.description("the script's value as JSON, or the body it chose (of the Content-Type it set)")),
)
/**
 * The statuses a script may choose: the registered ones from 200 on, but those every route answers
 * with an error body and the service's own 501, 502, 504 (a script may answer those too, with a
 * body of its own).
 */
const SERVICE_ERRORS = [400, 401, 403, 413, 415, 429, 500, 501, 502, 503, 504]
const scriptAnswers = Object.fromEntries(
  Object.keys(STATUS_CODES)
    .map(Number)
    .filter((s) => s >= 200 && !SERVICE_ERRORS.includes(s))
    .map((s) => [s, ScriptAnswer]),
) as Record<200, typeof ScriptAnswer>

export const projectApi = defineRoute({
  summary: "Call a channel's project API",
  description:
    "Runs the channel's `recv_svcscriptcode` script with the request (method, path below /in, query, body); what " +
    'the script returns is the answer: `{status, body, headers}` chooses them, any other value is sent as JSON ' +
    "with 200. Takes a channel's token only (403 otherwise); 501 for a channel without a script, 502 when it " +
    'fails or answers what cannot be sent (a status outside 200-599, 1xx included; a header such as Set-Cookie ' +
    "that a script may not set on the service's origin: the 502 names it); 204, 205 and 304 go without a body. 504 when it does not answer within `opts.recv_timeout` " +
    'seconds (30 by default).',
  // admitted as any signed-in caller; only a channel's token gets further
  access: 'session',
  parse: 'none', // any body: the script gets JSON or text
  params: v.object({ '*': v.pipe(v.string(), v.description('the path the script sees, below /in')) }),
  // any parameters: the script reads them
  query: v.record(v.string(), v.string()),
  response: { ...scriptAnswers, ...errors(501, 502, 504) },
  async handle(req) {
    const { ctx, deps } = req
    if (ctx.actor.type !== 'integration') throw forbidden('the project API answers integration channel tokens only')
    const channel = await deps.repo(channels.table).get(ctx.domain, ctx.actor.id)
    const code = channel?.recv_svcscriptcode
    if (typeof code !== 'string' || code === '')
      throw new ApiError(
        501,
        `channel ${channel?.code ?? ctx.actor.id} has no recv_svcscriptcode: it offers no project API`,
      )
    const timeoutSec = (channel?.opts as { recv_timeout?: number } | undefined)?.recv_timeout ?? DEFAULT_TIMEOUT_SEC
    const request = await describe(req)
    const durationMs = timeoutSec * 1000
    const outcome = await deps.scripts.runWithin({ domainId: ctx.domain, code, params: [request], durationMs })
    if (!outcome) throw new ApiError(504, `the channel's script ${code} did not answer within ${timeoutSec} s`)
    if (outcome.status !== 'done') throw new ApiError(502, `the channel's script ${code} failed: ${outcome.error}`)
    return answerOf(code, outcome.result)
  },
})
