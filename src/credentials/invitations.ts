/**
 * POST /rest/v1/iam/invites `{userid}` (a domain administrator invites a user of its domain: a mail
 * with a link valid three days) and PATCH /rest/v1/iam/invites/<id> `{pwd, login?, name?}` (anyone
 * holding the link sets the password, and optionally the login and name).
 */
import * as v from 'valibot'
import type { Doc } from '~storage/doc'
import { login as loginSchema, uuid } from '../directory/schemas'
import { ApiError, fieldInvalid, forbidden } from '../http/errors'
import { defineRoute } from '../http/route'
import { usersTable } from '../identity/directory'
import { invitationMail } from '../mail/templates'
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
  async handle(req) {
    await refuseWithExternalAuth(req.deps)
    if (!req.roles.includes('admin')) throw forbidden('only an administrator of the domain may send invitations')
    const { userid } = validateFields(Invite, await req.json())
    const user = await req.deps.repo(usersTable).get(req.domain, userid)
    if (!user) throw new ApiError(412, `there is no user ${userid} in this domain`, { field: 'userid' }, 1413)
    const email = emailOf(user)
    if (!email) throw fieldInvalid('userid', 'the user has no e-mail address to send the invitation to')
    await limitRate(req, 'invitation', [`address:${req.clientAddress}`, `email:${email}`], INVITATION_RATE_WINDOW_MS)

    const now = req.deps.clock.now()
    const id = crypto.randomUUID()
    const s = req.signedIn
    const mail = {
      domain: req.domain,
      recipient: email,
      ...invitationMail(pageLink(req.deps, 'invite', id), user.login as string, s.domainName, s.name || s.login),
    }
    const invite = {
      id,
      kind: 'invite' as const,
      domain: req.domain,
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
    await openRequest(req, invite, mail)
    return envelope('the invitation was sent by e-mail')
  },
})

export const acceptInvitation = defineRoute({
  access: 'public',
  async handle(req) {
    const { pending, now } = await pendingRequest(req, 'invite', 'invitation')
    const body = validateFields(Accept, await req.json())
    const userId = pending.doc.userId as string
    const updated = await setPassword(
      req,
      { domain: pending.domain, userId, actor: { id: userId, name: pending.doc.login as string } },
      body.pwd,
      {
        before: () => consume(pending, now, 'invitation'),
        change: (doc: Doc) => ({
          ...doc,
          ...(body.login !== undefined && { login: body.login }),
          ...(body.name !== undefined && { name: body.name }),
        }),
      },
    )
    return accountEnvelope(req, 'the invitation was accepted', pending.domain, updated.login as string)
  },
})
