/**
 * Who is calling: the session named by `Authorization: Bearer <id>` or by the RSession cookie, and
 * whether the route admits it (domain kind, then role). A request carrying an Authorization header
 * is judged by that header alone.
 */
import { forbidden, unauthorized } from '../http/errors'
import type { Req } from '../http/req'
import type { RouteDef } from '../http/route'
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

/** The live session a credential names, if its kind matches how it was presented. */
export async function sessionFor(req: Req, cred: Credential | null): Promise<Session | null> {
  if (!cred || !cred.id) return null
  const session = await req.deps.sessions.get(cred.id)
  return session && session.kind === cred.kind ? session : null
}

export async function authenticate(req: Req, def: RouteDef): Promise<void> {
  const cred = credentialOf(req)
  const session = await sessionFor(req, cred)
  if (!session) throw unauthorized(cred ? 'session not found or expired' : 'authorization required')
  req.session = session
  checkDomainKind(session, def)
  if (def.access === 'permission' && !permits(session, req.method, req.route)) {
    throw forbidden(`no role of this session grants ${req.method} ${req.route}`)
  }
  await slide(req, session)
}

function checkDomainKind(session: Session, def: RouteDef): void {
  if (def.domainKind === 'master' && !session.isMaster) throw forbidden('this endpoint is served in the master domain only')
  if (def.domainKind === 'working' && session.isMaster) throw forbidden('this endpoint is served in working domains only')
}

/** `admin` grants everything in its domain. */
export function permits(session: Session, _method: string, _route: string): boolean {
  return session.roles.includes('admin')
}

/** Sliding lifetime: extend when due, and re-issue the cookie of a cookie session. */
async function slide(req: Req, session: Session): Promise<void> {
  const sessions = req.deps.sessions
  if (req.deps.clock.now() - session.touched < sessions.slideMs) return
  if ((await sessions.touch(session)) && session.kind === 'cookie') {
    req.cookies.push(sessionCookie(session.id, session.touched + sessions.idleMs, req.deps.config.publicUrl.startsWith('https:')))
  }
}
