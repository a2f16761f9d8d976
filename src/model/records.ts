/**
 * Records of model classes: list, read, create, replace, patch, delete, lookup and clear, each
 * through the class's repository (so every change is journaled) and by the class's rules.
 */
import type { Doc } from '~storage/doc'
import type { Literal, OrderItem } from '~storage/query'
import { partitionsOf } from '~storage/model-tables'
import type { ColumnRange } from '~storage/repository'
import { DAY_MS, isoTime } from '../clock'
import type { Ctx } from '../context'
import { commit, commitLong } from '../entities/unit'
import { bodyObject, sameId } from '../entities/writes'
import { ApiError, badRequest, notFound } from '../errors'
import { JsonText } from '~storage/json-text'
import { pageText } from '../http/json'
import { type KeptAnswer, keptAnswer } from '../http/kept-answers'
import { encodeCursor, parseFlat, parseListParams, parseMask } from '../http/list-query'
import { present } from '../http/present'
import { lookupIds, withEqualities } from '../http/resource'
import { givenId, newId } from '../ids'
import type { ClassModel } from './class-model'
import { countList } from '../entities/lists'
import { listScope, readPage } from './list-budgets'
import { validateRecord } from './properties'

type Query = Record<string, string | undefined>

/** A partition in a record path: a day /<YYYY-MM-DD>, a month /<YYYY-MM> or a year /<YYYY>. */
export const DATE = /^\d{4}(-\d{2}(-\d{2})?)?$/

/** Characters of a partition segment by the class's partition_interval. */
export const SEGMENT_LENGTH = { day: 10, month: 7, year: 4 } as const

/** Where a record path points below its class: the collection, a day of it, or one record. */
export interface Target {
  date: string | null
  id: string | null
}

/**
 * The records a caller may reach, as equalities on properties (a SIP account's callback orders
 * are those of its phone number): ANDed into lists, and a record outside it is not found.
 */
export type Scope = Record<string, Literal>

const inScope = (doc: Doc, scope: Scope) => Object.entries(scope).every(([k, v]) => doc[k] === v)

function repoOf(ctx: Ctx, model: ClassModel) {
  if (!model.table) throw badRequest(`${model.classname} is an abstract class: it has no records`, 'classname')
  return ctx.deps.repo(model.table)
}

/** The time a partition segment covers: a day, a month or a year. */
function periodRange(date: string, field: string): ColumnRange {
  const [y, m = 1, d = 1] = date.split('-').map(Number) as [number, number?, number?]
  const start = utc(y, m - 1, d)
  if (Number.isNaN(start) || !new Date(start).toISOString().startsWith(date))
    throw badRequest(`${field}: ${date} is not a date`, field)
  const end = date.length === 10 ? start + DAY_MS : date.length === 7 ? utc(y, m, 1) : utc(y + 1, 0, 1)
  return { column: 'pdate', from: isoBound(start), to: isoBound(end) }
}

/** setUTCFullYear, not Date.UTC, which reads years 0-99 as 1900-1999. */
function utc(year: number, month: number, day: number): number {
  const date = new Date(0)
  return date.setUTCFullYear(year, month, day)
}

/** The first instant of year 10000, past every stored time (they are ISO texts of years 0000-9999). */
const YEAR_10000 = Date.UTC(10000, 0, 1)
/**
 * An instant as the stored times compare with it. toISOString writes year 10000 as
 * `+010000-...`, which sorts before them all: an end from there on is a text that sorts after them.
 */
const isoBound = (ms: number) => (ms >= YEAR_10000 ? '9999-99' : new Date(ms).toISOString())

/** The range a list or LOOKUP of a partitioned class covers: its path's partition, or `interval`. */
function rangeOf(model: ClassModel, t: Target, interval: string | undefined): ColumnRange | undefined {
  if (!model.partition) {
    if (interval !== undefined)
      throw badRequest(`${model.classname} is not partitioned: it takes no interval`, 'interval')
    return undefined
  }
  if (t.date && interval !== undefined)
    throw badRequest('give a partition in the path or an interval, not both', 'interval')
  const range = t.date ? periodRange(t.date, 'date') : parseInterval(interval)
  if (!range)
    throw badRequest(
      `${model.classname} is a ${model.storageMode} class: give interval=["from","to"] or a partition /<${SEGMENT_FORM[model.partition.interval]}>`,
      'interval',
    )
  return range
}
const SEGMENT_FORM = { day: 'YYYY-MM-DD', month: 'YYYY-MM', year: 'YYYY' }

/** A time JavaScript dates can represent (±8.64e15 ms). */
const validTime = (ms: number) => Number.isFinite(ms) && Math.abs(ms) <= 8.64e15

/** `interval=["2026-01-01","2026-01-31"]`: both ends included (a date stands for its whole day). */
export function parseInterval(raw: string | undefined): ColumnRange | null {
  if (raw === undefined) return null
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch {
    throw badRequest('interval is not valid JSON: give ["from","to"]', 'interval')
  }
  if (!Array.isArray(value) || value.length !== 2 || !value.every((x) => typeof x === 'string'))
    throw badRequest('interval must be a JSON array of two dates', 'interval')
  const [from, to] = value as [string, string]
  const start = DATE.test(from) ? Date.parse(`${from}T00:00:00.000Z`) : Date.parse(from)
  const end = DATE.test(to) ? Date.parse(`${to}T00:00:00.000Z`) + DAY_MS : Date.parse(to) + 1
  if (!validTime(start) || !validTime(end))
    throw badRequest('interval: both ends must be dates or dates with times', 'interval')
  if (start >= end) throw badRequest('interval: the start is after the end', 'interval')
  return { column: 'pdate', from: isoBound(start), to: isoBound(end) }
}

/** A partitioned class is read by date; others never are. */
function checkAddressing(model: ClassModel, t: Target): void {
  const partitioned = model.partition !== null
  if (t.date && !partitioned)
    throw badRequest(
      `${model.classname} is not partitioned by date: address records as /${model.classname}/<id>`,
      'date',
    )
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
function serialOf(model: ClassModel): number {
  let serial = modelSerials.get(model)
  if (serial === undefined) modelSerials.set(model, (serial = ++lastSerial))
  return serial
}

export async function listRecords(ctx: Ctx, model: ClassModel, t: Target, params: Query, options: ListOptions = {}) {
  const { docs, shape } = await recordsPage(ctx, model, t, params, options)
  return docs.map(shape)
}

/**
 * `listRecords` as the text HTTP sends, its headers told through `options`. A list asked again before
 * any write is answered as before (../http/kept-answers.ts), but where records expire; a page read
 * again is not presented again either.
 */
export async function listRecordsText(
  ctx: Ctx,
  model: ClassModel,
  t: Target,
  params: Query,
  options: ListOptions = {},
): Promise<JsonText> {
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

async function recordsPage(ctx: Ctx, model: ClassModel, t: Target, params: Query, options: ListOptions) {
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

function inDay(model: ClassModel, doc: Doc, date: string): boolean {
  const value = doc[model.partition!.property] as string
  return new Date(model.partition!.type === 'date' ? `${value}T00:00:00Z` : value).toISOString().startsWith(date)
}

/** GET of a partitioned class's path ending in `/`: the partitions holding records, newest first. */
export async function listPartitions(ctx: Ctx, model: ClassModel): Promise<{ partition: string; records: number }[]> {
  if (!model.partition) throw badRequest(`${model.classname} is not partitioned by date`, 'path')
  const length = SEGMENT_LENGTH[model.partition.interval]
  return partitionsOf(ctx.deps.db, model.table!.table, ctx.domain, length, ctx.deps.clock.now())
}

export async function readRecord(ctx: Ctx, model: ClassModel, t: Target, params: Query, scope: Scope = {}) {
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

export async function createRecord(ctx: Ctx, model: ClassModel, body: unknown): Promise<Doc> {
  const repo = repoOf(ctx, model)
  const input = bodyObject(body)
  const id = input.id === undefined ? newId() : givenId(input.id)
  const doc = { id, ...validateRecord(stampExpiry(ctx, model, input), model.rules, 'create') }
  requirePartition(model, doc)
  return commit(ctx, (u) => repo.insert(u.w, doc))
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
  const updated = await commit(ctx, (u) =>
    repo.update(u.w, t.id!, (cur) => {
      reachable(model, t, scope)(cur)
      check?.(cur)
      const doc: Doc = { id: t.id, ...make(input, cur) }
      requirePartition(model, doc)
      return doc
    }),
  )
  if (!updated) throw notFound(`no record ${t.id} in ${model.classname}`)
  return updated
}

export function replaceRecord(ctx: Ctx, model: ClassModel, t: Target, body: unknown, check?: RecordCheck) {
  const make = (input: Doc, cur: Doc) => {
    const doc = validateRecord(input, model.rules, 'replace')
    if (model.expiry && doc[model.expiry.ts] === undefined) doc[model.expiry.ts] = cur[model.expiry.ts] // the lifetime still counts from creation
    return doc
  }
  return changeRecord(ctx, model, t, body, make, {}, check)
}

export function patchRecord(ctx: Ctx, model: ClassModel, t: Target, body: unknown, check?: RecordCheck) {
  const make = (input: Doc, cur: Doc) => validateRecord(input, model.rules, 'patch', cur)
  return changeRecord(ctx, model, t, body, make, {}, check)
}

export async function deleteRecord(
  ctx: Ctx,
  model: ClassModel,
  t: Target,
  scope: Scope = {},
  check?: RecordCheck,
): Promise<void> {
  refuseChangesToLog(model)
  checkAddressing(model, t)
  const repo = repoOf(ctx, model)
  const allowed = (cur: Doc) => {
    reachable(model, t, scope)(cur)
    check?.(cur)
  }
  if (!(await commit(ctx, (u) => repo.remove(u.w, t.id!, allowed)))) {
    throw notFound(`no record ${t.id} in ${model.classname}`)
  }
}

/** CLEAR: every record of the class goes, each deletion journaled. */
export async function clearRecords(ctx: Ctx, model: ClassModel): Promise<{ deleted: number }> {
  const repo = repoOf(ctx, model)
  const work = { kind: 'clear', key: model.classname }
  return { deleted: await commitLong(ctx, work, (u) => repo.removeAll(u.w, undefined, u.progress)) }
}

/** LOOKUP: ids of the records whose id or lookup properties (opts.lookup_properties) equal the key. */
export function lookupRecords(ctx: Ctx, model: ClassModel, key: unknown, t?: Target, interval?: string) {
  const fields = ['id', ...model.lookup.filter((f) => f !== 'id')]
  // a partitioned class looks in the partition or interval given, or everywhere without one
  const range = model.partition && (t?.date || interval !== undefined) ? rangeOf(model, t!, interval) : undefined
  return lookupIds(repoOf(ctx, model), ctx.domain, fields, key, ctx.deps.clock.now(), range)
}
