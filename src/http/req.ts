/**
 * One call of a route, as its handler sees it: the validated parameters, query and body, the
 * admitted actor context, the request's headers and credentials, and what the answer carries
 * besides its body (headers and cookies, in Elysia's `set`). The app makes one per request
 * (./hooks/call.ts); HTTP, websocket frames and scripts' data calls (./dispatch.ts) all arrive as
 * Requests, so one handler serves them all.
 */
import type { Context } from 'elysia'
import { type Cookie, createCookieJar } from 'elysia/cookies'
import type { Ctx } from '../context'
import { largestBody } from '../config'
import type { HttpDeps } from './router'
import { badRequest, unauthorized } from '../errors'
import type { Session } from '../identity/sessions'
import { type Cidr, inCidrs } from '../net/cidr'
import { RequestBody } from './body'
import { bodyLimitOf, rawPathOf } from './body-limits'
import type { Answer } from './answer'

/** The credential a call presents: a bearer token ('' when the header is malformed), a session cookie. */
export interface Presented {
  token: string | null
  cookie: string | null
}

/** What Elysia keeps of a response being made: its status, headers and cookies. */
export type ResponseSet = Context['set']

/** The part of Bun's server that tells a request's peer. */
export interface PeerLookup {
  requestIP(request: Request): { address: string } | null
}

/** Where a call came from, besides its Request: what the entries (Bun.serve, the gateway, dispatch) know. */
export interface Origin {
  /** The server that parsed the request (Bun.serve on a port): asked for its peer. */
  server?: PeerLookup
  /** The gateway answers in-process: it writes the answer itself (./hooks/answers.ts, AnswerResponse). */
  inline?: boolean
  /** A call made for an actor that is already known (websocket frames, scripts): admitted as it. */
  ctx?: Ctx
  /** The caller's address, when the transport knows it (a websocket's peer). */
  clientAddress?: string
  /** The request id the call carries on (a websocket frame's, a script run's). */
  requestId?: string
}

// biome-ignore lint/suspicious/noExplicitAny: a Req of any route (helpers read what all calls have)
export class Req<P = any, Q = any, B = any> {
  private admitted?: Ctx
  private decodedPath?: string
  private address?: string
  /** The URL pattern of the route (`/rest/v1/domain/projects/:id`), once routed. */
  route = ''
  // set at admission (./hooks/admission.ts), before any handler reads them: no object is made before
  params = undefined as P
  query = undefined as Q
  body = undefined as B
  /** What ends with the call, whatever its outcome (leaving long work's gate). */
  finisher?: () => void
  private body_?: RequestBody
  private bodyLimit_?: number
  /** When the call began and when its answer was made (performance.now()), for the request log. */
  readonly started = performance.now()
  finished = 0
  /** The answer, once made (./hooks/answers.ts). */
  answered?: Answer
  /** Whether the request log writes a line for it (./hooks/request-log.ts). */
  logged = false

  constructor(
    readonly deps: HttpDeps,
    readonly request: Request,
    /** Elysia's response set: extra headers and cookies go there. */
    readonly set: ResponseSet,
    readonly requestId: string,
    /** The effective method (LOOKUP for POST + X-HTTP-Method-Override: LOOKUP; GET for HEAD). */
    readonly method: string,
    readonly origin: Origin,
  ) {}

  /** The request body, read once, within limits, and settled after the answer (./body.ts). */
  get requestBody(): RequestBody {
    this.body_ ??= new RequestBody(this.request, largestBody(this.deps.config))
    return this.body_
  }

  /** The largest body its route takes (./body-limits.ts): asked only of calls that read a body. */
  get bodyLimit(): number {
    this.bodyLimit_ ??= bodyLimitOf(this.deps.routes, this.deps.config, this.method, rawPathOf(this.request.url))
    return this.bodyLimit_
  }

  /**
   * After the answer is decided: drops what is left of an unread body within bounds (./body.ts);
   * true when the connection may stay open. A request whose body nobody touched and that declares
   * none has nothing to drop.
   */
  settle(): boolean | Promise<boolean> {
    if (!this.body_ && this.request.body === null) return true
    return this.requestBody.settle()
  }

  /** Extra response headers (X-Total-Count, X-Next-After, ...). */
  get headers(): ResponseSet['headers'] {
    return this.set.headers
  }

  /** A cookie of the answer, through Elysia's cookie jar (written into `set`, serialized with the answer). */
  cookie(name: string): Cookie<unknown> {
    return createCookieJar(this.set, Object.create(null))[name]!
  }

  /** The actor context admitted to this route; a 401 for a route that admitted nobody. */
  get ctx(): Ctx {
    if (!this.admitted) throw unauthorized()
    return this.admitted
  }

  /** Whether a context was admitted (public routes admit nobody). */
  get isAdmitted(): boolean {
    return this.admitted !== undefined
  }

  admit(ctx: Ctx): void {
    this.admitted = ctx
  }

  /** A HEAD request (which runs as its GET): the answer has no body (./hooks/answers.ts drops it). */
  get isHead(): boolean {
    // a HEAD always arrives as a CallRequest running as GET (./hooks/call.ts)
    return (this.request as { wireMethod?: string }).wireMethod === 'HEAD'
  }

  /** The signed-in session, for handlers that act on it. */
  get session(): Session {
    const s = this.ctx.session
    if (!s) throw unauthorized('this endpoint needs a signed-in user')
    return s
  }

  /** The URL path as sent (percent-encoded). */
  get rawPath(): string {
    const url = this.request.url
    const start = url.indexOf('/', url.indexOf('//') + 2)
    let end = url.indexOf('?', start)
    if (end < 0) end = url.indexOf('#', start)
    return url.slice(start, end < 0 ? undefined : end)
  }

  /** The URL path, decoded; a 400 when it is not valid percent-encoding. */
  get path(): string {
    this.decodedPath ??= decodePath(this.rawPath)
    return this.decodedPath
  }

  get clientAddress(): string {
    const parsed = (this.request as { source?: Request }).source ?? this.request
    this.address ??= this.origin.clientAddress ?? clientAddressOf(parsed, this.origin.server, this.deps.trustedProxies)
    return this.address
  }

  header(name: string): string | null {
    return this.request.headers.get(name)
  }

  credentials(): Presented {
    const session = this.origin.ctx?.session
    if (this.origin.ctx)
      return {
        token: session?.kind === 'token' ? session.id : null,
        cookie: session?.kind === 'cookie' ? session.id : null,
      }
    const auth = this.request.headers.get('authorization')
    const token = auth === null ? null : auth.startsWith('Bearer ') ? auth.slice(7).trim() : ''
    return { token, cookie: readCookie(this.request.headers.get('cookie'), SESSION_COOKIE) }
  }

  /** The body parsed as JSON (undefined when empty): what the route's body schema validated. */
  json(): Promise<unknown> {
    return Promise.resolve(this.body)
  }

  /** The body as bytes, within its route's limit (routes that do not parse it). */
  bytes(): Promise<Uint8Array> {
    return this.requestBody.bytes(this.bodyLimit)
  }

  /** The body as a stream within `limit` bytes (a route's own limit, such as FILES_MAX_BYTES); read it once. */
  stream(limit: number): ReadableStream<Uint8Array> {
    return this.requestBody.stream(limit)
  }
}

export const SESSION_COOKIE = 'RSession'

/** Value of a cookie in a Cookie header, without parsing the rest. */
export function readCookie(header: string | null, name: string): string | null {
  if (!header) return null
  const pair = `${name}=`
  let at = header.indexOf(pair)
  while (at > 0 && header[at - 1] !== ' ' && header[at - 1] !== ';') at = header.indexOf(pair, at + 1)
  if (at < 0) return null
  const start = at + name.length + 1
  const end = header.indexOf(';', start)
  return header.slice(start, end < 0 ? undefined : end).trim() || null
}

function decodePath(raw: string): string {
  if (raw.indexOf('%') < 0) return raw
  try {
    return decodeURI(raw)
  } catch {
    throw badRequest('the URL path is not valid percent-encoding', 'path')
  }
}

/**
 * The client's address: the peer (on the gateway's private unix socket, or in-process, the peer the
 * gateway reports in X-Real-IP); when the peer is a trusted proxy, the last address in
 * X-Forwarded-For it did not add.
 */
export function clientAddressOf(request: Request, server: PeerLookup | undefined, trusted: Cidr[]): string {
  const peer = unmapped(server?.requestIP(request)?.address ?? request.headers.get('x-real-ip') ?? 'unknown')
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
