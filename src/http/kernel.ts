/**
 * The HTTP side of a call: request id, effective method (LOOKUP, SYNC and CLEAR arrive as POST +
 * X-HTTP-Method-Override, see src/http/gateway), client address, credentials and body from the
 * request; then `runRoute` (src/http/dispatch.ts), the same path every transport takes; then the
 * outcome as a Response.
 */
import { largestBody } from '../config'
import { badRequest } from '../errors'
import type { Deps } from '../deps'
import { authenticate } from '../identity/authenticate'
import { readCookie, SESSION_COOKIE } from '../identity/cookies'
import { RequestBody, readJsonBody } from './body'
import { type Cidr, inCidrs } from './cidr'
import { allowedMethods, errorOutcome, type Outcome, parseQuery, runRoute } from './dispatch'
import { VALID_HOST } from './gateway/head'
import { type Answer, preflight, respond, toHttpResponse } from './respond'
import type { Presented, RequestSource } from './req'
import { newRequestId } from './request-id'

export const OVERRIDE_HEADER = 'x-http-method-override'
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/

/**
 * What the kernel reads of a request: a Request from Bun.serve, or the gateway's view of one it
 * answers in-process (src/http/gateway/inline.ts).
 */
export type IncomingRequest = Pick<Request, 'method' | 'url' | 'body' | 'arrayBuffer'> & {
  headers: Pick<Headers, 'get'>
  /** The path and query of `url`, when the gateway knows them already. */
  target?: string | null
}

/** The part of Bun's server a request handler uses. */
export interface PeerLookup {
  requestIP(request: Request): { address: string } | null
}

export function requestIdOf(request: IncomingRequest): string {
  const given = request.headers.get('x-request-id')
  return given !== null && SANE_REQUEST_ID.test(given) ? given : newRequestId()
}

/**
 * The client's address: the peer (on the gateway's private unix socket, the peer the gateway
 * reports); when the peer is a trusted proxy, the last address in X-Forwarded-For it did not add.
 */
export function clientAddressOf(request: IncomingRequest, server: PeerLookup | undefined, trusted: Cidr[]): string {
  // a server is given only with the Request it parsed
  const peer = unmapped(server?.requestIP(request as Request)?.address ?? request.headers.get('x-real-ip') ?? 'unknown')
  if (trusted.length === 0 || !inCidrs(peer, trusted)) return peer
  const hops = (request.headers.get('x-forwarded-for') ?? '')
    .split(',')
    .map((h) => unmapped(h.trim()))
    .filter(Boolean)
  for (let i = hops.length - 1; i >= 0; i--) if (!inCidrs(hops[i]!, trusted)) return hops[i]!
  return hops[0] ?? peer
}

/** `::ffff:1.2.3.4` is shown as `1.2.3.4`. */
const unmapped = (address: string) =>
  address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address

/**
 * What a call reads of its HTTP request, and what the answer is shaped by (the method, the headers):
 * one object with methods, not one with a closure each (a request's allocations cost it more than
 * their share under load).
 */
class HttpSource implements RequestSource {
  readonly method: string
  private address: string | undefined

  constructor(
    private readonly deps: Deps,
    private readonly request: IncomingRequest,
    private readonly body: RequestBody,
    private readonly server: PeerLookup | undefined,
  ) {
    this.method = request.method
  }

  json(): Promise<unknown> {
    return readJsonBody(this.request, this.body, this.deps.config.maxBodyBytes)
  }

  bytes(): Promise<Uint8Array> {
    return this.body.bytes(this.deps.config.maxBodyBytes)
  }

  stream(limit: number): ReadableStream<Uint8Array> {
    return this.body.stream(limit)
  }

  header(name: string): string | null {
    return this.request.headers.get(name)
  }

  clientAddress(): string {
    return (this.address ??= clientAddressOf(this.request, this.server, this.deps.trustedProxies))
  }

  credentials(): Presented {
    const auth = this.request.headers.get('authorization')
    const token = auth === null ? null : auth.startsWith('Bearer ') ? auth.slice(7).trim() : ''
    return { token, cookie: readCookie(this.request.headers.get('cookie'), SESSION_COOKIE) }
  }
}

/** Path and query of a request URL, without building a URL object on the hot path. */
function splitUrl(url: string): { rawPath: string; query: Record<string, string | undefined> } {
  // Bun.serve gives the bare target for a request without Host (HTTP/1.0)
  const start = url.charCodeAt(0) === 47 /* / */ ? 0 : url.indexOf('/', url.indexOf('//') + 2)
  const q = url.indexOf('?', start)
  const hash = url.indexOf('#', start)
  const end = hash < 0 ? url.length : hash
  if (q < 0 || q > end) return { rawPath: url.slice(start, end), query: {} }
  return { rawPath: url.slice(start, q), query: parseQuery(url.slice(q + 1, end)) }
}

export async function handleHttp(deps: Deps, request: Request, server?: PeerLookup): Promise<Response> {
  return toHttpResponse(await answerHttp(deps, request, server))
}

/** A request's answer, before it is a Response (the gateway writes it as bytes itself). */
export async function answerHttp(deps: Deps, request: IncomingRequest, server?: PeerLookup): Promise<Answer> {
  const started = performance.now()
  const requestId = requestIdOf(request)
  const body = new RequestBody(request, largestBody(deps.config))
  // also what the answer is shaped by (Asked: the method, the headers)
  const source = new HttpSource(deps, request, body, server)
  const logged = deps.log.level !== 'error' && deps.log.level !== 'warn' && Math.random() < deps.config.logRequests
  // asked now, while the socket is there: a client that aborts its upload is gone by the log line
  if (logged && server) source.clientAddress()
  let outcome: Outcome
  try {
    // the gateway refuses these itself; Bun.serve (GATEWAY=off) puts them in the URL the path is cut from
    if (server && !VALID_HOST.test(request.headers.get('host') ?? ''))
      throw badRequest('the Host header is not a host name or address', 'host')
    const { rawPath, query } = splitUrl(request.target ?? request.url)
    if (request.method === 'OPTIONS') {
      const match = deps.routes.match(rawPath)
      if (match) {
        const response = await settled(body, preflight(deps.config, source, allowedMethods(match.entry.module)))
        return { status: response.status, headers: {}, cookies: [], body: response, bytes: 0 }
      }
    }
    const override = request.headers.get(OVERRIDE_HEADER)
    const call = { method: request.method, override, rawPath, query, requestId, source }
    outcome = await runRoute(deps, call, authenticate)
  } catch (err) {
    outcome = errorOutcome(deps, err, requestId)
  }
  const settling = body.settle()
  const keepOpen = settling instanceof Promise ? await settling : settling
  if (!keepOpen) outcome.headers = { ...outcome.headers, connection: 'close' }
  const answer = respond(deps.config, outcome, requestId, source)
  const seconds = (performance.now() - started) / 1000
  const route = outcome.route ?? 'unmatched'
  deps.metrics.observe(route, request.method, outcome.status, seconds)
  if (logged)
    deps.log.request({
      id: requestId,
      method: request.method,
      route,
      status: outcome.status,
      ms: Math.round(seconds * 1e5) / 100,
      bytes: answer.bytes,
      actor: outcome.actor?.id,
      domain: outcome.actor?.domain,
      client: source.clientAddress(),
    })
  return answer
}

/** `response`, closing its connection when the rest of the request body could not be dropped in time. */
export async function settled(body: RequestBody, response: Response): Promise<Response> {
  if (!(await body.settle())) response.headers.set('connection', 'close')
  return response
}

/** An outcome as a Response, outside a request (a listener's own failure). */
export function toResponse(outcome: Outcome, requestId: string, config: Deps['config']): Response {
  return toHttpResponse(respond(config, outcome, requestId))
}
