/**
 * Which collection a websocket subscription's `classpath` names, and whether a subscriber may read a
 * changed record when its change is pushed. A classpath is the REST path of a collection: a static
 * entity's (`/rest/v1/domain/users`, from the entity registry) or a model class's
 * (`/rest/v1/model/<classname>`). Reading is decided as a GET of the collection or of the record
 * would be: the route serving that path, and the subscriber's roles read live.
 */
import { accountOrdersTarget } from '../callbacks/callback-orders'
import type { Ctx } from '../context'
import { entities } from '../entities/registry'
import { badRequest } from '../errors'
import { dataClassOf, type PlatformEvent } from '../events/event'
import { str } from '~storage/doc'
import { grants } from '../identity/access'
import { withoutTrailingSlashes } from './frames'
import type { PushTarget } from './push-target'

const MODEL_PREFIX = '/rest/v1/model/'

/** Collections other than an entity's or a model class's whose changes can be pushed: views over a class. */
const SPECIAL: ((ctx: Ctx, classpath: string) => Promise<PushTarget | null>)[] = [accountOrdersTarget]

/** The collection a classpath names in the context's domain; a 400 naming `classpath` when none. */
export async function resolveClasspath(ctx: Ctx, raw: unknown): Promise<PushTarget> {
  if (typeof raw !== 'string' || !raw.startsWith('/rest/v1/') || raw.length > 512)
    throw badRequest('classpath must be the REST path of a collection, such as /rest/v1/domain/users', 'classpath')
  const classpath = withoutTrailingSlashes(raw)
  const entity = entities().find((e) => e.path === classpath)
  if (entity)
    return { classpath, dataClass: entity.table.objtype, fields: entity.fields, objtype: entity.table.objtype }
  if (classpath.startsWith(MODEL_PREFIX)) {
    const name = classpath.slice(MODEL_PREFIX.length)
    const model = (await ctx.deps.model.classes(ctx.domain)).get(name)
    if (model?.table)
      return { classpath, dataClass: model.classname, fields: model.fields, objtype: `model/${model.classname}` }
  }
  for (const resolve of SPECIAL) {
    const target = await resolve(ctx, classpath)
    if (target) return target
  }
  throw badRequest(`classpath: no collection at ${classpath} whose changes can be pushed`, 'classpath')
}

/**
 * The REST path of the collection a journal objtype belongs to: an entity's (`user`), else a model
 * class's (`model/orders`, or a bare classname such as `orders`: `/rest/v1/model/orders`), as
 * collectionNamed (subscribed-objects.ts) resolves a subscription's names.
 */
export function collectionPathOf(objtype: string): string | undefined {
  if (!objtype) return undefined
  const entity = entities().find((e) => e.table.objtype === objtype)
  if (entity?.path) return entity.path
  return MODEL_PREFIX + dataClassOf(objtype)
}

/** The REST path of the collection a data change changed: by its objtype, else by its data class. */
export function changedCollection(event: PlatformEvent): string | undefined {
  return collectionPathOf(event.objtype ?? str(event.data, 'class'))
}

/**
 * Whether the context may read the record `id` of the collection at `collectionPath`: a GET of
 * the collection or of the record would be admitted. Routes open to every session (a user's own
 * callback orders) admit any subscriber; the subscription's own conditions narrow what it sees.
 */
export function mayRead(ctx: Ctx, collectionPath: string | undefined, id: string): boolean | Promise<boolean> {
  if (ctx.roles.includes('admin')) return true
  if (!collectionPath) return false
  const { readAccess, access } = ctx.deps
  const paths = [collectionPath, `${collectionPath}/${id}`]
  const guarded: string[] = []
  for (const path of paths) {
    const rule = readAccess.of(path)
    if (rule === null) continue
    if (rule !== 'permission') return true
    guarded.push(path)
  }
  if (!guarded.length) return false
  const check = (byRole: Awaited<ReturnType<typeof access.grantsOf>>) =>
    guarded.some((path) => grants(ctx.roles, byRole, 'GET', path))
  const byRole = access.grantsOf(ctx.domain)
  return byRole instanceof Promise ? byRole.then(check) : check(byRole)
}
