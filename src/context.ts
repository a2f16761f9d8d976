/**
 * The actor context: who acts, in which domain, with which roles, for which request. Every domain
 * function takes one. HTTP builds it from the session a request presents; a websocket frame, a
 * script or a worker builds it without any request. Acting in another domain is a new context.
 */
import type { InitiatorType, WriteContext } from '~storage/journal'
import { isoTime } from './clock'
import type { Deps } from './deps'
import type { Session } from './identity/sessions'
import { NIL_UUID } from './ids'

/** Who makes a change, as the journal and events record it. */
export type ActorType = 'user' | 'integration' | 'script' | 'system'

export interface Actor {
  type: ActorType
  id: string
  name: string
}

export interface Ctx {
  readonly deps: Deps
  /** The tenant every storage call is scoped to. */
  readonly domain: string
  readonly actor: Actor
  /**
   * Roles of the actor in `domain`. For a session they are read live when the context is admitted
   * to a route (the admitted context carries them); other actors bring theirs.
   */
  readonly roles: readonly string[]
  /** The signed-in session behind the actor, when there is one. */
  readonly session?: Session
  /** Carried into logs and journal records. */
  readonly requestId: string
  /** The transport a user acts through, when not HTTP (a websocket frame): the journal's initiator. */
  readonly via?: 'websocket'
  /** An integration channel's user (its `opts.userid`): whom it acts as where an endpoint needs a user. */
  readonly actingUser?: string
}

/** The service acting on its own (first start, expiry sweeps, background orders). */
export const SYSTEM_ACTOR: Actor = { type: 'system', id: NIL_UUID, name: 'system' }

export function systemCtx(deps: Deps, domain: string, requestId = 'system', actor: Actor = SYSTEM_ACTOR): Ctx {
  return { deps, domain, actor, roles: ['admin'], requestId }
}

/** A signed-in user in the session's current domain; roles are filled in when the context is admitted. */
export function sessionCtx(deps: Deps, session: Session, requestId: string, roles: readonly string[] = []): Ctx {
  return {
    deps,
    domain: session.domainId,
    actor: { type: 'user', id: session.userId, name: session.name || session.login },
    roles,
    session,
    requestId,
  }
}

/** What an integration channel's token authorizes: the channel, with its roles, acting as its user. */
export function integrationCtx(
  deps: Deps,
  domain: string,
  channel: { id: string; code: string; roles: readonly string[]; userid?: string },
  requestId: string,
): Ctx {
  const actor: Actor = { type: 'integration', id: channel.id, name: `channel ${channel.code}` }
  const user = channel.userid && channel.userid !== NIL_UUID ? { actingUser: channel.userid } : {}
  return { deps, domain, actor, roles: channel.roles, requestId, ...user }
}

/** A user acting without a session (the second step of a mailed link): the account itself. */
export function accountCtx(deps: Deps, domain: string, user: { id: string; name: string }, requestId: string): Ctx {
  return { deps, domain, actor: { type: 'user', ...user }, roles: [], requestId }
}

/** The same actor in another domain (a user's own account lives in its home domain). */
export const inDomain = (ctx: Ctx, domain: string): Ctx => ({ ...ctx, domain })

/** Who writes, where and when: what the repository records in the journal. */
export function writeContext(ctx: Ctx, now = ctx.deps.clock.now()): WriteContext {
  const initiator: InitiatorType = ctx.via ?? ctx.actor.type
  const { id, name } = ctx.actor
  return { domain: ctx.domain, now: isoTime(now), actor: { id, name }, initiator, requestId: ctx.requestId }
}
