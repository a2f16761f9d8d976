/** The derived caches as collections (read-only), and the one write they allow: a user's direct groups. */
import * as v from 'valibot'
import { GROUP_USERS, SUBORDINATES } from '~storage/directory-edges'
import type { Doc } from '~storage/doc'
import type { AssembledField } from '~storage/table'
import { defineCollection } from '../entities/entity'
import { patchEntity, sameId } from '../entities/writes'
import { ApiError, badRequest, notFound } from '../errors'
import { itemAnswer, NOT_FOUND } from '../http/collection-schemas'
import { parseFlat, parseMask } from '../query/list-query'
import { present } from '../query/present'
import { ITEM_PARAMS, NoQuery, queryOf } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer, IdParams, UuidParam } from '../http/schemas'
import { JsonObject, Uuid } from '../values'
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

const USER_CACHE = {
  id: Uuid,
  direct_groups: ids,
  direct_roles: roleNames,
  deep_groups: ids,
  deep_roles: roleNames,
}
export const usersCaches = cache('user cache', 'users_caches', 'id', USER_CACHE)
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
  summary: 'Read the subordinates of a user',
  description: 'The users `top` is the superior of (itself included), by the id of the superior.',
  params: v.object({ top: UuidParam }),
  query: queryOf(ITEM_PARAMS),
  response: { 200: itemAnswer(subordinationsCaches), ...NOT_FOUND },
  async handle(req) {
    const { top } = req.params
    const doc = await req.deps.repo(subordinationsCaches.table).get(req.ctx.domain, top)
    if (!doc) throw notFound(`no subordination cache for ${top}`)
    const mask = req.query.mask === undefined ? null : parseMask(req.query.mask, subordinationsCaches.fields)
    return present(doc, mask, parseFlat(req.query.flat))
  },
})

/** Other members of a cache are taken and ignored, as the original does. */
const CacheChange = v.pipe(
  JsonObject,
  v.looseObject({
    id: v.optional(v.pipe(v.string(), v.description('the addressed one, when given'))),
    direct_groups: v.optional(uuidList),
  }),
)
/** The id, and the members of the cache that changed. */
const ChangedCache = v.strictObject({ ...v.partial(v.strictObject(USER_CACHE)).entries, id: Uuid })

/**
 * PATCH /users_caches/<id>: only `direct_groups` is applied (other members are ignored, as the
 * original does); it becomes the user's groups. Answers the id and the members that changed.
 */
export const patchUserCache = defineRoute({
  summary: "Set a user's groups through its cache",
  description:
    "Only `direct_groups` is applied (other members are ignored): it becomes the user's groups, journaled as " +
    'an update of the user. Answers the id and the members of the cache that changed.',
  params: IdParams,
  query: NoQuery,
  body: CacheChange,
  response: { 200: answer(ChangedCache), ...NOT_FOUND },
  async handle(req) {
    const { ctx } = req
    const { id } = req.params
    const body = req.body
    sameId(body, id)
    const caches = req.deps.repo(usersCaches.table)
    const before = await caches.get(ctx.domain, id)
    if (!before) throw notFound(`user ${id} not found`)
    const { direct_groups } = body
    if (direct_groups === undefined) return { id }
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
