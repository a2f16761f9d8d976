/** The derived caches as collections (read-only), and the one write they allow: a user's direct groups. */
import * as v from 'valibot'
import { GROUP_USERS, SUBORDINATES } from '~storage/directory-edges'
import type { Doc } from '~storage/doc'
import type { AssembledField } from '~storage/table'
import { defineCollection } from '../entities/entity'
import { validate } from '../entities/validate'
import { bodyObject, patchEntity, sameId } from '../entities/writes'
import { ApiError, badRequest, notFound } from '../errors'
import { parseFlat, parseMask } from '../http/list-query'
import { present } from '../http/present'
import { defineRoute } from '../http/route'
import { Uuid } from '../http/schemas'
import { uuidList } from './schemas'
import { users } from './users'

/**
 * A cache table: derived data, rewritten row by row by the directory changes that affect it
 * (./refresh.ts) and never journaled; member lists are assembled from indexed edges when read.
 */
const cache = (
  name: string,
  table: string,
  idField: string,
  members: v.ObjectEntries,
  assembled?: Record<string, AssembledField>,
) =>
  defineCollection({
    name,
    table: { table, objtype: name, idField, stamps: false, journal: false, bare: true, assembled },
    fields: Object.keys(members),
    listFields: Object.keys(members),
    lookupFields: [idField],
    doc: v.strictObject(members),
  })

const ids = v.array(Uuid)
const roleNames = v.array(v.string())

export const usersCaches = cache('user cache', 'users_caches', 'id', {
  id: Uuid,
  direct_groups: ids,
  direct_roles: roleNames,
  deep_groups: ids,
  deep_roles: roleNames,
})
export const groupsCaches = cache(
  'group cache',
  'groups_caches',
  'id',
  {
    id: Uuid,
    direct_parents: ids,
    direct_children: ids,
    direct_users: ids,
    direct_roles: roleNames,
    deep_parents: ids,
    deep_children: ids,
    deep_users: ids,
    deep_roles: roleNames,
  },
  GROUP_USERS,
)
export const subordinationsCaches = cache(
  'subordination cache',
  'subordinations_caches',
  'top',
  { top: Uuid, sub: ids },
  SUBORDINATES,
)

/** GET /subordinations_caches/<top>: keyed by the superior's user id. */
export const readSubordination = defineRoute({
  async handle(req) {
    const top = req.uuidParam('top')
    const doc = await req.deps.repo(subordinationsCaches.table).get(req.ctx.domain, top)
    if (!doc) throw notFound(`no subordination cache for ${top}`)
    const mask = req.query.mask === undefined ? null : parseMask(req.query.mask, subordinationsCaches.fields)
    return present(doc, mask, parseFlat(req.query.flat))
  },
})

/**
 * PATCH /users_caches/<id>: only `direct_groups` is applied (other members are ignored, as the
 * original does); it becomes the user's groups. Answers the id and the members that changed.
 */
export const patchUserCache = defineRoute({
  async handle(req) {
    const { ctx } = req
    const id = req.uuidParam('id')
    const body = bodyObject(await req.json())
    sameId(body, id)
    const caches = req.deps.repo(usersCaches.table)
    const before = await caches.get(ctx.domain, id)
    if (!before) throw notFound(`user ${id} not found`)
    if (body.direct_groups === undefined) return { id }
    const { direct_groups } = validate(v.object({ direct_groups: uuidList }), { direct_groups: body.direct_groups })
    await patchEntity(ctx, users, id, { groups: direct_groups }).catch((err: unknown) => {
      // the user's `groups` field is this cache's `direct_groups`
      if (err instanceof ApiError && err.details?.field === 'groups') {
        throw badRequest(err.message.replace(/^groups/, 'direct_groups'), 'direct_groups')
      }
      throw err
    })
    const after = (await caches.get(ctx.domain, id))!
    const changed: Doc = { id }
    for (const [key, value] of Object.entries(after)) {
      if (JSON.stringify(value) !== JSON.stringify(before[key])) changed[key] = value
    }
    return changed
  },
})
