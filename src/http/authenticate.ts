/**
 * Who is calling, and whether the route admits it. Over HTTP the caller is the session named by
 * `Authorization: Bearer <id>` or by the RSession cookie (a request carrying an Authorization
 * header is judged by that header alone). Any caller, HTTP or not, is then admitted the same way:
 * its domain must still exist and not be blocked, be of the route's kind, and one of its roles
 * must grant the route. A Bearer token that names no session may be an integration channel's token
 * (src/integration/tokens.ts): the request then acts as the channel, with the channel's roles.
 */
import { KvUnavailable } from '~storage/kv/kv'
import { type Ctx, sessionCtx } from '../context'
import { type ApiError, domainGone, forbidden, unauthorized } from '../errors'
import type { Req } from './req'
import type { Admission } from './route-declaration'
import { channelCtx } from '../integration/tokens'
import { type DomainInfo, grants } from '../identity/access'
import { recordFailure } from '../identity/brute-force'
import { cookieRules, crossSiteRefusal, sessionCookie } from './cookies'
import type { Session } from '../identity/sessions'

export interface Credential {
  kind: 'token' | 'cookie'
  id: string
}

/** The token when an Authorization header is present (even if malformed: ''), else the cookie. */
export function credentialOf(req: Req): Credential | null {
  const { token, cookie } = req.credentials()
  if (token !== null) return { kind: 'token', id: token }
  return cookie ? { kind: 'cookie', id: cookie } : null
}

/**
 * The live session a credential names, if its kind matches how it was presented. A credential
 * naming no live session counts as a failed sign-in for the brute-force filter.
 */
export async function sessionFor(req: Req, cred: Credential | null): Promise<Session | null> {
  if (!cred) return null
  const session = await liveSession(req, cred)
  if (!session) await recordFailure(req)
  return session
}

/** Synchronous when the session is cached (the hot path): no promise is made for it. */
function liveSession(req: Req, cred: Credential): Session | null | Promise<Session | null> {
  if (!cred.id) return null
  const found = req.deps.sessions.get(cred.id)
  return found instanceof Promise ? found.then((session) => ofKind(session, cred)) : ofKind(found, cred)
}

const ofKind = (session: Session | null, cred: Credential) => (session?.kind === cred.kind ? session : null)

/** Methods that change nothing: another site's page may make a browser send them with the cookie. */
const READS = new Set(['GET', 'HEAD', 'OPTIONS', 'LOOKUP'])

/**
 * The HTTP admission: the presented session becomes the context, which is then admitted; the
 * lifetime slides. A Bearer token naming no session may be an integration channel's local token:
 * the request then acts as the channel. Only a credential that is neither counts as a failure.
 */
export async function authenticate(req: Req, def: Admission): Promise<void> {
  const cred = credentialOf(req)
  const live = cred && liveSession(req, cred)
  const session = live instanceof Promise ? await live : live
  if (session) {
    if (cred!.kind === 'cookie' && !READS.has(req.method)) {
      const refused = crossSiteRefusal(req.deps.config, (name) => req.header(name))
      if (refused) throw refused
    }
    await admit(req, sessionCtx(req.deps, session, req.requestId), def)
    const sliding = slide(req, session)
    if (sliding) await sliding
    return
  }
  const channel =
    cred?.kind === 'token' && cred.id ? await channelCtx(req.deps, cred.id, req.clientAddress, req.requestId) : null
  if (channel) return admit(req, channel, def)
  if (cred) await recordFailure(req)
  throw unauthorized(cred ? 'session not found or expired' : 'authorization required')
}

/**
 * Admits a context to a route, or throws 401/403. A session's roles are read live here, so a
 * change to them applies to open sessions at once; other actors bring their roles with them.
 */
export async function admit(req: Req, ctx: Ctx, def: Admission): Promise<void> {
  const { access } = req.deps
  // a session's roles are those of its current domain: it acts nowhere else
  if (ctx.session && ctx.domain !== ctx.session.domainId) throw forbidden('a session acts in its current domain only')
  // long work in the domain has uncommitted rows that this call's reads would see: wait for its end
  const held = req.deps.longWork.gate(ctx.domain)
  if (held && !def.duringLongWork) await held
  // and long work that starts from now on waits for this call to end
  if (!def.duringLongWork) req.finisher = req.deps.longWork.enter(ctx.domain, ctx.requestId)
  // cached answers come without a promise, and are not awaited: an await costs a point read more than the lookup
  const info = access.domainInfo(ctx.domain)
  const domain = info instanceof Promise ? await info : info
  // a domain deleted and created again with the same id is not the session's
  const another = ctx.session?.domainCreated !== undefined && ctx.session.domainCreated !== domain?.created
  if (!domain || another) throw domainGone(ctx)
  const roleList = ctx.session ? access.sessionRoles(ctx.session) : ctx.roles
  const roles = roleList instanceof Promise ? await roleList : roleList
  const superuser = ctx.session ? ctx.session.homeIsMaster && roles.includes('admin') : ctx.actor.type === 'system'
  const refused = blockedFor(domain, superuser)
  if (refused) throw refused
  req.admit({ ...ctx, roles })
  if (def.domainKind === 'master' && !domain.isMaster)
    throw forbidden('this endpoint is served in the master domain only')
  if (def.domainKind === 'working' && domain.isMaster)
    throw forbidden('this endpoint is served in working domains only')
  const granting = def.access === 'permission' ? rolesGrant(req, ctx.domain, roles, req.method) : true
  if (!(granting instanceof Promise ? await granting : granting)) {
    const who = ctx.session ? 'session' : ctx.actor.type === 'integration' ? 'channel' : 'context'
    throw forbidden(`no role of this ${who} grants ${req.method} ${req.path}`)
  }
}

/** A blocked domain refuses everyone but master administrators (and the service itself): the 403, or null. */
export function blockedFor(domain: DomainInfo, superuser: boolean): ApiError | null {
  return domain.blocked && !superuser ? forbidden(`domain ${domain.name} is blocked`) : null
}

/** Whether one of the roles (of `domain`) grants the method on the call's path: what `permission` routes require. */
export function rolesGrant(
  req: Req,
  domain: string,
  roles: readonly string[],
  method: string,
): boolean | Promise<boolean> {
  if (roles.includes('admin')) return true
  const byRole = req.deps.access.grantsOf(domain)
  return byRole instanceof Promise
    ? byRole.then((b) => grants(roles, b, method, req.path))
    : grants(roles, byRole, method, req.path)
}

/** Sliding lifetime: extend when due (a promise then), and re-issue the cookie of a cookie session. */
function slide(req: Req, session: Session): Promise<void> | undefined {
  if (req.deps.clock.now() - session.touched < req.deps.sessions.slideMs) return undefined
  return extend(req, session)
}

async function extend(req: Req, session: Session): Promise<void> {
  const sessions = req.deps.sessions
  // while the store is down the lifetime is not extended now: a later request extends it
  const touched = await sessions.touch(session).catch((err) => {
    if (err instanceof KvUnavailable) return false
    throw err
  })
  if (touched && session.kind === 'cookie') {
    sessionCookie(req, session.id, session.touched + sessions.idleMs, cookieRules(req.deps.config))
  }
}
