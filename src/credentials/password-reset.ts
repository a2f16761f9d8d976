/**
 * POST /rest/v1/iam/pwd_reset_requests and PATCH .../<id>. One step for a signed-in user
 * (`{current_pwd, new_pwd}`), or two steps for anyone: `{key, domain?}` mails a link holding a
 * request id (valid one hour), and `{pwd}` on that id sets the password.
 */
import * as v from 'valibot'
import { findDomainByName, findMasterDomain, findUserByLogin, findUsersByEmail } from '~storage/directory'
import type { Doc } from '~storage/doc'
import type { TxStep } from '~storage/db'
import { findRequest, insertRequest, takeRequest } from '~storage/requests'
import { isoTime } from '../clock'
import type { Deps } from '../deps'
import { ApiError, fieldInvalid, unauthorized } from '../http/errors'
import type { Req } from '../http/req'
import { defineRoute } from '../http/route'
import { credentialOf, sessionFor } from '../identity/authenticate'
import { usersTable } from '../identity/directory'
import { hashPassword, verifyPassword } from '../identity/passwords'
import { checkPasswordPolicy } from '../identity/password-policy'
import { resetPasswordMail } from '../mail/templates'
import { emailOf, envelope, HOUR_MS, limitRate, pageLink, refuseWithExternalAuth, validateFields } from './common'

export const RESET_LIFETIME_MS = HOUR_MS
const RESET_RATE_WINDOW_MS = 60_000

const OneStep = v.strictObject({ current_pwd: v.pipe(v.string(), v.minLength(1, 'current_pwd is required')), new_pwd: v.pipe(v.string(), v.minLength(1, 'new_pwd is required')) })
const TwoStep = v.strictObject({ key: v.pipe(v.string(), v.trim(), v.minLength(1, 'key is required'), v.maxLength(254)), domain: v.optional(v.pipe(v.string(), v.trim(), v.toLowerCase())) })
const NewPassword = v.strictObject({ pwd: v.string() })

async function masterId(deps: Deps): Promise<string> {
  return (await findMasterDomain(deps.db))!.id
}

/** Sets a user's password in one transaction with `also` (consuming a request), journaled as the user's update. */
export async function setPassword(req: Req, domain: string, userId: string, pwd: string, actor: { id: string; name: string }, also?: () => TxStep<unknown>) {
  await checkPasswordPolicy(req.deps, domain, pwd)
  const hash = await hashPassword(pwd)
  const w = { domain, now: isoTime(req.deps.clock.now()), actor, requestId: req.requestId }
  const users = req.deps.repo(usersTable)
  const updated = await req.deps.db.write(function* () {
    if (also) yield* also()
    return yield* users.update(w, userId, (doc, hidden) => {
      hidden.pwd_hash = hash
      return doc
    })
  })
  if (!updated) throw new ApiError(404, 'the account no longer exists')
  return updated
}

export const createPasswordReset = defineRoute({
  access: 'public',
  async handle(req) {
    await refuseWithExternalAuth(req.deps, await masterId(req.deps))
    const body = (await req.json()) as Doc | undefined
    if (body && ('current_pwd' in body || 'new_pwd' in body)) return changeOwnPassword(req, body)
    return requestReset(req, body)
  },
})

/** One step: the signed-in user proves the current password and sets a new one; its other sessions end. */
async function changeOwnPassword(req: Req, body: Doc) {
  const session = await sessionFor(req, credentialOf(req))
  if (!session) throw unauthorized('changing a password in one step needs a session')
  const { current_pwd, new_pwd } = validateFields(OneStep, body)
  const account = await req.deps.repo(usersTable).getHidden(session.homeDomainId, session.userId)
  if (!(await verifyPassword(current_pwd, account?.pwd_hash as string | undefined))) throw fieldInvalid('current_pwd', 'the current password is wrong')
  await setPassword(req, session.homeDomainId, session.userId, new_pwd, { id: session.userId, name: session.name || session.login })
  await req.deps.sessions.destroyUser(session.userId, session.id)
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
    accounts = byLogin ? [{ domain: domain.id, doc: byLogin.doc }] : await findUsersByEmail(req.deps.db, key.toLowerCase(), domain.id)
  } else if (key.includes('@')) {
    accounts = await findUsersByEmail(req.deps.db, key.toLowerCase(), null)
  } else {
    throw fieldInvalid('domain', 'domain is required when the key is a login')
  }
  accounts = accounts.filter((a) => emailOf(a.doc))
  if (accounts.length === 0) throw new ApiError(412, 'no account with an e-mail address matches the key', { field: 'key' }, 1413)

  const now = req.deps.clock.now()
  const mails = []
  for (const a of accounts) {
    const id = crypto.randomUUID()
    const info = await req.deps.access.domainInfo(a.domain)
    const login = a.doc.login as string
    const mail = { domain: a.domain, recipient: emailOf(a.doc)!, ...resetPasswordMail(pageLink(req.deps, 'reset-password', id), login, info?.name ?? '') }
    const request = { id, kind: 'pwd_reset' as const, domain: a.domain, expires: now + RESET_LIFETIME_MS, doc: { userId: a.doc.id, login, email: mail.recipient, remoteIp: req.clientAddress } }
    const mailService = req.deps.mail
    await req.deps.db.write(function* () {
      yield* insertRequest(request, isoTime(now))
      yield* mailService.enqueue(mail)
    })
    mails.push(mail)
  }
  for (const m of mails) await req.deps.mail.committed(m)
  return envelope('a link to set a new password was sent by e-mail')
}

/** Two steps, second: the request id from the link and the new password. */
export const completePasswordReset = defineRoute({
  access: 'public',
  async handle(req) {
    await refuseWithExternalAuth(req.deps, await masterId(req.deps))
    const id = req.uuidParam('id')
    const { pwd } = validateFields(NewPassword, await req.json())
    const now = req.deps.clock.now()
    const pending = await findRequest(req.deps.db, id, 'pwd_reset', now)
    if (!pending) throw new ApiError(404, 'password reset request not found or expired')
    const userId = pending.doc.userId as string
    // the request is consumed in the transaction that changes the password: a link works once
    await setPassword(req, pending.domain, userId, pwd, { id: userId, name: pending.doc.login as string }, function* () {
      if (!(yield* takeRequest(id, 'pwd_reset', now))) throw new ApiError(404, 'password reset request not found or expired')
    })
    await req.deps.sessions.destroyUser(userId)
    const domain = await req.deps.access.domainInfo(pending.domain)
    return envelope('password changed', { domain: domain?.name ?? '', login: pending.doc.login as string })
  },
})
