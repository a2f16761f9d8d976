/** GET/PATCH /rest/v1/user/info and GET /rest/v1/iam/roles: what every signed-in user may read about itself. */
import * as v from 'valibot'
import { cacheDoc, groupsByIds, roleNames, sipAccountsOf } from '~storage/directory'
import type { Doc } from '~storage/doc'
import { BUILTIN_ROLES } from '../directory/maintain'
import { users } from '../directory/users'
import { validate } from '../entities/validate'
import { bodyObject, patchEntity } from '../entities/writes'
import { notFound } from '../http/errors'
import type { Req } from '../http/req'
import { defineRoute } from '../http/route'
import { usersTable } from './directory'

async function account(req: Req): Promise<Doc> {
  const s = req.signedIn
  const doc = await req.deps.repo(usersTable).get(s.homeDomainId, s.userId)
  if (!doc) throw notFound('the account of this session no longer exists')
  return doc
}

export const getUserInfo = defineRoute({
  access: 'session',
  async handle(req) {
    const s = req.signedIn
    const user = await account(req)
    const home = await req.deps.access.domainInfo(s.homeDomainId)
    const cache = await cacheDoc(req.deps.db, 'users_caches', s.homeDomainId, s.userId)
    const groups = await groupsByIds(req.deps.db, s.homeDomainId, (cache?.deep_groups as string[] | undefined) ?? [])
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
      sip_accounts: (await sipAccountsOf(req.deps.db, s.homeDomainId, s.userId)).map((a) => ({
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
    const s = req.signedIn
    // the account lives in the session's home domain (a switched master administrator stays itself)
    await patchEntity(req.inDomain(s.homeDomainId), users, s.userId, { name })
    return { name }
  },
})

export const listRoles = defineRoute({
  access: 'session',
  async handle(req) {
    return [...BUILTIN_ROLES, ...(await roleNames(req.deps.db, req.domain))].map((role) => ({ role }))
  },
})
