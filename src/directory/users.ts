/** Users (/rest/v1/domain/users): login unique per domain, write-only password, groups and roles. */
import * as v from 'valibot'
import { sipuserIdsOf } from '~storage/directory'
import type { Doc } from '~storage/doc'
import { COMMON_FIELDS, defineEntity, ext, opts, text, withDefaults } from '../entities/entity'
import { usersTable } from '../identity/directory'
import { hashPassword } from '../identity/passwords'
import { checkPasswordPolicy } from '../identity/password-policy'
import { NIL_UUID } from '../http/req'
import { sipusersTable } from './sipusers'
import { rebuildCaches, requireIds, requireRoles } from './maintain'
import { email, login, roleList, uuidList } from './schemas'

export const users = defineEntity({
  name: 'user',
  table: usersTable,
  fields: [...COMMON_FIELDS, 'login', 'name', 'groups', 'roles', 'opts.email', 'opts.tags', 'opts.self_registered'],
  listFields: ['id', 'login', 'name', 'opts.title', 'opts.email', 'ext.lwt', 'ext.ct'],
  lookupFields: ['id', 'login'],
  create: {
    login,
    name: v.optional(text(255)),
    pwd: v.optional(v.string()),
    groups: v.optional(uuidList),
    roles: v.optional(roleList),
    opts: opts({
      email: v.optional(email),
      tags: v.optional(v.array(text(64))),
      self_registered: v.optional(v.boolean()),
    }),
    ext,
  },
  // the password never reaches the doc: prepare() turns it into a hash in a hidden column
  virtual: ['pwd'],
  finish: (doc: Doc) => withDefaults(doc, { name: '', groups: [], roles: [] }),
  hooks: {
    async prepare(req, input) {
      if (input.pwd === undefined) return { input }
      await checkPasswordPolicy(req.deps, req.domain, input.pwd as string)
      return { input, hidden: { pwd_hash: await hashPassword(input.pwd as string) } }
    },
    *inTransaction(req, w, change) {
      if (change.after) {
        yield* requireIds('groups', w.domain, change.after.groups, 'groups')
        yield* requireRoles(w.domain, change.after.roles, 'roles')
      } else {
        // SIP accounts of a deleted user stay, unattached
        const accounts = req.deps.repo(sipusersTable)
        for (const id of yield* sipuserIdsOf(w.domain, change.before!.id as string)) {
          yield* accounts.update(w, id, (doc) => ({ ...doc, iduser: NIL_UUID }))
        }
      }
      yield* rebuildCaches(w.domain)
    },
    async afterCommit(req, change) {
      await req.deps.access.invalidate(req.domain)
      const id = (change.before ?? change.after)!.id as string
      // a deleted account signs out everywhere; a new password ends the account's other sessions
      if (!change.after) await req.deps.sessions.destroyUser(req.domain, id)
      else if (change.before && change.input?.pwd !== undefined)
        await req.deps.sessions.destroyUser(req.domain, id, req.session?.id)
    },
  },
})
