/**
 * Admission, the `admit` macro every route carries (its Admission: who may call it, in which kind of
 * domain, and the schemas of its path parameters and query). It runs at Elysia's transform step,
 * after routing and before the body is validated, so a caller who may not call a route learns
 * nothing of what it takes. HTTP callers are authenticated from their credentials
 * (src/http/authenticate.ts); a call dispatched for a known actor (a websocket frame, a script's
 * data call) is admitted as that actor, whose session must still be alive. Then the path's
 * parameters and the query are validated here, with the route's schemas: the query as
 * URLSearchParams reads it (Elysia's reading splits commas and parses JSON-looking values, which
 * changes what `mask` and `filter` say), and without Elysia's validator of a Standard Schema, whose
 * promises and copies made a point read a fifth costlier under load (measured).
 */
import * as v from 'valibot'
import { sessionCtx } from '../../context'
import { unauthorized } from '../../errors'
import { admit, authenticate } from '../authenticate'
import { NO_BODY } from '../body'
import { parseQuery } from '../query-string'
import type { Req } from '../req'
import type { Admission } from '../route-declaration'
import { schemaRefusal } from './errors'

/** The query of a URL without one: shared, never changed. */
const NO_QUERY: Record<string, string | undefined> = Object.freeze(Object.create(null))

interface Routed {
  req: Req
  route: string
  params: Record<string, string>
  body: unknown
}

/** Query schemas that take an empty query as it is (asked once each): most calls have none. */
const takesNoQuery = new WeakMap<v.GenericSchema, boolean>()

/** What a route's schema makes of a part of the call; a 400 naming the field when it refuses it. */
function checked(schema: v.GenericSchema | undefined, value: unknown, part: 'params' | 'query'): unknown {
  if (!schema) return value
  if (value === NO_QUERY) {
    let empty = takesNoQuery.get(schema)
    if (empty === undefined) {
      empty = v.safeParse(schema, {}).success
      takesNoQuery.set(schema, empty)
    }
    if (empty) return NO_QUERY
  }
  const result = v.safeParse(schema, value)
  if (result.success) return result.output
  throw schemaRefusal(part, result.issues[0])
}

/** The transform step of a route: the call learns its route, the caller is admitted, the path and query checked. */
export function admitCall(rule: Admission) {
  // async, so that Elysia awaits it: it tells a hook to await by the kind of function it is
  return async (c: Routed): Promise<void> => {
    const req = c.req
    req.route = c.route
    if (c.body === NO_BODY) c.body = undefined
    if (rule.access !== 'public') await (req.origin.ctx ? admitKnown(req, rule) : authenticate(req, rule))
    req.params = checked(rule.params, c.params, 'params')
    const url = req.request.url
    const q = url.indexOf('?')
    req.query = checked(rule.query, q < 0 ? NO_QUERY : parseQuery(url.slice(q + 1)), 'query')
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
