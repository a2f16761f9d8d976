/**
 * Admission, the `admit` macro every route carries (its Admission: who may call it, in which kind of
 * domain). It runs at Elysia's transform step, after routing and before validation, so a caller who
 * may not call a route learns nothing of what it takes. HTTP callers are authenticated from their
 * credentials (src/identity/authenticate.ts); a call dispatched for a known actor (a websocket frame,
 * a script's data call) is admitted as that actor, whose session must still be alive.
 */
import { sessionCtx } from '../../context'
import { unauthorized } from '../../errors'
import { admit, authenticate } from '../../identity/authenticate'
import { parseQuery } from '../query-string'
import type { Req } from '../req'
import type { Admission } from '../route'
import { NO_BODY } from '../route-base'

/** The query of a URL without one: shared, never changed. */
const NO_QUERY: Record<string, string | undefined> = Object.freeze(Object.create(null))

interface Routed {
  req: Req
  route: string
  query: Record<string, unknown>
  body: unknown
}

/**
 * The transform step of a route: the call learns its route and its query (read as URLSearchParams
 * reads it, the first of a repeated parameter counting: what the route's query schema then
 * validates), then the caller is admitted.
 */
export function admitCall(rule: Admission) {
  // async, so that Elysia awaits it: it tells a hook to await by the kind of function it is
  return async (c: Routed): Promise<void> => {
    const req = c.req
    req.route = c.route
    const url = req.request.url
    const q = url.indexOf('?')
    c.query = req.query = q < 0 ? NO_QUERY : parseQuery(url.slice(q + 1))
    if (c.body === NO_BODY) c.body = undefined
    if (rule.access === 'public') return
    await (req.origin.ctx ? admitKnown(req, rule) : authenticate(req, rule))
  }
}

/**
 * A call for an actor that already exists acts as that actor does now: the session behind it must
 * still be alive, its current domain is where the call acts, its roles are read live, and each call
 * extends its lifetime. A logout or an ended account stops its dispatched calls at once.
 */
async function admitKnown(req: Req, rule: Admission): Promise<void> {
  const ctx = req.origin.ctx!
  const session = ctx.session
  if (!session) return admit(req, ctx, rule)
  const { sessions } = req.deps
  const live = await sessions.get(session.id)
  if (!live) throw unauthorized('the session of this context has ended')
  await admit(req, { ...sessionCtx(req.deps, live, ctx.requestId), via: ctx.via }, rule)
  await sessions.touch(live)
}
