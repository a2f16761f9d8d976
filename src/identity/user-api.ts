/** GET/PATCH /rest/v1/user/info and GET /rest/v1/iam/roles: what every signed-in user may read about itself. */
import * as v from 'valibot'
import type { Doc } from '~storage/doc'
import { inDomain } from '../context'
import { usersCaches } from '../directory/caches-api'
import { groups as groupsEntity } from '../directory/groups'
import { BUILTIN_ROLES } from '../directory/maintain'
import { roles } from '../directory/roles'
import { sipusers } from '../directory/sipusers'
import { users } from '../directory/users'
import { validate } from '../entities/validate'
import { bodyObject, patchEntity } from '../entities/writes'
import { notFound } from '../errors'
import type { Req } from '../http/req'
import { defineRoute } from '../http/route'

async function account(req: Req): Promise<Doc> {
  const s = req.session
  const doc = await req.deps.repo(users.table).get(s.homeDomainId, s.userId)
  if (!doc) throw notFound('the account of this session no longer exists')
  return doc
}

export const getUserInfo = defineRoute({
  access: 'session',
  async handle(req) {
    const s = req.session
    const { db, repo } = req.deps
    const user = await account(req)
    const home = await req.deps.access.domainInfo(s.homeDomainId)
    const cache = await repo(usersCaches.table).get(s.homeDomainId, s.userId)
    const deepGroups = (cache?.deep_groups as string[] | undefined) ?? []
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
      roles: (cache?.deep_roles as string[] | undefined) ?? [],
      sip_accounts: accounts.map(({ doc: a }) => ({
        id: a.id,
        login: a.login,
        phonenumber: a.phonenumber ?? '',
      })),
    }
  },
})

const NameOnly = v.strictObject({ name: v.pipe(v.string(), v.trim(), v.maxLength(255)) })

/** Only the name can change here; the change is journaled as an update of the user. */
export const patchUserInfo = defineRoute({
  access: 'session',
  async handle(req) {
    const { name } = validate(NameOnly, bodyObject(await req.json()))
    // the account lives in the session's home domain (a switched master administrator stays itself)
    await patchEntity(inDomain(req.ctx, req.session.homeDomainId), users, req.session.userId, { name })
    return { name }
  },
})

export const listRoles = defineRoute({
  access: 'session',
  async handle(req) {
    const custom = await req.deps.db.read(() => req.deps.repo(roles.table).all(req.ctx.domain))
    const names = custom.map((r) => r.name as string).sort()
    return [...BUILTIN_ROLES, ...names].map((role) => ({ role }))
  },
})
