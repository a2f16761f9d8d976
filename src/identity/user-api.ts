/** GET/PATCH /rest/v1/user/info and GET /rest/v1/iam/roles: what every signed-in user may read about itself. */
import * as v from 'valibot'
import { type Doc, stringsOf } from '~storage/doc'
import { inDomain } from '../context'
import { usersCaches } from '../directory/cache-collections'
import { groups as groupsEntity } from '../directory/groups'
import { BUILTIN_ROLES } from '../directory/declarations'
import { roles } from '../directory/roles'
import { sipusers } from '../directory/sipusers'
import { users } from '../directory/users'
import { patchEntity } from '../entities/writes'
import { notFound } from '../errors'
import { NoQuery } from '../http/query-schemas'
import type { Req } from '../http/req'
import { SMALL_BODY } from '../http/body-limits'
import { defineRoute } from '../http/route'
import { answer, errors } from '../http/schemas'
import { objectBody, Uuid } from '../values'

async function account(req: Req): Promise<Doc> {
  const s = req.session
  const doc = await req.deps.repo(users.table).get(s.homeDomainId, s.userId)
  if (!doc) throw notFound('the account of this session no longer exists')
  return doc
}

const UserInfo = v.strictObject({
  id: Uuid,
  domain: v.pipe(v.string(), v.description("the name of the account's home domain")),
  login: v.string(),
  name: v.string(),
  email: v.pipe(v.string(), v.description("'' when the account has none")),
  avatar: v.pipe(v.unknown(), v.description('false, or what opts.avatar of the account holds')),
  groups: v.array(
    v.strictObject({
      id: Uuid,
      code: v.string(),
      description: v.string(),
      opts: v.strictObject({ title: v.string() }),
    }),
  ),
  roles: v.pipe(v.array(v.string()), v.description('direct and through groups')),
  sip_accounts: v.array(v.strictObject({ id: Uuid, login: v.string(), phonenumber: v.string() })),
})

/** 404: the account of the session was deleted meanwhile. */
const ACCOUNT_GONE = errors(404)

export const getUserInfo = defineRoute({
  access: 'session',
  summary: 'Read the signed-in user',
  description:
    'The account of the session in its home domain: its groups (direct and inherited), roles (direct and ' +
    'through groups) and SIP accounts.',
  query: NoQuery,
  response: { 200: answer(UserInfo), ...ACCOUNT_GONE },
  async handle(req) {
    const s = req.session
    const { db, repo } = req.deps
    const user = await account(req)
    const home = await req.deps.access.domainInfo(s.homeDomainId)
    const cache = await repo(usersCaches.table).get(s.homeDomainId, s.userId)
    const deepGroups = stringsOf(cache?.deep_groups)
    const groups = await db.read(() => repo(groupsEntity.table).getMany(s.homeDomainId, deepGroups))
    const accounts = await repo(sipusers.table).findBy(s.homeDomainId, 'iduser', s.userId)
    const opts = (user.opts as Doc | undefined) ?? {}
    return {
      id: user.id,
      domain: home?.name ?? s.domainName,
      login: user.login,
      name: user.name ?? '',
      email: opts.email ?? '',
      avatar: opts.avatar ?? false,
      groups: groups.map((g) => ({
        id: g.id,
        code: g.code,
        description: g.description ?? '',
        opts: { title: (g.opts as Doc | undefined)?.title ?? '' },
      })),
      roles: stringsOf(cache?.deep_roles),
      sip_accounts: accounts.map(({ doc: a }) => ({
        id: a.id,
        login: a.login,
        phonenumber: a.phonenumber ?? '',
      })),
    }
  },
})

const NameOnly = objectBody({ name: v.pipe(v.string(), v.trim(), v.maxLength(255)) })

/** Only the name can change here; the change is journaled as an update of the user. */
export const patchUserInfo = defineRoute({
  access: 'session',
  summary: 'Rename the signed-in user',
  description: 'Only `name` can change here; the change is journaled as an update of the user. Answers the new name.',
  query: NoQuery,
  body: NameOnly,
  maxBody: SMALL_BODY,
  response: { 200: answer(v.strictObject({ name: v.string() })), ...ACCOUNT_GONE },
  async handle(req) {
    const { name } = req.body
    // the account lives in the session's home domain (a switched master administrator stays itself)
    await patchEntity(inDomain(req.ctx, req.session.homeDomainId), users, req.session.userId, { name })
    return { name }
  },
})

export const listRoles = defineRoute({
  access: 'session',
  summary: 'List the roles of the domain',
  description: 'The built-in roles (admin, user), then the roles the domain defines, by name.',
  query: NoQuery,
  response: { 200: answer(v.array(v.strictObject({ role: v.string() }))) },
  async handle(req) {
    const custom = await req.deps.db.read(() => req.deps.repo(roles.table).all(req.ctx.domain))
    const names = custom.map((r) => r.name).sort()
    return [...BUILTIN_ROLES, ...names].map((role) => ({ role }))
  },
})
