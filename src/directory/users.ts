/** Users (/rest/v1/domain/users): login unique per domain, write-only password, groups and roles. */
import * as v from 'valibot'
import type { TxStep } from '~storage/db'
import { voidAccountRequests } from '~storage/requests'
import type { Deps } from '../deps'
import { COMMON_FIELDS, type DocOf, defineEntity, ext, opts, text, withDefaults } from '../entities/entity'
import { NIL_UUID } from '../ids'
import { checkPasswordPolicy } from '../identity/password-policy'
import { credentialMark, hashPassword } from '../identity/passwords'
import { groups } from './groups'
import { requireIds, requireRoles } from './maintain'
import { refreshCaches } from './refresh'
import { email, login, roleList, uuidList } from './schemas'
import { sipusers } from './sipusers'
import { str } from '~storage/doc'
import { textOrNull } from '~storage/columns'

const USER_OPTS = {
  email: v.optional(email),
  tags: v.optional(v.array(text(64))),
  self_registered: v.optional(v.boolean()),
}

export const users = defineEntity({
  name: 'user',
  // the password hash lives in a column of its own, so no read of the doc can leak it
  table: { table: 'users', objtype: 'user', columns: { login: 'login' }, hidden: { pwd_hash: 'pwd' } },
  path: '/rest/v1/domain/users',
  fields: [...COMMON_FIELDS, 'login', 'name', 'groups', 'roles', 'opts.email', 'opts.tags', 'opts.self_registered'],
  listFields: ['id', 'login', 'name', 'opts.title', 'opts.email', 'ext.lwt', 'ext.ct'],
  lookupFields: ['id', 'login'],
  create: {
    login,
    name: v.optional(text(255)),
    pwd: v.optional(v.string()),
    groups: v.optional(uuidList),
    roles: v.optional(roleList),
    opts: opts(USER_OPTS),
    ext,
  },
  doc: {
    name: v.string(),
    groups: uuidList,
    roles: roleList,
    // a self-registered account's opts are the domain's template as its administrator wrote it: any member.
    // Optional: a list leaves out opts without the members it lists (the first administrator's are empty)
    opts: v.optional(v.looseObject({ title: v.optional(v.string()), comment: v.optional(v.string()), ...USER_OPTS })),
  },
  // the password never reaches the doc: prepare() turns it into a hash in a hidden column
  virtual: ['pwd'],
  finish: (doc) => withDefaults(doc, { name: '', groups: [], roles: [] }),
  hooks: {
    async prepare(ctx, input) {
      if (input.pwd === undefined) return { input }
      await checkPasswordPolicy(ctx.deps, ctx.domain, str(input, 'pwd'))
      return { input, hidden: { pwd_hash: await hashPassword(str(input, 'pwd')) } }
    },
    *inTransaction(u, change): TxStep<void> {
      const { sessions, repo } = u.ctx.deps
      const domain = u.w.domain
      const id = (change.after ?? change.before)!.id
      if (change.after) {
        yield* requireIds(u, groups, change.after.groups, 'groups')
        yield* requireRoles(u, change.after.roles, 'roles')
      } else {
        // SIP accounts of a deleted user stay, unattached
        for (const account of yield* repo(sipusers.table).idsWhere(domain, 'iduser', id)) {
          yield* repo(sipusers.table).update(u.w, account, (doc) => ({ ...doc, iduser: NIL_UUID }))
        }
      }
      yield* refreshCaches(u, { users: [id] })
      // a link mailed for the account (reset, invitation) dies with the password, address or login it was sent for
      const { before, after } = change
      if (
        before &&
        (!after ||
          change.input?.pwd !== undefined ||
          before.opts?.email !== after.opts?.email ||
          before.login !== after.login)
      )
        yield* voidAccountRequests(domain, id)
      // a deleted account signs out everywhere; a new password ends the account's other sessions
      if (!change.after)
        u.afterCommit(`end-sessions:${domain}:${id}`, async () => {
          await sessions.destroyUser(domain, id)
          u.ctx.deps.log.info('sessions ended', { domain, user: id, reason: 'account deleted', by: u.ctx.actor.name })
        })
      else if (change.before && change.input?.pwd !== undefined) {
        const own = u.ctx.session
        const keep = own?.id
        const by = u.ctx.actor
        u.afterCommit(`log-password:${domain}:${id}`, () =>
          u.ctx.deps.log.info('password changed', { domain, user: id, by: by.id === id ? 'the user' : by.name }),
        )
        u.afterCommit(`end-sessions:${domain}:${id}:but:${keep}`, async () => {
          await sessions.destroyUser(domain, id, keep)
          // the account's own session that stays now stands on the new password: sessions copied from it live
          if (own && own.homeDomainId === domain && own.userId === id) {
            const hidden = await repo(users.table).getHidden(domain, id)
            await sessions.update(own.id, { cred: credentialMark(textOrNull(hidden?.pwd_hash ?? null)) })
          }
        })
      }
    },
  },
})

export type User = DocOf<typeof users>

export interface StoredAccount {
  domain: string
  doc: User
  pwdHash: string | null
}

/** The account with this login in a domain, with its password hash. */
export async function findAccount(deps: Deps, domain: string, login: string): Promise<StoredAccount | null> {
  const [row] = await deps.repo(users.table).findBy(domain, 'login', login, 1)
  return row ? { domain, doc: row.doc as User, pwdHash: textOrNull(row.hidden.pwd_hash ?? null) } : null
}

/** Accounts with this e-mail address (lower case), in one domain or in all; at most `limit`. */
export async function findAccountsByEmail(deps: Deps, email: string, domain: string | null, limit = 10) {
  return (await deps.repo(users.table).findBy(domain, 'opts.email', email, limit)).map(({ domain, doc }) => ({
    domain,
    doc: doc as User,
  }))
}
