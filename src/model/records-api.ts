/**
 * /rest/v1/model/<classname>[/<YYYY-MM-DD>][/<id>]: the records of a class. The classname may hold
 * slashes, so the path is matched against the domain's classnames, longest first.
 */
import { badRequest, notFound } from '../errors'
import type { Req } from '../http/req'
import { ifMatchDoc } from '../http/if-match'
import { isUuid } from '../ids'
import { defineRoute, type RouteSpec } from '../http/route'
import {
  clearRecords,
  createRecord,
  deleteRecord,
  listRecordsText,
  lookupRecords,
  patchRecord,
  readRecord,
  replaceRecord,
} from './records'
import { DATE, listPartitions, type Target } from './partitions'
import type { ClassModel } from './class-model'

async function resolve(req: Req): Promise<{ model: ClassModel; target: Target }> {
  let segments: string[]
  try {
    segments = (req.params['*'] ?? '').split('/').filter(Boolean).map(decodeURIComponent)
  } catch {
    throw badRequest('the path is not valid', 'path')
  }
  // an encoded slash would name another class than the path that role grants are matched against
  if (segments.some((s) => s.includes('/'))) throw badRequest('a path segment may not contain an encoded /', 'path')
  const found = await req.deps.model.resolve(req.ctx.domain, segments)
  if (!found) throw notFound(`no class ${segments.join('/')} in this domain`)
  const rest = found.rest
  let target: Target | null = null
  if (rest.length === 0) target = { date: null, id: null }
  else if (rest.length === 1 && DATE.test(rest[0]!)) target = { date: rest[0]!, id: null }
  else if (rest.length === 1 && isUuid(rest[0])) target = { date: null, id: rest[0]!.toLowerCase() }
  else if (rest.length === 2 && DATE.test(rest[0]!) && isUuid(rest[1]))
    target = { date: rest[0]!, id: rest[1]!.toLowerCase() }
  if (!target)
    throw notFound(
      `no resource ${rest.join('/')} in ${found.model.classname}: records are /<id> or /<YYYY-MM-DD>[/<id>]`,
    )
  return { model: found.model, target }
}

/** A method that serves either the collection or one record, never both. */
function on(what: 'collection' | 'record', handle: (req: Req, model: ClassModel, t: Target) => unknown): RouteSpec {
  return defineRoute({
    async handle(req) {
      const { model, target } = await resolve(req)
      const isRecord = target.id !== null
      if ((what === 'record') !== isRecord)
        throw badRequest(
          `${req.method} applies to ${what === 'record' ? 'one record: /<id>' : 'the collection'}, not to ${isRecord ? 'a record' : 'the collection'}`,
          'path',
        )
      return handle(req, model, target)
    },
  })
}

export const modelGet = defineRoute({
  async handle(req) {
    const { model, target } = await resolve(req)
    if (target.id) return readRecord(req.ctx, model, target, req.query)
    // a path ending in / lists the partitions that hold records (the original's convention)
    if (!target.date && req.path.endsWith('/') && model.partition) return listPartitions(req.ctx, model)
    return listRecordsText(req.ctx, model, target, req.query, {
      total: (n) => (req.headers['x-total-count'] = String(n)),
      next: (cursor) => (req.headers['x-next-after'] = cursor),
    })
  },
})
export const modelPost = on('collection', async (req, model, t) => {
  if (t.date) throw badRequest('records are created on the collection, not on a date', 'path')
  return createRecord(req.ctx, model, await req.json())
})
/** If-Match, checked on the stored record in the write's transaction (GET sends it as stored). */
const ifMatch = (req: Req, model: ClassModel, t: Target) => ifMatchDoc(req, `record ${t.id} of ${model.classname}`)

export const modelPut = on('record', async (req, model, t) =>
  replaceRecord(req.ctx, model, t, await req.json(), ifMatch(req, model, t)),
)
export const modelPatch = on('record', async (req, model, t) =>
  patchRecord(req.ctx, model, t, await req.json(), ifMatch(req, model, t)),
)
export const modelDelete = on('record', (req, model, t) => deleteRecord(req.ctx, model, t, {}, ifMatch(req, model, t)))
export const modelLookup = on('collection', async (req, model, t) =>
  lookupRecords(req.ctx, model, await req.json(), t, req.query.interval),
)
export const modelClear = on('collection', (req, model) => clearRecords(req.ctx, model))
