/** SIP accounts (/rest/v1/uc/sipusers): login, phone number, the user they belong to; the password is for administrators' eyes only. */
import * as v from 'valibot'
import type { TxStep } from '~storage/db'
import type { Doc } from '~storage/doc'
import { COMMON_FIELDS, defineEntity, ext, opts, text, withDefaults } from '../entities/entity'
import { NIL_UUID } from '../ids'
import { requireIds } from './maintain'
import { uuid } from './schemas'
import { users } from './users'

export const sipusers = defineEntity({
  name: 'sipuser',
  table: {
    table: 'sipusers',
    objtype: 'sipuser',
    columns: { login: 'login', phonenumber: 'phonenumber', iduser: 'iduser' },
    secrets: ['pwd'],
  },
  path: '/rest/v1/uc/sipusers',
  domainKind: 'working',
  fields: [...COMMON_FIELDS, 'login', 'phonenumber', 'iduser', 'name'],
  listFields: ['id', 'login', 'phonenumber', 'iduser', 'name', 'opts.title', 'ext.lwt', 'ext.ct'],
  lookupFields: ['id', 'login', 'phonenumber'],
  create: {
    login: v.pipe(
      v.string(),
      v.regex(/^[A-Za-z0-9._@+-]{1,128}$/, 'a SIP login is 1 to 128 letters, digits and . _ @ + -'),
    ),
    phonenumber: v.optional(
      v.pipe(v.string(), v.regex(/^[0-9*#+]{1,32}$/, 'a phone number is up to 32 digits, * # +')),
    ),
    iduser: v.optional(uuid),
    pwd: v.optional(v.pipe(v.string(), v.maxLength(128))),
    name: v.optional(text(255)),
    opts: opts(),
    ext,
  },
  doc: {
    iduser: v.pipe(uuid, v.description('the nil UUID: the account belongs to no user')),
    pwd: v.optional(v.pipe(v.string(), v.description("administrators' eyes only"))),
  },
  finish: (doc) => withDefaults(doc, { iduser: NIL_UUID }),
  hooks: {
    *inTransaction(u, change): TxStep<void> {
      const iduser = change.after?.iduser
      if (iduser && iduser !== NIL_UUID) yield* requireIds(u, users, [iduser], 'iduser')
    },
    // biome-ignore lint/correctness/useYield: a view hook is a TxStep generator; this one reads nothing
    *view(ctx, doc): TxStep<Doc> {
      if (ctx.roles.includes('admin')) return doc
      const { pwd: _pwd, ...rest } = doc
      return rest
    },
  },
})
