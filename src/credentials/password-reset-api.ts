/**
 * POST /rest/v1/iam/pwd_reset_requests and PATCH .../<id>. One step for a signed-in user
 * (`{current_pwd, new_pwd}`), or two steps for anyone: `{key, domain?}` mails a link holding a
 * request id (valid one hour), and `{pwd}` on that id sets the password.
 */
import * as v from 'valibot'
import { type Doc, isPlainObject, str } from '~storage/doc'
import { accountCtx, inDomain, sessionCtx, systemCtx } from '../context'
import { findDomainByName } from '../directory/domains'
import { findAccount, findAccountsByEmail, users } from '../directory/users'
import { ApiError, fieldInvalid, unauthorized } from '../errors'
import type { Req } from '../http/req'
import { beginSignIn } from '../identity/brute-force'
import { NoQuery } from '../http/query-schemas'
import { SMALL_BODY } from '../http/body-limits'
import { defineRoute } from '../http/route'
import { checkedByHandler, errors, IdParams } from '../http/schemas'
import { credentialOf, sessionFor } from '../http/authenticate'
import { verifyPassword } from '../identity/passwords'
import { resetPasswordMail } from '../mail/templates'
import { DoneAnswer, DoneForAccountAnswer, FIELD_ERRORS, LINK_ERRORS } from './credential-answers'
import {
  accountEnvelope,
  consume,
  emailOf,
  envelope,
  HOUR_MS,
  limitRate,
  openRequest,
  pageLink,
  pendingRequest,
  refuseWithExternalAuth,
  setPassword,
  validateFields,
} from './common'
import { textOrNull } from '~storage/columns'

export const RESET_LIFETIME_MS = HOUR_MS
const RESET_RATE_WINDOW_MS = 60_000

const OneStep = v.strictObject({
  current_pwd: v.pipe(v.string(), v.minLength(1, 'current_pwd is required')),
  new_pwd: v.pipe(v.string(), v.minLength(1, 'new_pwd is required')),
})
const TwoStep = v.strictObject({
  key: v.pipe(v.string(), v.trim(), v.minLength(1, 'key is required'), v.maxLength(254)),
  domain: v.optional(v.pipe(v.string(), v.trim(), v.toLowerCase())),
})
const NewPassword = v.strictObject({ pwd: v.string() })

export const createPasswordReset = defineRoute({
  access: 'public',
  summary: 'Change a password, or ask for a link to set one',
  description:
    'Signed in, `{current_pwd, new_pwd}` changes the password in one step and ends the other sessions of the ' +
    'account; a wrong current password counts as a failed sign-in. Otherwise `{key, domain?}` (a login with its ' +
    'domain, or an e-mail address) mails each matching account a link valid one hour; one request per minute ' +
    'per address (429). No matching account with an e-mail address is 412/1413; a refused field 412/1501.',
  query: NoQuery,
  body: checkedByHandler(v.union([OneStep, TwoStep])),
  maxBody: SMALL_BODY,
  response: { 200: DoneAnswer, ...FIELD_ERRORS, ...errors(409) },
  async handle(req) {
    await refuseWithExternalAuth(req.deps)
    const body = req.body
    if (isPlainObject(body) && ('current_pwd' in body || 'new_pwd' in body)) return changeOwnPassword(req, body)
    return requestReset(req, isPlainObject(body) ? body : undefined)
  },
})

/** One step: the signed-in user proves the current password and sets a new one; its other sessions end. */
async function changeOwnPassword(req: Req, body: Doc) {
  const session = await sessionFor(req, credentialOf(req))
  if (!session) throw unauthorized('changing a password in one step needs a session')
  const { current_pwd, new_pwd } = validateFields(OneStep, body)
  // a wrong current password is a failed sign-in, per address and per account: no unlimited guessing here
  const attempt = await beginSignIn(req, `${session.homeDomainId}:${session.userId}`)
  let right = false
  try {
    const stored = await req.deps.repo(users.table).getHidden(session.homeDomainId, session.userId)
    right = await verifyPassword(current_pwd, textOrNull(stored?.pwd_hash ?? null) ?? undefined)
  } finally {
    await (right ? attempt.cancel() : attempt.failed())
  }
  if (!right) throw fieldInvalid('current_pwd', 'the current password is wrong')
  // the account lives in its home domain; the session that changes it stays
  await setPassword(inDomain(sessionCtx(req.deps, session, req.requestId), session.homeDomainId), new_pwd).catch(
    (err) => {
      // the account's field is pwd; this request's is new_pwd
      if (err instanceof ApiError && err.details?.field === 'pwd')
        throw new ApiError(err.status, err.message, { ...err.details, field: 'new_pwd' }, err.code, err.headers)
      throw err
    },
  )
  return envelope('password changed')
}

/** Two steps, first: find the account by login (with domain) or e-mail, and mail it a link. */
async function requestReset(req: Req, body: Doc | undefined) {
  await limitRate(req.deps, 'password recovery', [req.clientAddress], RESET_RATE_WINDOW_MS)
  const { key, domain: domainName } = validateFields(TwoStep, body)
  const domain = domainName ? await findDomainByName(req.deps, domainName) : null
  if (domainName && !domain) throw fieldInvalid('domain', `there is no domain ${domainName}`)
  let accounts: { domain: string; doc: Doc }[] = []
  if (domain) {
    const byLogin = await findAccount(req.deps, domain.id, key)
    accounts = byLogin
      ? [{ domain: domain.id, doc: byLogin.doc }]
      : await findAccountsByEmail(req.deps, key.toLowerCase(), domain.id)
  } else if (key.includes('@')) {
    accounts = await findAccountsByEmail(req.deps, key.toLowerCase(), null)
  } else {
    throw fieldInvalid('domain', 'domain is required when the key is a login')
  }
  accounts = accounts.filter((a) => emailOf(a.doc))
  if (accounts.length === 0)
    throw new ApiError(412, 'no account with an e-mail address matches the key', { field: 'key' }, 1413)

  const now = req.deps.clock.now()
  for (const a of accounts) {
    const id = crypto.randomUUID()
    const info = await req.deps.access.domainInfo(a.domain)
    const login = str(a.doc, 'login')
    const mail = {
      domain: a.domain,
      recipient: emailOf(a.doc)!,
      ...resetPasswordMail(pageLink(req.deps, 'reset-password', id), login, info?.name ?? ''),
    }
    const userId = str(a.doc, 'id')
    const doc = { userId, login, email: mail.recipient, remoteIp: req.clientAddress }
    const expires = now + RESET_LIFETIME_MS
    const request = { id, kind: 'pwd_reset' as const, domain: a.domain, account: userId, expires, doc }
    await openRequest(systemCtx(req.deps, a.domain, req.requestId), request, mail)
  }
  return envelope('a link to set a new password was sent by e-mail')
}

/** Two steps, second: the request id from the link and the new password. */
export const completePasswordReset = defineRoute({
  access: 'public',
  summary: 'Set a password from a mailed link',
  description:
    "With the id of the link: sets the password (the domain's policy applies, 412/1501) and ends the account's " +
    'sessions. A link works once (404 after).',
  params: IdParams,
  query: NoQuery,
  body: checkedByHandler(NewPassword),
  maxBody: SMALL_BODY,
  response: { 200: DoneForAccountAnswer, ...LINK_ERRORS },
  async handle(req) {
    const { pending, now } = await pendingRequest(req.deps, req.params.id, 'pwd_reset', 'password reset request')
    const { pwd } = validateFields(NewPassword, req.body)
    const login = str(pending.doc, 'login')
    const account = accountCtx(req.deps, pending.domain, { id: str(pending.doc, 'userId'), name: login }, req.requestId)
    await setPassword(account, pwd, { before: () => consume(pending, now, 'password reset request') })
    return accountEnvelope(req.deps, 'password changed', pending.domain, login)
  },
})
