/**
 * The subscribers a push reaches, as they are now: ./fanout.ts asks for them once per topic it
 * offers an event to. A session and its live roles are looked up once for all its sockets there (at
 * 10,000 sockets of one session, looked up per socket they put the first socket's frame 15-17 ms
 * after the commit, 8-10 ms once), not across topics: an offer may wait, and a session's end or a role
 * change between two topics is then seen by the second. A socket's context is reused while its
 * session and roles are the same; a session that ended or moved to another domain gives null, and
 * its sockets are rechecked (closed) once.
 */
import { type Ctx, sessionCtx } from '../context'
import type { Deps } from '../deps'
import type { Session } from '../identity/sessions'
import type { ContextOf, Socket } from './fanout'

/** A socket's session as a push found it, with its live roles. */
type SessionNow = { session: Session | null; roles: readonly string[]; rechecked?: boolean }

/**
 * What gives the subscribers of one topic's offer. `channelNow`: a channel socket's context (null:
 * it is closed); `recheck`: a session ended or moved, its sockets are looked at again.
 */
export function sessionContexts(
  deps: Deps,
  channelNow: (socket: Socket) => Promise<Ctx | null>,
  recheck: (sessionId: string) => void,
): ContextOf {
  const sessions = new Map<string, SessionNow | Promise<SessionNow>>()
  const contextOf = (socket: Socket, now: SessionNow): Ctx | null => {
    const { session, roles } = now
    if (!session || session.domainId !== socket.domain) {
      if (!now.rechecked) recheck(socket.sessionId)
      now.rechecked = true
      return null
    }
    if (socket.ctx?.session !== session || socket.ctx.roles !== roles)
      socket.ctx = sessionCtx(deps, session, `ws-${socket.id}`, roles)
    return socket.ctx
  }
  return (socket) => {
    if (socket.channelToken) return channelNow(socket)
    let now = sessions.get(socket.sessionId)
    if (!now) {
      now = sessionNow(deps, socket.sessionId)
      sessions.set(socket.sessionId, now)
    }
    return now instanceof Promise ? now.then((n) => contextOf(socket, n)) : contextOf(socket, now)
  }
}

/** A session as it is now, with its live roles (null: it ended). */
function sessionNow(deps: Pick<Deps, 'sessions' | 'access'>, id: string): SessionNow | Promise<SessionNow> {
  const withRoles = (session: Session | null): SessionNow | Promise<SessionNow> => {
    if (!session) return { session: null, roles: [] }
    const roles = deps.access.sessionRoles(session)
    return roles instanceof Promise ? roles.then((r) => ({ session, roles: r })) : { session, roles }
  }
  const session = deps.sessions.get(id)
  return session instanceof Promise ? session.then(withRoles) : withRoles(session)
}
