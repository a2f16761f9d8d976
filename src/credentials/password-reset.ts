/**
 * POST /rest/v1/iam/pwd_reset_requests and PATCH .../<id>. One step for a signed-in user
 * (`{current_pwd, new_pwd}`), or two steps for anyone: `{key, domain?}` mails a link holding a
 * request id (valid one hour), and `{pwd}` on that id sets the password.
 */
import * as v from 'valibot'
import { findDomainByName, findUserByLogin, findUsersByEmail } from '~storage/directory'
import { isPlainObject, type Doc } from '~storage/doc'
import { ApiError, fieldInvalid, unauthorized } from '../http/errors'
import type { Req } from '../http/req'
import { defineRoute } from '../http/route'
import { credentialOf, sessionFor } from '../identity/authenticate'
import { usersTable } from '../identity/directory'
import { verifyPassword } from '../identity/passwords'
import { resetPasswordMail } from '../mail/templates'
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
  async handle(req) {
    await refuseWithExternalAuth(req.deps)
    const body = await req.json()
    if (isPlainObject(body) && ('current_pwd' in body || 'new_pwd' in body)) return changeOwnPassword(req, body)
    return requestReset(req, isPlainObject(body) ? body : undefined)
  },
})

/** One step: the signed-in user proves the current password and sets a new one; its other sessions end. */
async function changeOwnPassword(req: Req, body: Doc) {
  const session = await sessionFor(req, credentialOf(req))
  if (!session) throw unauthorized('changing a password in one step needs a session')
  const { current_pwd, new_pwd } = validateFields(OneStep, body)
  const stored = await req.deps.repo(usersTable).getHidden(session.homeDomainId, session.userId)
  if (!(await verifyPassword(current_pwd, stored?.pwd_hash as string | undefined)))
    throw fieldInvalid('current_pwd', 'the current password is wrong')
  const account = {
    domain: session.homeDomainId,
    userId: session.userId,
    actor: { id: session.userId, name: session.name || session.login },
  }
  await setPassword(req, account, new_pwd, { keepSession: session.id })
  return envelope('password changed')
}

/** Two steps, first: find the account by login (with domain) or e-mail, and mail it a link. */
async function requestReset(req: Req, body: Doc | undefined) {
  await limitRate(req, 'password recovery', [req.clientAddress], RESET_RATE_WINDOW_MS)
  const { key, domain: domainName } = validateFields(TwoStep, body)
  const domain = domainName ? await findDomainByName(req.deps.db, domainName) : null
  if (domainName && !domain) throw fieldInvalid('domain', `there is no domain ${domainName}`)
  let accounts: { domain: string; doc: Doc }[] = []
  if (domain) {
    const byLogin = await findUserByLogin(req.deps.db, domain.id, key)
    accounts = byLogin
      ? [{ domain: domain.id, doc: byLogin.doc }]
      : await findUsersByEmail(req.deps.db, key.toLowerCase(), domain.id)
  } else if (key.includes('@')) {
    accounts = await findUsersByEmail(req.deps.db, key.toLowerCase(), null)
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
    const login = a.doc.login as string
    const mail = {
      domain: a.domain,
      recipient: emailOf(a.doc)!,
      ...resetPasswordMail(pageLink(req.deps, 'reset-password', id), login, info?.name ?? ''),
    }
    const doc = { userId: a.doc.id, login, email: mail.recipient, remoteIp: req.clientAddress }
    await openRequest(req, { id, kind: 'pwd_reset', domain: a.domain, expires: now + RESET_LIFETIME_MS, doc }, mail)
  }
  return envelope('a link to set a new password was sent by e-mail')
}

/** Two steps, second: the request id from the link and the new password. */
export const completePasswordReset = defineRoute({
  access: 'public',
  async handle(req) {
    const { pending, now } = await pendingRequest(req, 'pwd_reset', 'password reset request')
    const { pwd } = validateFields(NewPassword, await req.json())
    const userId = pending.doc.userId as string
    const login = pending.doc.login as string
    await setPassword(req, { domain: pending.domain, userId, actor: { id: userId, name: login } }, pwd, {
      before: () => consume(pending, now, 'password reset request'),
    })
    return accountEnvelope(req, 'password changed', pending.domain, login)
  },
})
