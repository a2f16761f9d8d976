/**
 * POST /rest/v1/iam/self_register_requests `{domain, login, name, email}` (anyone, where the domain
 * setting self_register_allowed is true: a confirmation mail with a link valid one day) and PATCH
 * .../<id> `{pwd}` (creates the account from the domain setting self_register_template).
 */
import * as v from 'valibot'
import { existingIds, findDomainByName, findUserByLogin, findUsersByEmail } from '~storage/directory'
import type { Doc } from '~storage/doc'
import { DuplicateError } from '~storage/repository'
import { isoTime } from '../clock'
import { rebuildCaches } from '../directory/maintain'
import { email as emailSchema, login as loginSchema } from '../directory/schemas'
import { settingValue } from '../entities/settings'
import { fieldInvalid } from '../http/errors'
import { defineRoute } from '../http/route'
import { SYSTEM_ACTOR, usersTable } from '../identity/directory'
import { hashPassword } from '../identity/passwords'
import { checkPasswordPolicy } from '../identity/password-policy'
import { selfRegistrationMail } from '../mail/templates'
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
  async handle(req) {
    await refuseWithExternalAuth(req.deps)
    await limitRate(req, 'self-registration', [req.clientAddress], SELF_REGISTRATION_RATE_WINDOW_MS)
    const body = validateFields(Register, await req.json())
    const domain = await findDomainByName(req.deps.db, body.domain)
    if (
      !domain ||
      domain.parentId === '' ||
      !(await settingValue<boolean>(req.deps, domain.id, 'self_register_allowed'))
    ) {
      throw fieldInvalid('domain', `self-registration is not open in ${body.domain}`)
    }
    if (await findUserByLogin(req.deps.db, domain.id, body.login))
      throw fieldInvalid('login', `login ${body.login} is taken in this domain`)
    if ((await findUsersByEmail(req.deps.db, body.email, domain.id, 1)).length)
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
    await openRequest(req, request, mail)
    return envelope('a confirmation link was sent by e-mail')
  },
})

export const confirmSelfRegistration = defineRoute({
  access: 'public',
  async handle(req) {
    const { pending, now } = await pendingRequest(req, 'self_register', 'registration request')
    const { pwd } = validateFields(Confirm, await req.json())
    await checkPasswordPolicy(req.deps, pending.domain, pwd)
    const hash = await hashPassword(pwd)
    const template = await settingValue<Template>(req.deps, pending.domain, 'self_register_template')
    const r = pending.doc
    const user: Doc = {
      id: crypto.randomUUID(),
      login: r.login,
      name: r.name,
      roles: template.roles,
      groups: [],
      opts: { ...template.opts, email: r.email, self_registered: true },
    }
    const w = {
      domain: pending.domain,
      now: isoTime(now),
      actor: { ...SYSTEM_ACTOR, name: 'self-registration' },
      requestId: req.requestId,
    }
    const users = req.deps.repo(usersTable)
    const groups = template.groups
    try {
      await req.deps.db.write(function* () {
        yield* consume(pending, now, 'registration request')
        // groups of the template that no longer exist are skipped rather than failing the registration
        const existing = yield* existingIds('groups', pending.domain, groups)
        yield* users.insert(w, { ...user, groups: groups.filter((g) => existing.has(g)) }, { pwd_hash: hash })
        yield* rebuildCaches(pending.domain)
      })
    } catch (err) {
      if (err instanceof DuplicateError) throw fieldInvalid('login', `login ${r.login as string} was taken meanwhile`)
      throw err
    }
    await req.deps.access.invalidate(pending.domain)
    return accountEnvelope(req, 'the account was created', pending.domain, r.login as string)
  },
})
