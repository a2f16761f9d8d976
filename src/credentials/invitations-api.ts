/**
 * POST /rest/v1/iam/invites `{userid}` (a domain administrator invites a user of its domain: a mail
 * with a link valid three days) and PATCH /rest/v1/iam/invites/<id> `{pwd, login?, name?}` (anyone
 * holding the link sets the password, and optionally the login and name).
 */
import * as v from 'valibot'
import { login as loginSchema, uuid } from '../directory/schemas'
import { ApiError, fieldInvalid, forbidden } from '../errors'
import { NoQuery } from '../http/query-schemas'
import { SMALL_BODY } from '../http/body-limits'
import { defineRoute } from '../http/route'
import { checkedByHandler, errors, IdParams } from '../http/schemas'
import { users } from '../directory/users'
import { accountCtx } from '../context'
import { invitationMail } from '../mail/templates'
import { DoneAnswer, DoneForAccountAnswer, FIELD_ERRORS, LINK_ERRORS } from './credential-answers'
import {
  accountEnvelope,
  consume,
  DAY_MS,
  emailOf,
  envelope,
  limitRate,
  openRequest,
  pageLink,
  pendingRequest,
  refuseWithExternalAuth,
  setPassword,
  validateFields,
} from './common'
import { str } from '~storage/doc'

export const INVITATION_LIFETIME_MS = 3 * DAY_MS
const INVITATION_RATE_WINDOW_MS = 2 * 60_000

const Invite = v.strictObject({ userid: uuid })
const Accept = v.strictObject({
  pwd: v.string(),
  login: v.optional(loginSchema),
  name: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(255))),
})

export const createInvitation = defineRoute({
  access: 'session',
  summary: 'Invite a user of the domain',
  description:
    'Domain administrators only: mails the user a link, valid three days, to set its password (and login and ' +
    'name). One invitation per two minutes per address and per e-mail (429); an unknown user is 412/1413, a ' +
    'user without an e-mail address 412/1501.',
  query: NoQuery,
  body: checkedByHandler(Invite),
  maxBody: SMALL_BODY,
  response: { 200: DoneAnswer, ...FIELD_ERRORS, ...errors(409) },
  async handle(req) {
    await refuseWithExternalAuth(req.deps)
    const { ctx } = req
    if (!ctx.roles.includes('admin')) throw forbidden('only an administrator of the domain may send invitations')
    const { userid } = validateFields(Invite, req.body)
    const user = await req.deps.repo(users.table).get(ctx.domain, userid)
    if (!user) throw new ApiError(412, `there is no user ${userid} in this domain`, { field: 'userid' }, 1413)
    const email = emailOf(user)
    if (!email) throw fieldInvalid('userid', 'the user has no e-mail address to send the invitation to')
    await limitRate(
      req.deps,
      'invitation',
      [`address:${req.clientAddress}`, `email:${email}`],
      INVITATION_RATE_WINDOW_MS,
    )

    const now = req.deps.clock.now()
    const id = crypto.randomUUID()
    const s = req.session
    const mail = {
      domain: ctx.domain,
      recipient: email,
      ...invitationMail(pageLink(req.deps, 'invite', id), str(user, 'login'), s.domainName, s.name || s.login),
    }
    const invite = {
      id,
      kind: 'invite' as const,
      domain: ctx.domain,
      account: str(user, 'id'),
      expires: now + INVITATION_LIFETIME_MS,
      doc: {
        userId: userid,
        login: user.login,
        email,
        inviterId: s.userId,
        inviterLogin: s.login,
        remoteIp: req.clientAddress,
      },
    }
    await openRequest(ctx, invite, mail)
    return envelope('the invitation was sent by e-mail')
  },
})

export const acceptInvitation = defineRoute({
  access: 'public',
  summary: 'Accept an invitation',
  description:
    'With the id of the mailed link: sets the password (the policy of the domain applies), and the login and ' +
    'name when given. A link works once (404 after); a refused or taken field is 412/1501.',
  params: IdParams,
  query: NoQuery,
  body: checkedByHandler(Accept),
  maxBody: SMALL_BODY,
  response: { 200: DoneForAccountAnswer, ...LINK_ERRORS },
  async handle(req) {
    const { pending, now } = await pendingRequest(req.deps, req.params.id, 'invite', 'invitation')
    const body = validateFields(Accept, req.body)
    const account = { id: str(pending.doc, 'userId'), name: str(pending.doc, 'login') }
    const updated = await setPassword(accountCtx(req.deps, pending.domain, account, req.requestId), body.pwd, {
      before: () => consume(pending, now, 'invitation'),
      login: body.login,
      name: body.name,
    })
    return accountEnvelope(req.deps, 'the invitation was accepted', pending.domain, updated.login)
  },
})
