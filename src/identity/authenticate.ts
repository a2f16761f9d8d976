/**
 * Who is calling: the session named by `Authorization: Bearer <id>` or by the RSession cookie, and
 * whether the route admits it: the session's domain must still exist (and not be blocked), be of
 * the route's kind, and one of the session's roles must grant the route. A request carrying an
 * Authorization header is judged by that header alone.
 */
import { forbidden, unauthorized } from '../http/errors'
import type { Req } from '../http/req'
import type { RouteDef } from '../http/route'
import { grants } from './access'
import { recordFailure } from './brute-force'
import { readCookie, SESSION_COOKIE, sessionCookie } from './cookies'
import type { Session } from './sessions'

export interface Credential {
  kind: 'token' | 'cookie'
  id: string
}

export function bearerToken(req: Req): string | null {
  const auth = req.header('authorization')
  if (auth === null) return null
  return auth.startsWith('Bearer ') ? auth.slice(7).trim() || null : ''
}

/** The token when an Authorization header is present (even if malformed: ''), else the cookie. */
export function credentialOf(req: Req): Credential | null {
  const token = bearerToken(req)
  if (token !== null) return { kind: 'token', id: token }
  const cookie = readCookie(req.header('cookie'), SESSION_COOKIE)
  return cookie ? { kind: 'cookie', id: cookie } : null
}

/**
 * The live session a credential names, if its kind matches how it was presented. A credential
 * naming no live session counts as a failed sign-in for the brute-force filter.
 */
export async function sessionFor(req: Req, cred: Credential | null): Promise<Session | null> {
  if (!cred) return null
  const session = cred.id ? await req.deps.sessions.get(cred.id) : null
  if (session && session.kind === cred.kind) return session
  await recordFailure(req)
  return null
}

export async function authenticate(req: Req, def: RouteDef): Promise<void> {
  const cred = credentialOf(req)
  const session = await sessionFor(req, cred)
  if (!session) throw unauthorized(cred ? 'session not found or expired' : 'authorization required')
  const { access } = req.deps
  const domain = await access.domainInfo(session.domainId)
  if (!domain) throw unauthorized('the domain of this session no longer exists')
  const roles = await access.sessionRoles(session)
  if (domain.blocked && !(session.homeIsMaster && roles.includes('admin')))
    throw forbidden(`domain ${domain.name} is blocked`)
  req.session = session
  req.roles = roles
  if (def.domainKind === 'master' && !domain.isMaster)
    throw forbidden('this endpoint is served in the master domain only')
  if (def.domainKind === 'working' && domain.isMaster)
    throw forbidden('this endpoint is served in working domains only')
  if (def.access === 'permission' && !roles.includes('admin')) {
    if (!grants(roles, await access.grantsOf(session.domainId), req.method, req.path)) {
      throw forbidden(`no role of this session grants ${req.method} ${req.path}`)
    }
  }
  await slide(req, session)
}

/** Sliding lifetime: extend when due, and re-issue the cookie of a cookie session. */
async function slide(req: Req, session: Session): Promise<void> {
  const sessions = req.deps.sessions
  if (req.deps.clock.now() - session.touched < sessions.slideMs) return
  if ((await sessions.touch(session)) && session.kind === 'cookie') {
    req.cookies.push(
      sessionCookie(session.id, session.touched + sessions.idleMs, req.deps.config.publicUrl.startsWith('https:')),
    )
  }
}
