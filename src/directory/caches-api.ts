/**
 * The routes of the derived caches (./cache-collections.ts) beyond the standard factories: a
 * subordination read by its top, and the one write the caches allow, a user's direct groups.
 */
import * as v from 'valibot'
import type { Doc } from '~storage/doc'
import { patchEntity, sameId } from '../entities/writes'
import { ApiError, badRequest, notFound } from '../errors'
import { itemAnswer, NOT_FOUND } from '../http/collection-schemas'
import { parseFlat, parseMask } from '../query/list-query'
import { present } from '../query/present'
import { ITEM_PARAMS, NoQuery, queryOf } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer, IdParams, UuidParam } from '../http/schemas'
import { JsonObject, Uuid } from '../values'
import { subordinationsCaches, USER_CACHE, usersCaches } from './cache-collections'
import { uuidList } from './schemas'
import { users } from './users'

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
