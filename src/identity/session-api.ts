/** /rest/v1/iam/sessions: sign in, read, switch and end the current session (SPEC "Sessions"). */
import * as v from 'valibot'
import { validate } from '../entities/validate'
import { badRequest, forbidden, unauthorized } from '../errors'
import type { Req } from '../http/req'
import { NoQuery } from '../http/query-schemas'
import { SMALL_BODY } from '../http/body-limits'
import { defineRoute } from '../http/route'
import { answer, NoContent } from '../http/schemas'
import { Uuid } from '../values'
import { domainCreated, findDomainByName, isMasterDomain } from '../directory/domains'
import { credentialOf, sessionFor } from '../http/authenticate'
import { beginSignIn } from './brute-force'
import { cookieRules, deletedSessionCookie, sessionCookie } from '../http/cookies'
import { currentSession, reachableDomains } from './current'
import { checkCredentials, checkToken, startSession } from './login'
import type { NewSession, Session } from './sessions'

const field = v.pipe(v.string(), v.maxLength(1024))
const LoginBody = v.strictObject({
  domain: v.optional(field),
  login: v.optional(field),
  pwd: v.optional(field),
  session_type: v.optional(
    v.picklist(['cookie', 'token', 'token_clone_cookie'], 'must be cookie, token or token_clone_cookie'),
  ),
  token: v.optional(field),
})

const secureCookies = (req: Req) => cookieRules(req.deps.config)

function cookieFor(req: Req, s: Session): void {
  sessionCookie(req, s.id, s.touched + req.deps.sessions.idleMs, secureCookies(req))
}

async function cookieSession(req: Req): Promise<Session | null> {
  const id = req.credentials().cookie
  return sessionFor(req, id ? { kind: 'cookie', id } : null)
}

/** A token session's answer to a sign-in. */
const SessionToken = v.object({
  session_token: v.pipe(v.string(), v.description('the session id: send it as Authorization: Bearer <token>')),
})

const CurrentSessionDoc = v.strictObject({
  domain: v.string(),
  domain_is_master: v.boolean(),
  domains: v.array(v.strictObject({ domain: v.string(), is_master: v.boolean() })),
  login: v.string(),
  name: v.string(),
  name_login: v.string(),
  roles: v.array(v.string()),
  solution: v.string(),
  tags: v.array(v.string()),
  user_id: Uuid,
  webapps: v.array(v.record(v.string(), v.unknown())),
})

export const createSession = defineRoute({
  access: 'public',
  summary: 'Sign in',
  description:
    'With domain, login and pwd (or a one-time `token`). `session_type` cookie (the default) answers 204 with ' +
    'the RSession cookie; token answers 200 with the session token; token_clone_cookie makes a token session ' +
    'of the RSession cookie presented. Five failed sign-ins of an address within three minutes ban it (429).',
  query: NoQuery,
  body: v.optional(LoginBody),
  maxBody: SMALL_BODY,
  response: { 200: answer(SessionToken), 204: NoContent },
  async handle(req) {
    const attempt = await beginSignIn(req) // a banned address learns nothing more
    let wrongCredentials = false
    try {
      const body = validate(LoginBody, req.body ?? {})
      const type = body.session_type ?? 'cookie'
      const kind = type === 'cookie' ? 'cookie' : 'token'
      let data: NewSession | null
      if (body.token !== undefined) {
        data = body.token ? await checkToken(req.deps, body.token, kind) : null
        if (!data) {
          wrongCredentials = true // counted by the brute-force filter like a wrong password
          req.deps.log.warn('sign-in failed', { reason: 'token not accepted', client: req.clientAddress })
          throw unauthorized('the token was not accepted')
        }
      } else if (type === 'token_clone_cookie') {
        const source = await cookieSession(req)
        if (!source) throw unauthorized('token_clone_cookie needs a valid RSession cookie')
        const { id: _id, created: _c, touched: _t, ...copy } = source
        data = { ...copy, kind: 'token' }
      } else {
        for (const name of ['domain', 'login', 'pwd'] as const)
          if (!body[name]) throw badRequest(`${name} is required`, name)
        data = await checkCredentials(req.deps, { domain: body.domain!, login: body.login!, pwd: body.pwd! }, kind)
        if (!data) {
          wrongCredentials = true
          // a security event: who tried which account from where (never the password)
          req.deps.log.warn('sign-in failed', {
            reason: 'wrong domain, login or password',
            domain: body.domain,
            login: body.login,
            client: req.clientAddress,
          })
          throw unauthorized('invalid domain, login or password')
        }
      }
      const session = await startSession(req.deps, data)
      if (!session) throw unauthorized('the account changed while signing in')
      if (kind === 'token') return { session_token: session.id }
      cookieFor(req, session)
      return undefined
    } finally {
      await (wrongCredentials ? attempt.failed() : attempt.cancel())
    }
  },
})

/** GET current: a valid bearer token first, otherwise the cookie (spec rule 3). */
export const getCurrentSession = defineRoute({
  access: 'public',
  summary: 'Read the current session',
  description: 'The session of the bearer token, else of the RSession cookie: who, in which domain, with which roles.',
  query: NoQuery,
  response: { 200: answer(CurrentSessionDoc) },
  async handle(req) {
    const token = req.credentials().token
    const session = (token ? await sessionFor(req, { kind: 'token', id: token }) : null) ?? (await cookieSession(req))
    if (!session) throw unauthorized('no current session')
    return currentSession(req.deps, session)
  },
})

/** The session PATCH and DELETE act on: the token alone when an Authorization header is present (rules 4, 5). */
async function targetSession(req: Req): Promise<Session> {
  const session = await sessionFor(req, credentialOf(req))
  if (!session) throw unauthorized('no current session')
  return session
}

const SwitchBody = v.strictObject({ domain: v.pipe(v.string(), v.minLength(1, 'must not be empty')) })

export const switchDomain = defineRoute({
  access: 'public',
  summary: 'Switch the session into another domain',
  description:
    'Into one of the `domains` of the current session. A cookie session gets a new cookie (the old session ends); ' +
    'a token session keeps its token, and so does a cookie session switched by a websocket `rest` frame.',
  query: NoQuery,
  body: SwitchBody,
  maxBody: SMALL_BODY,
  response: { 204: NoContent },
  async handle(req) {
    const session = await targetSession(req)
    const { domain: name } = req.body
    const target = (await reachableDomains(req.deps, session)).find((d) => d.domain === name.toLowerCase())
    if (!target) throw forbidden(`domain ${name} is not among the domains of this session`)
    const domain = await findDomainByName(req.deps, target.domain)
    if (!domain) throw forbidden(`domain ${name} no longer exists`)
    const place = {
      domainId: domain.id,
      domainName: domain.name,
      isMaster: isMasterDomain(domain),
      domainCreated: domainCreated(domain),
    }
    // a websocket frame cannot hand a new cookie to the browser: its cookie session switches in place,
    // so the frame ends no session it did not ask to end
    if (session.kind === 'token' || req.origin.ctx?.via === 'websocket') {
      // the client keeps its token (or cookie); only what it names changes
      if (!(await req.deps.sessions.update(session.id, place))) throw unauthorized('no current session')
      return undefined
    }
    const { id: _id, created: _c, touched: _t, ...rest } = session
    const next = await startSession(req.deps, { ...rest, ...place })
    if (!next) throw unauthorized('the account changed while switching domain')
    await req.deps.sessions.destroy(session.id)
    cookieFor(req, next)
    return undefined
  },
})

export const deleteCurrentSession = defineRoute({
  access: 'public',
  summary: 'Sign out',
  description: 'Ends the session of the bearer token, else of the RSession cookie (whose cookie is then deleted).',
  query: NoQuery,
  response: { 204: NoContent },
  async handle(req) {
    const session = await targetSession(req)
    await req.deps.sessions.destroy(session.id)
    if (session.kind === 'cookie') deletedSessionCookie(req, secureCookies(req))
    return undefined
  },
})
