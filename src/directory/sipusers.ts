/** The SIP accounts' rules: the user an account belongs to must exist; its password shows to administrators only. The entity's shape is in ./declarations.ts. */
import type { TxStep } from '~storage/db'
import type { Doc } from '~storage/doc'
import { withHooks } from '../entities/entity'
import { NIL_UUID } from '../ids'
import { declaredSipusers, declaredUsers } from './declarations'
import { requireIds } from './maintain'

export const sipusers = withHooks(declaredSipusers, {
  *inTransaction(u, change): TxStep<void> {
    const iduser = change.after?.iduser
    if (iduser && iduser !== NIL_UUID) yield* requireIds(u, declaredUsers, [iduser], 'iduser')
  },
  // biome-ignore lint/correctness/useYield: a view hook is a TxStep generator; this one reads nothing
  *view(ctx, doc): TxStep<Doc> {
    if (ctx.roles.includes('admin')) return doc
    const { pwd: _pwd, ...rest } = doc
    return rest
  },
})
