/**
 * The start of every call. Bun cannot carry LOOKUP, SYNC or CLEAR in a Request (it makes them GET),
 * so they arrive as POST + X-HTTP-Method-Override and `effectiveRequest` (an Elysia `wrap`, before
 * routing) turns such a request into a CallRequest whose method is the one meant. The gateway and
 * `dispatch` make CallRequests themselves, with the method meant and what they know of the caller.
 * `startCall` (onRequest) then makes the call's Req: its request id, effective method and origin.
 */
import type { HttpDeps } from '../router'
import { type ApiError, badRequest } from '../../errors'
import { Req, type Origin, type ResponseSet } from '../req'
import { OVERRIDE_HEADER, OVERRIDE_METHODS } from '../route'
import type { DeclaredModule } from '../route-declaration'
import type { Method } from '../../values'
import { VALID_HOST } from '../../gateway/head'
import { InlineRequest } from '../inline-request'
import { newRequestId } from '../request-id'
import { rawPathOf } from '../body-limits'

export { rawPathOf }

/** A Request made by the service itself: the method it means, and what it knows of the caller. */
export class CallRequest extends Request {
  /** Why the call is refused before it is routed (a bad override). */
  refusal?: ApiError
  /** The method as it travelled (POST for a LOOKUP sent with the override header). */
  readonly wireMethod: string

  /** The Request a listener parsed, when this one is its copy (a method override read from its headers). */
  readonly source?: Request

  constructor(
    input: string | Request,
    init: RequestInit | undefined,
    private meant: string,
    /** What the service knows of the caller; absent for a copy of a listener's request (its listener knows). */
    readonly origin?: Origin,
  ) {
    super(input as Request, init)
    this.wireMethod = init?.method ?? (typeof input === 'string' ? 'GET' : input.method)
    if (typeof input !== 'string') this.source = input
    else if (init instanceof Request) this.source = init
  }

  // @ts-expect-error: a property of Request's type, an accessor of its prototype: the route's method is read here
  override get method(): string {
    return this.meant
  }

  /** Runs as `method` (an override read from its headers), or is refused with `refusal`. */
  mean(method: string, refusal?: ApiError): this {
    this.meant = method
    this.refusal ??= refusal
    return this
  }
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/

export function requestIdOf(request: Request): string {
  const given = request.headers.get('x-request-id')
  return given !== null && SANE_REQUEST_ID.test(given) ? given : newRequestId()
}

/**
 * The request as routing must see it. HEAD is GET without the body (the same handler and
 * permission; ./answers.ts drops the body). A POST carrying X-HTTP-Method-Override runs as LOOKUP,
 * SYNC or CLEAR, where the URL takes one of them or POST (elsewhere the POST itself is refused with
 * 405); any other value is a 400, and so is the header on another method than POST where the URL
 * serves that method. The URL is found first: an override to no resource is a 404.
 */
export function effectiveRequest(deps: Pick<HttpDeps, 'routes'>, given: Request): Request {
  // Bun.serve gives the bare target for a request without Host (HTTP/1.0): the app routes absolute URLs
  const request =
    given.url.charCodeAt(0) === 47 /* / */
      ? new CallRequest(`http://localhost${given.url}`, given, given.method)
      : given
  const overridden = withOverride(deps, request)
  if (overridden.method !== 'HEAD') return overridden
  return (calledOf(overridden) ?? new CallRequest(overridden, undefined, 'HEAD')).mean('GET')
}

function withOverride(deps: Pick<HttpDeps, 'routes'>, request: Request): Request {
  const override = request.headers.get(OVERRIDE_HEADER)
  if (override === null) return request
  const module = deps.routes.match(rawPathOf(request.url))?.entry.module
  if (!module) return request
  const wire = wireMethod(request)
  const as = (method: string, refusal?: ApiError) =>
    (calledOf(request) ?? new CallRequest(request, undefined, wire)).mean(method, refusal)
  if (wire !== 'POST') {
    const served = module[(wire === 'HEAD' && !module.HEAD ? 'GET' : wire) as Method]
    const refusal = badRequest('X-HTTP-Method-Override is accepted only with POST', 'X-HTTP-Method-Override')
    return served ? as(wire, refusal) : request
  }
  if (!module.POST && ![...OVERRIDE_METHODS].some((m) => module[m as Method])) return request
  const method = override.trim().toUpperCase()
  if (OVERRIDE_METHODS.has(method)) return as(method)
  const message = `X-HTTP-Method-Override must be LOOKUP, SYNC or CLEAR, got ${JSON.stringify(override)}`
  return as(wire, badRequest(message, 'X-HTTP-Method-Override'))
}

/** The methods a route file serves, as Allow lists them (GET brings HEAD). */
export function allowedMethods(module: DeclaredModule): string {
  const methods = (Object.keys(module) as Method[]).flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m]))
  const order = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'LOOKUP', 'SYNC', 'CLEAR']
  return order.filter((m) => methods.includes(m)).join(', ')
}

/** Whether this request gets a log line (./request-log.ts): decided at its start. */
export const logsRequest = (deps: Pick<HttpDeps, 'log' | 'config'>) =>
  deps.log.level !== 'error' &&
  deps.log.level !== 'warn' &&
  deps.log.level !== 'off' &&
  Math.random() < deps.config.logRequests

/** The call's Req, made at onRequest; a request refused before routing fails here (./errors.ts answers). */
export function startCall(deps: HttpDeps, native: Origin) {
  return (c: { request: Request; set: ResponseSet; req: Req }) => {
    const request = c.request
    const called = calledOf(request)
    const origin = called?.origin ?? native
    const req = new Req(deps, request, c.set, origin.requestId ?? requestIdOf(request), request.method, origin)
    c.req = req
    // asked now, while the socket is there: a client that aborts its upload is gone by the log line
    req.logged = logsRequest(deps)
    if (req.logged && req.origin.server) req.clientAddress
    if (called?.refusal) throw called.refusal
    // the gateway refuses these itself; Bun.serve (GATEWAY=off) puts them in the URL the path is cut from
    if (req.origin.server && !VALID_HOST.test(request.headers.get('host') ?? ''))
      throw badRequest('the Host header is not a host name or address', 'host')
  }
}

/** The method as the request travelled (POST for a LOOKUP sent with the override header, HEAD for a HEAD). */
export const wireMethod = (request: Request) => calledOf(request)?.wireMethod ?? request.method

/** A request the service made (a copy, a dispatched call) or the gateway handed in: it says what it knows. */
export function calledOf(request: Request): (Request & Called) | null {
  return request instanceof CallRequest || request instanceof InlineRequest ? (request as Request & Called) : null
}

/** What a request made by the service knows besides a Request's own parts. */
export interface Called {
  readonly wireMethod: string
  readonly origin?: Origin
  refusal?: ApiError
  mean(method: string, refusal?: ApiError): Request & Called
}
