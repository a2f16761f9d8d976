/**
 * POST /rest/v1/iam/self_register_requests `{domain, login, name, email}` (anyone, where the domain
 * setting self_register_allowed is true: a confirmation mail with a link valid one day) and PATCH
 * .../<id> `{pwd}` (creates the account from the domain setting self_register_template).
 */
import * as v from 'valibot'
import { type Doc, str } from '~storage/doc'
import { DuplicateError } from '~storage/repository'
import { SYSTEM_ACTOR, systemCtx } from '../context'
import { findDomainByName } from '../directory/domains'
import { groups } from '../directory/groups'
import { isBuiltinRole } from '../directory/declarations'
import { roles } from '../directory/roles'
import { email as emailSchema, login as loginSchema } from '../directory/schemas'
import { findAccount, findAccountsByEmail, users } from '../directory/users'
import { commit } from '../entities/unit'
import { insertStep } from '../entities/writes'
import { fieldInvalid } from '../errors'
import { NoQuery } from '../http/query-schemas'
import { SMALL_BODY } from '../http/body-limits'
import { defineRoute } from '../http/route'
import { checkedByHandler, IdParams } from '../http/schemas'
import { selfRegistrationMail } from '../mail/templates'
import { settingValue } from '../settings/settings'
import { DoneAnswer, DoneForAccountAnswer, FIELD_ERRORS, LINK_ERRORS } from './credential-answers'
import {
  accountEnvelope,
  consume,
  DAY_MS,
  envelope,
  limitRate,
  openRequest,
  pageLink,
  pendingRequest,
  refuseWithExternalAuth,
  validateFields,
} from './common'

export const SELF_REGISTRATION_LIFETIME_MS = DAY_MS
const SELF_REGISTRATION_RATE_WINDOW_MS = 2 * 60_000

const Register = v.strictObject({
  domain: v.pipe(v.string(), v.trim(), v.toLowerCase(), v.minLength(1, 'domain is required')),
  login: loginSchema,
  name: v.pipe(v.string(), v.trim(), v.minLength(1, 'name is required'), v.maxLength(255)),
  email: v.pipe(emailSchema, v.toLowerCase()),
})
const Confirm = v.strictObject({ pwd: v.string() })

interface Template {
  roles: string[]
  groups: string[]
  opts: Doc
}

export const createSelfRegistration = defineRoute({
  access: 'public',
  summary: 'Ask for an account',
  description:
    'Where the setting self_register_allowed of the domain is true: mails a link, valid one day, that creates ' +
    'the account. One request per two minutes per address (429); a closed domain, a taken login or e-mail, or ' +
    'a refused field is 412/1501.',
  query: NoQuery,
  body: checkedByHandler(Register),
  maxBody: SMALL_BODY,
  response: { 200: DoneAnswer, ...FIELD_ERRORS },
  async handle(req) {
    await refuseWithExternalAuth(req.deps)
    await limitRate(req.deps, 'self-registration', [req.clientAddress], SELF_REGISTRATION_RATE_WINDOW_MS)
    const body = validateFields(Register, req.body)
    const domain = await findDomainByName(req.deps, body.domain)
    if (
      !domain ||
      domain.parentId === '' ||
      !(await settingValue<boolean>(req.deps, domain.id, 'self_register_allowed'))
    ) {
      throw fieldInvalid('domain', `self-registration is not open in ${body.domain}`)
    }
    if (await findAccount(req.deps, domain.id, body.login))
      throw fieldInvalid('login', `login ${body.login} is taken in this domain`)
    if ((await findAccountsByEmail(req.deps, body.email, domain.id, 1)).length)
      throw fieldInvalid('email', `${body.email} already has an account in this domain`)

    const now = req.deps.clock.now()
    const id = crypto.randomUUID()
    const mail = {
      domain: domain.id,
      recipient: body.email,
      ...selfRegistrationMail(pageLink(req.deps, 'confirm-registration', id), body.login, domain.name),
    }
    const request = {
      id,
      kind: 'self_register' as const,
      domain: domain.id,
      expires: now + SELF_REGISTRATION_LIFETIME_MS,
      doc: { ...body, remoteIp: req.clientAddress },
    }
    await openRequest(systemCtx(req.deps, domain.id, req.requestId), request, mail)
    return envelope('a confirmation link was sent by e-mail')
  },
})

export const confirmSelfRegistration = defineRoute({
  access: 'public',
  summary: 'Confirm a registration',
  description:
    "With the id of the mailed link and the password (the domain's policy applies, 412/1501): creates the " +
    'account from the setting self_register_template. A link works once (404 after).',
  params: IdParams,
  query: NoQuery,
  body: checkedByHandler(Confirm),
  maxBody: SMALL_BODY,
  response: { 200: DoneForAccountAnswer, ...LINK_ERRORS },
  async handle(req) {
    const { pending, now } = await pendingRequest(req.deps, req.params.id, 'self_register', 'registration request')
    const { pwd } = validateFields(Confirm, req.body)
    // the account is made by the service, on behalf of the person who confirmed the link
    const ctx = systemCtx(req.deps, pending.domain, req.requestId, { ...SYSTEM_ACTOR, name: 'self-registration' })
    const { hidden } = await users.hooks.prepare!(ctx, { pwd }) // the domain's password policy, then the hash
    const template = await settingValue<Template>(req.deps, pending.domain, 'self_register_template')
    const r = pending.doc
    try {
      await commit(ctx, function* (u) {
        yield* consume(pending, now, 'registration request')
        // groups and roles of the template that no longer exist are skipped rather than failing the registration
        const knownGroups = yield* req.deps.repo(groups.table).existing(pending.domain, 'id', template.groups)
        const custom = template.roles.filter((name) => !isBuiltinRole(name))
        const knownRoles = yield* req.deps.repo(roles.table).existing(pending.domain, 'name', custom)
        const doc: Doc = {
          id: crypto.randomUUID(),
          login: r.login,
          name: r.name,
          roles: template.roles.filter((name) => isBuiltinRole(name) || knownRoles.has(name)),
          groups: template.groups.filter((g) => knownGroups.has(g)),
          opts: { ...template.opts, email: r.email, self_registered: true },
        }
        // the template is the domain administrator's: its opts are kept as given, not checked as a request body
        yield* insertStep(u, { entity: users, doc, input: doc, hidden: hidden ?? {} })
      })
    } catch (err) {
      if (err instanceof DuplicateError) throw fieldInvalid('login', `login ${r.login} was taken meanwhile`)
      throw err
    }
    return accountEnvelope(req.deps, 'the account was created', pending.domain, str(r, 'login'))
  },
})
