/** One request as a handler sees it: parameters, body, the signed-in session, response extras. */
import type { WriteContext } from '~storage/journal'
import { isoTime } from '../clock'
import type { Deps } from '../deps'
import type { Session } from '../identity/sessions'
import { readJsonBody } from './body'
import { badRequest, unauthorized } from './errors'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
export const NIL_UUID = '00000000-0000-0000-0000-000000000000'

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value)
}

export class Req {
  session: Session | null = null
  /** Roles of the session in its current domain, read live when the request was authenticated. */
  roles: string[] = []
  /** Extra response headers; Set-Cookie values go to `cookies`. */
  readonly headers: Record<string, string> = {}
  readonly cookies: string[] = []

  constructor(
    readonly deps: Deps,
    readonly request: Request,
    /** The effective method (LOOKUP for POST + X-HTTP-Method-Override: LOOKUP). */
    readonly method: string,
    /** The URL pattern of the route (`/rest/v1/domain/projects/:id`). */
    readonly route: string,
    readonly params: Record<string, string>,
    readonly query: Record<string, string | undefined>,
    readonly requestId: string,
    /** Looked up only when asked for: finding the peer costs a system call. */
    private readonly peerAddress: () => string,
  ) {}

  private address?: string
  get clientAddress(): string {
    return (this.address ??= this.peerAddress())
  }

  /** The URL path, without the query string. */
  get path(): string {
    const url = this.request.url
    const start = url.indexOf('/', url.indexOf('//') + 2)
    const q = url.indexOf('?', start)
    try {
      return decodeURI(url.slice(start, q < 0 ? undefined : q))
    } catch {
      throw badRequest('the URL path is not valid percent-encoding', 'path')
    }
  }

  header(name: string): string | null {
    return this.request.headers.get(name)
  }

  /** The parsed JSON body (undefined when empty), read within the configured size limit. */
  json(): Promise<unknown> {
    return readJsonBody(this.request, this.deps.config.maxBodyBytes)
  }

  /** The session, for handlers of routes that require one. */
  get signedIn(): Session {
    if (!this.session) throw unauthorized()
    return this.session
  }

  private domainOverride?: string

  /** The tenant every storage call of this request is scoped to. */
  get domain(): string {
    return this.domainOverride ?? this.signedIn.domainId
  }

  /** The same request acting in another domain (a user's own account lives in its home domain). */
  inDomain(domainId: string): Req {
    const view = Object.create(this) as Req
    view.domainOverride = domainId
    return view
  }

  /** A path parameter that must be a UUID; returned in lower case. */
  uuidParam(name: string): string {
    const value = this.params[name]
    if (!isUuid(value)) throw badRequest(`${name} in the path must be a UUID, got ${JSON.stringify(value ?? '')}`, name)
    return value.toLowerCase()
  }

  /** Who writes, where and when: what the repository records in the journal. */
  writeContext(): WriteContext {
    const s = this.signedIn
    return {
      domain: this.domain,
      now: isoTime(this.deps.clock.now()),
      actor: { id: s.userId, name: s.name || s.login },
      requestId: this.requestId,
    }
  }
}
