/**
 * The users' rules: a password hashed before the transaction, groups and roles that must exist,
 * SIP accounts left unattached, caches refreshed, mailed links and sessions ended with what they
 * stood on. The entity's shape is in ./declarations.ts.
 */
import type { TxStep } from '~storage/db'
import { str } from '~storage/doc'
import { textOrNull } from '~storage/columns'
import { voidAccountRequests } from '~storage/requests'
import type { Deps } from '../deps'
import { type DocOf, withHooks } from '../entities/entity'
import { NIL_UUID } from '../ids'
import { checkPasswordPolicy } from '../identity/password-policy'
import { credentialMark, hashPassword } from '../identity/passwords'
import { declaredGroups, declaredSipusers, declaredUsers } from './declarations'
import { requireIds, requireRoles } from './maintain'
import { refreshCaches } from './refresh'

export const users = withHooks(declaredUsers, {
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
      yield* requireIds(u, declaredGroups, change.after.groups, 'groups')
      yield* requireRoles(u, change.after.roles, 'roles')
    } else {
      // SIP accounts of a deleted user stay, unattached
      for (const account of yield* repo(declaredSipusers.table).idsWhere(domain, 'iduser', id)) {
        yield* repo(declaredSipusers.table).update(u.w, account, (doc) => ({ ...doc, iduser: NIL_UUID }))
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
