/** Records of partitioned classes: the dates in record paths, the ranges they and `interval` cover, the partitions. */
import type { ColumnRange } from '~storage/repository'
import type { Doc } from '~storage/doc'
import { partitionsOf } from '~storage/model-tables'
import { DAY_MS } from '../clock'
import type { Ctx } from '../context'
import { badRequest } from '../errors'
import type { ClassModel } from './class-model'
import { withCurrentModel } from './current-model'
/** A partition in a record path: a day /<YYYY-MM-DD>, a month /<YYYY-MM> or a year /<YYYY>. */
export const DATE = /^\d{4}(-\d{2}(-\d{2})?)?$/

/** Characters of a partition segment by the class's partition_interval. */
export const SEGMENT_LENGTH = { day: 10, month: 7, year: 4 } as const

/** Where a record path points below its class: the collection, a day of it, or one record. */
export interface Target {
  date: string | null
  id: string | null
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
export function rangeOf(model: ClassModel, t: Target, interval: string | undefined): ColumnRange | undefined {
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
export function checkAddressing(model: ClassModel, t: Target): void {
  const partitioned = model.partition !== null
  if (t.date && !partitioned)
    throw badRequest(
      `${model.classname} is not partitioned by date: address records as /${model.classname}/<id>`,
      'date',
    )
}

export function inDay(model: ClassModel, doc: Doc, date: string): boolean {
  const value = doc[model.partition!.property] as string
  return new Date(model.partition!.type === 'date' ? `${value}T00:00:00Z` : value).toISOString().startsWith(date)
}

/** GET of a partitioned class's path ending in `/`: the partitions holding records, newest first. */
export function listPartitions(ctx: Ctx, model: ClassModel): Promise<{ partition: string; records: number }[]> {
  return withCurrentModel(ctx, model, async (m) => {
    if (!m.partition) throw badRequest(`${m.classname} is not partitioned by date`, 'path')
    const length = SEGMENT_LENGTH[m.partition.interval]
    return partitionsOf(ctx.deps.db, m.table!.table, ctx.domain, length, ctx.deps.clock.now())
  })
}
