/**
 * One call of a route, as its handler sees it: the route's parameters, the body, the admitted actor
 * context, and response extras. The transport behind it (an HTTP request, a websocket frame, a
 * script's data call) is hidden behind a `RequestSource`, so one handler serves them all.
 */
import type { Ctx } from '../context'
import type { Deps } from '../deps'
import { badRequest, unauthorized } from '../errors'
import type { Session } from '../identity/sessions'
import { isUuid } from '../ids'

/** The credential a call presents: a bearer token ('' when the header is malformed), a session cookie. */
export interface Presented {
  token: string | null
  cookie: string | null
}

/** What a transport provides to a call. */
export interface RequestSource {
  /** The body parsed as JSON (undefined when empty), read within the configured size limit. */
  json(): Promise<unknown>
  /** The body as bytes, read within the configured size limit. */
  bytes(): Promise<Uint8Array>
  /**
   * The body as a stream, for bodies too large to hold (uploads to disk), within `limit` bytes: the
   * stream fails with a 413 beyond it. Calls without HTTP stream the bytes they carry.
   */
  stream(limit: number): ReadableStream<Uint8Array>
  header(name: string): string | null
  clientAddress(): string
  credentials(): Presented
}

export interface CallTarget {
  /** The effective method (LOOKUP for POST + X-HTTP-Method-Override: LOOKUP). */
  method: string
  /** The URL pattern of the route (`/rest/v1/domain/projects/:id`). */
  route: string
  /** The URL path as sent (percent-encoded). */
  rawPath: string
  params: Record<string, string>
  query: Record<string, string | undefined>
  requestId: string
}

export class Req {
  private admitted?: Ctx
  private decodedPath?: string
  private address?: string
  /** Extra response headers; Set-Cookie values go to `cookies`. */
  readonly headers: Record<string, string> = {}
  readonly cookies: string[] = []
  readonly method: string
  readonly route: string
  readonly params: Record<string, string>
  readonly query: Record<string, string | undefined>
  readonly requestId: string

  constructor(
    readonly deps: Deps,
    private readonly target: CallTarget,
    private readonly source: RequestSource,
  ) {
    this.method = target.method
    this.route = target.route
    this.params = target.params
    this.query = target.query
    this.requestId = target.requestId
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

  /** What ends with the call, whatever its outcome (run by runRoute). */
  readonly finishers: (() => void)[] = []

  /** The signed-in session, for handlers that act on it. */
  get session(): Session {
    const s = this.ctx.session
    if (!s) throw unauthorized('this endpoint needs a signed-in user')
    return s
  }

  /** The URL path, decoded; a 400 when it is not valid percent-encoding. */
  get path(): string {
    return (this.decodedPath ??= decodePath(this.target.rawPath))
  }

  get clientAddress(): string {
    return (this.address ??= this.source.clientAddress())
  }

  header(name: string): string | null {
    return this.source.header(name)
  }

  credentials(): Presented {
    return this.source.credentials()
  }

  json(): Promise<unknown> {
    return this.source.json()
  }

  bytes(): Promise<Uint8Array> {
    return this.source.bytes()
  }

  /** The body as a stream within `limit` bytes (a route's own limit, such as FILES_MAX_BYTES); read it once. */
  stream(limit: number): ReadableStream<Uint8Array> {
    return this.source.stream(limit)
  }

  /** A path parameter that must be a UUID; returned in lower case. */
  uuidParam(name: string): string {
    const value = this.params[name]
    if (!isUuid(value)) throw badRequest(`${name} in the path must be a UUID, got ${JSON.stringify(value ?? '')}`, name)
    return value.toLowerCase()
  }
}

function decodePath(raw: string): string {
  if (raw.indexOf('%') < 0) return raw
  try {
    return decodeURI(raw)
  } catch {
    throw badRequest('the URL path is not valid percent-encoding', 'path')
  }
}
