/**
 * Records of model classes: list, read, create, replace, patch, delete, lookup and clear, each
 * through the class's repository (so every change is journaled) and by the class's rules. Answers
 * are documents; the HTTP answer (a list's text, kept until the next write) is ./records-api.ts's.
 */
import type { Doc } from '~storage/doc'
import type { Literal, OrderItem } from '~storage/query'
import { isoTime } from '../clock'
import type { Ctx } from '../context'
import { commit, commitLong } from '../entities/unit'
import { bodyObject, sameId } from '../entities/writes'
import { ApiError, badRequest, notFound } from '../errors'
import { JsonText } from '~storage/json-text'
import { encodeCursor, parseFlat, parseListParams, parseMask, withEqualities } from '../query/list-query'
import { present } from '../query/present'
import { lookupIds } from '../entities/lookup'
import { givenId, newId } from '../ids'
import type { ClassModel } from './class-model'
import { countList } from '../entities/lists'
import { listScope, readPage } from './list-budgets'
import { validateRecord } from './properties'
import { definitionsCurrent, withCurrentModel } from './current-model'
import { checkAddressing, inDay, rangeOf, type Target } from './partitions'

/** The list language's parameters (src/query/list-query.ts), as strings. */
export type Query = Record<string, string | undefined>

/**
 * The records a caller may reach, as equalities on properties (a SIP account's callback orders
 * are those of its phone number): ANDed into lists, and a record outside it is not found.
 */
export type Scope = Record<string, Literal>

const inScope = (doc: Doc, scope: Scope) => Object.entries(scope).every(([k, v]) => doc[k] === v)

export function repoOf(ctx: Ctx, model: ClassModel) {
  if (!model.table) throw badRequest(`${model.classname} is an abstract class: it has no records`, 'classname')
  return ctx.deps.repo(model.table)
}

export interface ListOptions {
  scope?: Scope
  defaultOrder?: OrderItem[]
  /** Told the X-Total-Count (count=true) and the X-Next-After of a full page. */
  total?: (n: number) => void
  next?: (cursor: string) => void
}

/**
 * Each class model as loaded: a class changed (or loaded again) is another model, and what was made
 * from its lists by the one before (texts, kept answers) is not its own.
 */
const modelSerials = new WeakMap<ClassModel, number>()
let lastSerial = 0
export function serialOf(model: ClassModel): number {
  let serial = modelSerials.get(model)
  if (serial === undefined) {
    serial = ++lastSerial
    modelSerials.set(model, serial)
  }
  return serial
}

export function listRecords(ctx: Ctx, model: ClassModel, t: Target, params: Query, options: ListOptions = {}) {
  return withCurrentModel(ctx, model, async (m) => {
    const { docs, shape } = await recordsPage(ctx, m, t, params, options)
    return docs.map(shape)
  })
}

/**
 * A page of records: the docs as stored, how to present one (`shape`), and a key of that presentation
 * (`presented`: the class as loaded, the mask and flat), which the adapter keeps texts by.
 */
export async function recordsPage(ctx: Ctx, model: ClassModel, t: Target, params: Query, options: ListOptions) {
  const repo = repoOf(ctx, model)
  checkAddressing(model, t)
  const { query, mask, flat, count } = parseListParams(params, {
    fields: model.fields,
    output: model.output,
    limits: model.limits,
    instants: model.instants,
    extra: model.partition ? ['interval'] : [],
  })
  if (options.scope) query.filter = withEqualities(query.filter, options.scope)
  const range = rangeOf(model, t, params.interval)
  // a partition or an interval reads newest first unless asked otherwise
  const newestFirst = model.partition ? [{ field: model.partition.property, desc: true }] : []
  if (params.order === undefined) query.order = options.defaultOrder ?? newestFirst
  const { docs, next } = await readPage(ctx, model, repo, query, range)
  if (count) options.total?.(await countList(ctx, repo, query, listScope(ctx, range)))
  if (next) options.next?.(encodeCursor(next))
  const paths = mask ?? model.defaultOutput
  const presented = `${serialOf(model)}\u0000${paths ? JSON.stringify(paths) : ''}\u0000${flat}`
  return { docs, shape: (d: Doc) => present(d, paths, flat), presented }
}

/**
 * Throws 404 unless the record lies on the day its path names and within the scope (checked inside
 * the write's transaction).
 */
function reachable(model: ClassModel, t: Target, scope: Scope): (doc: Doc) => void {
  return (doc) => {
    if (t.date && model.partition && doc[model.partition.property] !== undefined && !inDay(model, doc, t.date)) {
      throw notFound(`no record ${t.id} in ${model.classname} on ${t.date}`)
    }
    if (!inScope(doc, scope)) throw notFound(`no record ${t.id} in ${model.classname}`)
  }
}

async function current(ctx: Ctx, model: ClassModel, t: Target, scope: Scope): Promise<Doc> {
  checkAddressing(model, t)
  const doc = await repoOf(ctx, model).get(ctx.domain, t.id!, ctx.deps.clock.now())
  if (!doc) throw notFound(`no record ${t.id} in ${model.classname}`)
  reachable(model, t, scope)(doc)
  return doc
}

export function readRecord(ctx: Ctx, model: ClassModel, t: Target, params: Query, scope: Scope = {}) {
  return withCurrentModel(ctx, model, (m) => recordOf(ctx, m, t, params, scope))
}

async function recordOf(ctx: Ctx, model: ClassModel, t: Target, params: Query, scope: Scope) {
  const mask = params.mask === undefined ? null : parseMask(params.mask, model.fields)
  const flat = parseFlat(params.flat)
  if (!mask && !flat && !t.date && Object.keys(scope).length === 0) {
    checkAddressing(model, t)
    const text = await repoOf(ctx, model).getText(ctx.domain, t.id!, ctx.deps.clock.now())
    if (text === undefined) throw notFound(`no record ${t.id} in ${model.classname}`)
    return new JsonText(text)
  }
  return present(await current(ctx, model, t, scope), mask, flat)
}

/** A record without its lifetime's start gets the time of its creation. */
function stampExpiry(ctx: Ctx, model: ClassModel, body: Doc): Doc {
  if (!model.expiry || body[model.expiry.ts] !== undefined) return body
  const now = ctx.deps.clock.now()
  return { ...body, [model.expiry.ts]: model.expiry.tsType === 'long' ? now : isoTime(now) }
}

function requirePartition(model: ClassModel, doc: Doc): void {
  if (model.partition && (doc[model.partition.property] === undefined || doc[model.partition.property] === null)) {
    throw badRequest(
      `${model.partition.property} is required: it places the record in its ${model.storageMode} partition`,
      model.partition.property,
    )
  }
}

function refuseChangesToLog(model: ClassModel): void {
  if (model.storageMode === 'transactionlog')
    throw new ApiError(405, `${model.classname} is a transaction log: its records cannot change`)
}

export function createRecord(ctx: Ctx, model: ClassModel, body: unknown): Promise<Doc> {
  return withCurrentModel(ctx, model, (m) => {
    const repo = repoOf(ctx, m)
    const input = bodyObject(body)
    const id = input.id === undefined ? newId() : givenId(input.id)
    const doc = { id, ...validateRecord(stampExpiry(ctx, m, input), m.rules, 'create') }
    requirePartition(m, doc)
    return commit(ctx, function* (u) {
      yield* definitionsCurrent(ctx, m)
      return yield* repo.insert(u.w, doc)
    })
  })
}

/** A condition on the record as the write's transaction finds it (If-Match): it throws to refuse the write. */
export type RecordCheck = (current: Doc) => void

/** PUT and PATCH: the new record is made from the request body and the current record, in the write's transaction. */
export async function changeRecord(
  ctx: Ctx,
  model: ClassModel,
  t: Target,
  body: unknown,
  make: (input: Doc, current: Doc) => Doc,
  scope: Scope = {},
  check?: RecordCheck,
): Promise<Doc> {
  refuseChangesToLog(model)
  const input = bodyObject(body)
  sameId(input, t.id!)
  checkAddressing(model, t)
  const repo = repoOf(ctx, model)
  const updated = await commit(ctx, function* (u) {
    yield* definitionsCurrent(ctx, model)
    return yield* repo.update(u.w, t.id!, (cur) => {
      reachable(model, t, scope)(cur)
      check?.(cur)
      const doc: Doc = { id: t.id, ...make(input, cur) }
      requirePartition(model, doc)
      return doc
    })
  })
  if (!updated) throw notFound(`no record ${t.id} in ${model.classname}`)
  return updated
}

export function replaceRecord(ctx: Ctx, model: ClassModel, t: Target, body: unknown, check?: RecordCheck) {
  return withCurrentModel(ctx, model, (m) => {
    const make = (input: Doc, cur: Doc) => {
      const doc = validateRecord(input, m.rules, 'replace')
      if (m.expiry && doc[m.expiry.ts] === undefined) doc[m.expiry.ts] = cur[m.expiry.ts] // the lifetime still counts from creation
      return doc
    }
    return changeRecord(ctx, m, t, body, make, {}, check)
  })
}

export function patchRecord(ctx: Ctx, model: ClassModel, t: Target, body: unknown, check?: RecordCheck) {
  return withCurrentModel(ctx, model, (m) =>
    changeRecord(ctx, m, t, body, (input, cur) => validateRecord(input, m.rules, 'patch', cur), {}, check),
  )
}

export function deleteRecord(ctx: Ctx, model: ClassModel, t: Target, scope: Scope = {}, check?: RecordCheck) {
  return withCurrentModel(ctx, model, async (m) => {
    refuseChangesToLog(m)
    checkAddressing(m, t)
    const repo = repoOf(ctx, m)
    const allowed = (cur: Doc) => {
      reachable(m, t, scope)(cur)
      check?.(cur)
    }
    const removed = await commit(ctx, function* (u) {
      yield* definitionsCurrent(ctx, m)
      return yield* repo.remove(u.w, t.id!, allowed)
    })
    if (!removed) throw notFound(`no record ${t.id} in ${m.classname}`)
  })
}

/** CLEAR: every record of the class goes, each deletion journaled. */
export function clearRecords(ctx: Ctx, model: ClassModel): Promise<{ deleted: number }> {
  return withCurrentModel(ctx, model, async (m) => {
    const repo = repoOf(ctx, m)
    const work = { kind: 'clear', key: m.classname }
    const deleted = await commitLong(ctx, work, function* (u) {
      yield* definitionsCurrent(ctx, m)
      return yield* repo.removeAll(u.w, undefined, u.progress)
    })
    return { deleted }
  })
}

/** LOOKUP: ids of the records whose id or lookup properties (opts.lookup_properties) equal the key. */
export function lookupRecords(ctx: Ctx, model: ClassModel, key: unknown, t?: Target, interval?: string) {
  return withCurrentModel(ctx, model, (m) => lookupIn(ctx, m, key, t, interval))
}

function lookupIn(ctx: Ctx, model: ClassModel, key: unknown, t?: Target, interval?: string) {
  const fields = ['id', ...model.lookup.filter((f) => f !== 'id')]
  // a partitioned class looks in the partition or interval given, or everywhere without one
  const range = model.partition && (t?.date || interval !== undefined) ? rangeOf(model, t!, interval) : undefined
  return lookupIds(repoOf(ctx, model), ctx.domain, fields, key, ctx.deps.clock.now(), range)
}
