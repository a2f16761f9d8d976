/**
 * /rest/v1/model/<classname>[/<YYYY-MM-DD>][/<id>]: the records of a class. The classname may hold
 * slashes, so the path is matched against the domain's classnames, longest first. Each class has
 * its own record shape, defined at run time: the schemas here say what every record has (its id);
 * the API description lists each class's properties for a signed-in caller.
 */
import * as v from 'valibot'
import type { Ctx } from '../context'
import { badRequest, notFound } from '../errors'
import type { Req } from '../http/req'
import { ifMatchDoc, newVersion } from '../http/if-match'
import { isUuid } from '../ids'
import { answer, errors, NoContent, type Responses } from '../http/schemas'
import { LookupAnswer, LookupKey } from '../http/resource'
import { NoQuery, queryOf, listQuery } from '../http/query-schemas'
import { defineRoute, type ReqOf, type RouteDefinition } from '../http/route'
import {
  clearRecords,
  createRecord,
  deleteRecord,
  type ListOptions,
  type Query,
  recordsPage,
  repoOf,
  serialOf,
  lookupRecords,
  patchRecord,
  readRecord,
  replaceRecord,
} from './records'
import { DATE, listPartitions, type Target } from './partitions'
import { withCurrentModel } from './current-model'
import type { JsonText } from '~storage/json-text'
import { pageText } from '../http/json'
import { type KeptAnswer, keptAnswer } from '../http/kept-answers'
import type { ClassModel } from './class-model'
import { JsonObject, Uuid } from '../values'

// ---- the schemas of the record routes ----

/** The rest of the path: the classname (slashes and all), then an optional partition and record id. */
const ModelPath = v.object({
  '*': v.pipe(
    v.string(),
    v.description(
      '<classname>[/<YYYY-MM-DD>][/<id>]: the classname may hold slashes; the partition is a day, month or year',
    ),
  ),
})

/** `interval` of a partitioned class's list or LOOKUP. */
const Interval = v.optional(
  v.pipe(v.string(), v.description('partitioned classes: JSON ["from","to"], dates or instants, both ends included')),
)

/** A record as stored: its id and the properties of its class. */
const StoredRecord = v.looseObject({ id: Uuid })
/** A record as a GET presents it: a mask, or the class's opts.max_mask, may leave the id out. */
const PresentedRecord = v.looseObject({ id: v.optional(Uuid) })
const Partition = v.strictObject({
  partition: v.pipe(v.string(), v.description('YYYY, YYYY-MM or YYYY-MM-DD, by the partition_interval of the class')),
  records: v.pipe(v.number(), v.integer()),
})

/** A write's body: the record's properties (checked against the class), and the id a create may give. */
const RecordBody = JsonObject

/** GET: the list (on the class or a partition), one record (on /<id>), or the partitions (on a path ending in /). */
const ModelGetAnswer = answer(v.union([v.array(PresentedRecord), PresentedRecord, v.array(Partition)]))
const RecordAnswer = answer(StoredRecord)
const Cleared = answer(v.strictObject({ deleted: v.pipe(v.number(), v.integer()) }))

/** 404: no such class or record; 405: a transaction log's records do not change; 412: If-Match. */
const RECORD_WRITE_ERRORS = errors(404, 405, 412)

/**
 * `listRecords` as the text HTTP sends, its headers told through `options`. A list asked again before
 * any write is answered as before (../http/kept-answers.ts), but where records expire; a page read
 * again is not presented again either.
 */
function listRecordsText(
  ctx: Ctx,
  model: ClassModel,
  t: Target,
  params: Query,
  options: ListOptions = {},
): Promise<JsonText> {
  return withCurrentModel(ctx, model, (m) => recordsText(ctx, m, t, params, options))
}

async function recordsText(ctx: Ctx, model: ClassModel, t: Target, params: Query, options: ListOptions) {
  const make = async (): Promise<KeptAnswer> => {
    const headers: Record<string, string> = {}
    const told = {
      ...options,
      total: (n: number) => (headers['x-total-count'] = String(n)),
      next: (cursor: string) => (headers['x-next-after'] = cursor),
    }
    const { docs, shape, presented } = await recordsPage(ctx, model, t, params, told)
    return { text: pageText(docs, presented, () => docs.map(shape)), headers }
  }
  const repo = repoOf(ctx, model)
  // the time alone ends an expiring record: such lists are never kept
  const keep = !repo.spec.expiring && !options.scope && !options.defaultOrder
  const key = `${ctx.domain}\u0000${serialOf(model)}\u0000${t.date ?? ''}\u0000${JSON.stringify(params)}`
  const answer = keep ? await keptAnswer(repo.db, key, make) : await make()
  const { 'x-total-count': total, 'x-next-after': next } = answer.headers
  if (total !== undefined) options.total?.(Number(total))
  if (next !== undefined) options.next?.(next)
  return answer.text
}

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

type Schema = v.GenericSchema
type ModelRoute<Q, B, R extends Responses> = Omit<RouteDefinition<typeof ModelPath, Q, B, R>, 'params' | 'handle'> & {
  handle(req: ReqOf<typeof ModelPath, Q, B>, model: ClassModel, t: Target): unknown
}

/** A method that serves either the collection or one record, never both. */
function on<
  const Q extends Schema,
  const B extends Schema | undefined = undefined,
  const R extends Responses = Responses,
>(what: 'collection' | 'record', def: ModelRoute<Q, B, R>) {
  return defineRoute({
    ...def,
    params: ModelPath,
    async handle(req: ReqOf<typeof ModelPath, Q, B>) {
      const { model, target } = await resolve(req)
      const isRecord = target.id !== null
      if ((what === 'record') !== isRecord)
        throw badRequest(
          `${req.method} applies to ${what === 'record' ? 'one record: /<id>' : 'the collection'}, not to ${isRecord ? 'a record' : 'the collection'}`,
          'path',
        )
      return def.handle(req, model, target)
    },
  })
}

export const modelGet = defineRoute({
  summary: 'List the records of a class, or read one',
  description:
    'On the class: its records, filtered, ordered and paged by the list parameters (a partitioned class takes ' +
    'a partition /<YYYY-MM-DD> in the path or `interval`); a full page carries X-Next-After. On /<id>: the record, ' +
    'with a strong ETag. On a partitioned class, a path ending in / lists the partitions holding records.',
  params: ModelPath,
  query: listQuery({ interval: Interval }),
  response: { 200: ModelGetAnswer, 304: NoContent, ...errors(404) },
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

export const modelPost = on('collection', {
  summary: 'Create a record of a class',
  description:
    'The body holds the properties of the class (checked by data type; unknown ones are refused) and may give ' +
    'the id. Defaults fill what is missing; the answer is the record as stored, with the ETag a GET of it answers.',
  query: NoQuery,
  body: RecordBody,
  response: { 200: RecordAnswer, ...errors(404, 409) },
  async handle(req, model, t) {
    if (t.date) throw badRequest('records are created on the collection, not on a date', 'path')
    return newVersion(req, await createRecord(req.ctx, model, req.body))
  },
})

/** If-Match, checked on the stored record in the write's transaction (GET sends it as stored). */
const ifMatch = (req: Req, model: ClassModel, t: Target) => ifMatchDoc(req, `record ${t.id} of ${model.classname}`)

export const modelPut = on('record', {
  summary: 'Replace a record',
  description:
    'The body is the whole new record (defaults fill what is missing); the answer is the record as stored, with ' +
    'its new ETag. The records of a transaction log cannot change (405). With If-Match, only the version whose ' +
    'ETag it names is replaced (412 otherwise).',
  query: NoQuery,
  body: RecordBody,
  response: { 200: RecordAnswer, ...RECORD_WRITE_ERRORS },
  handle: async (req, model, t) =>
    newVersion(req, await replaceRecord(req.ctx, model, t, req.body, ifMatch(req, model, t))),
})

export const modelPatch = on('record', {
  summary: 'Change a record',
  description:
    'Changes the properties given (null removes one) and answers the record whole, with its new ETag. The records of a ' +
    'transaction log cannot change (405). With If-Match, only the version whose ETag it names is changed ' +
    '(412 otherwise).',
  query: NoQuery,
  body: RecordBody,
  response: { 200: RecordAnswer, ...RECORD_WRITE_ERRORS },
  handle: async (req, model, t) =>
    newVersion(req, await patchRecord(req.ctx, model, t, req.body, ifMatch(req, model, t))),
})

export const modelDelete = on('record', {
  summary: 'Delete a record',
  description:
    'The records of a transaction log cannot be deleted (405). With If-Match, only the version whose ETag it ' +
    'names is deleted (412 otherwise).',
  query: NoQuery,
  response: { 204: NoContent, ...RECORD_WRITE_ERRORS },
  handle: (req, model, t) => deleteRecord(req.ctx, model, t, {}, ifMatch(req, model, t)),
})

export const modelLookup = on('collection', {
  summary: 'Look up records by key',
  description:
    'The ids of the records whose id or lookup properties (opts.lookup_properties) equal the key, a JSON string ' +
    'or number; 404 when none does. A partitioned class looks in the partition or `interval` given, else everywhere.',
  query: queryOf({ interval: Interval }),
  body: LookupKey,
  response: { 200: LookupAnswer, ...errors(404) },
  handle: (req, model, t) => lookupRecords(req.ctx, model, req.body, t, req.query.interval),
})

export const modelClear = on('collection', {
  summary: 'Delete every record of a class',
  description: 'Each deletion is journaled; the answer counts them.',
  query: NoQuery,
  response: { 200: Cleared, ...errors(404) },
  handle: (req, model) => clearRecords(req.ctx, model),
})
