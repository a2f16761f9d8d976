/**
 * Classes (/rest/v1/design/classes): each defines a collection of records under
 * /rest/v1/model/<classname>. Creating a class creates its table; changing it migrates the table
 * without losing records; deleting it removes the table and journals each record's deletion.
 */
import * as v from 'valibot'
import type { TxStep } from '~storage/db'
import type { Doc } from '~storage/doc'
import { appendJournal, type WriteContext } from '~storage/journal'
import {
  allRecords,
  classDocsTx,
  countRecords,
  countUndated,
  createRecordTable,
  dropRecordTable,
  indexProperties,
  recordTable,
  rederive,
  stripProperties,
} from '~storage/model-tables'
import type { TableSpec } from '~storage/repository'
import { COMMON_FIELDS, defineEntity, ext, text, withDefaults } from '../entities/entity'
import { badRequest, conflict } from '../http/errors'
import { NIL_UUID } from '../http/req'
import { checkValue, PropertySchema, type Property } from './properties'
import { buildModels, derivedColumns, effectiveProperties, type ClassModel } from './registry'

export const classesTable: TableSpec = { table: 'classes', objtype: 'class', columns: { classname: 'classname' } }

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/
const LOOKS_LIKE_DATE_OR_ID = /^(\d{4}-\d{2}-\d{2}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i
const classname = v.pipe(
  v.string(),
  v.check(
    (s) => s.split('/').every((seg) => SEGMENT.test(seg) && !LOOKS_LIKE_DATE_OR_ID.test(seg)),
    'a classname is path segments of letters, digits, _ . - joined by / (no segment may look like a date or an id)',
  ),
  v.maxLength(255),
)
const count = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max))
const names = v.pipe(v.array(v.string()), v.maxLength(500))

const classOpts = v.optional(
  v.strictObject({
    title: v.optional(text()),
    comment: v.optional(text(4096)),
    dms_group: v.optional(v.record(v.string(), v.unknown())),
    cache_limit: v.optional(count(0, 10_000_000)),
    cache_sec: v.optional(count(0, 30 * 86400)),
    check_required_fill_defaults: v.optional(v.boolean()),
    expires_mode: v.optional(v.picklist(['none', 'create'], 'expires_mode is none or create')),
    expires_ts_property: v.optional(v.string()),
    expires_ttl_property: v.optional(v.string()),
    lookup_properties: v.optional(names),
    max_limit: v.optional(count(1, 100_000)),
    max_mask: v.optional(names),
    max_size: v.optional(count(64, 16 * 1024 * 1024)),
    notify_transactions: v.optional(v.boolean()),
    partition_count: v.optional(count(1, 1024)),
    partition_interval: v.optional(v.picklist(['day', 'month', 'year'], 'partition_interval is day, month or year')),
    partition_property: v.optional(v.string()),
    replication_factor: v.optional(count(1, 16)),
    storage_instance: v.optional(text(255)),
    filestorage_instance: v.optional(text(255)),
    /** Extension: composite indexes for hot filtered and ordered lists, e.g. [["kind", "n"]]. */
    indexes: v.optional(
      v.pipe(v.array(v.pipe(v.array(v.string()), v.minLength(1), v.maxLength(4))), v.maxLength(8, 'at most 8 indexes')),
    ),
  }),
)

const OPTS_DEFAULTS: Doc = {
  title: '',
  comment: '',
  dms_group: {},
  cache_limit: 1000,
  cache_sec: 600,
  check_required_fill_defaults: true,
  expires_mode: 'none',
  expires_ts_property: '',
  expires_ttl_property: '',
  lookup_properties: [],
  max_limit: 100,
  max_mask: [],
  max_size: 1_000_000,
  notify_transactions: false,
  partition_count: 1,
  partition_interval: 'month',
  partition_property: '',
  replication_factor: 1,
  storage_instance: '',
  filestorage_instance: '',
  indexes: [],
}

/** Checks of one class on its own: property names, enums, defaults. */
function finish(doc: Doc): Doc {
  const out = withDefaults(doc, {
    name: '',
    description: '',
    parent_id: NIL_UUID,
    storage_mode: 'runtime',
    integrity_mode: 'sync_fast_notify',
    cache_mode: 'temp',
    properties: [],
  })
  out.opts = withDefaults((doc.opts as Doc | undefined) ?? {}, OPTS_DEFAULTS)
  const seen = new Set<string>()
  ;(out.properties as Property[]).forEach((p, i) => {
    const at = `properties.${i}`
    if (p.name === 'id') throw badRequest(`${at}.name: id is every record's identifier, not a property`, `${at}.name`)
    if (seen.has(p.name)) throw badRequest(`${at}.name: property ${p.name} is defined twice`, `${at}.name`)
    seen.add(p.name)
    if ((p.data_type === 'enum') !== (p.items !== undefined))
      throw badRequest(`${at}.items: items go with data_type enum, and an enum needs them`, `${at}.items`)
    if (p.default !== undefined) checkValue(p, p.default, `${at}.default`)
  })
  return out
}

/** Checks that need the other classes of the domain: parent, inherited names, options naming properties. */
function checkAgainstDomain(c: Doc, all: Doc[]): ClassModel {
  const byId = new Map(all.map((x) => [x.id as string, x]))
  const parent = c.parent_id as string
  if (parent !== NIL_UUID) {
    if (!byId.has(parent)) throw badRequest(`parent_id: there is no class ${parent} in this domain`, 'parent_id')
    for (
      let p: Doc | undefined = byId.get(parent), n = 0;
      p && n <= all.length;
      p = byId.get(p.parent_id as string), n++
    ) {
      if (p.id === c.id) throw badRequest('parent_id: a class cannot inherit from itself', 'parent_id')
    }
  }
  const props = effectiveProperties(all)
  for (const x of all) {
    const list = props.get(x.id as string)!
    const dup = list.find((p, i) => list.findIndex((q) => q.name === p.name) !== i)
    if (dup)
      throw badRequest(
        `properties: ${dup.name} is also defined by an ancestor of ${x.classname as string}`,
        'properties',
      )
  }
  const model = buildModels('', all).get(c.classname as string)!
  const byName = model.rules.properties
  const opts = c.opts as Doc
  const known = (name: string) => name === 'id' || byName.has(name)
  for (const key of ['lookup_properties', 'max_mask'] as const) {
    const bad = (opts[key] as string[]).find((n) => !known(n))
    if (bad !== undefined) throw badRequest(`opts.${key}: there is no property ${bad}`, `opts.${key}`)
  }
  const badIndexed = (opts.indexes as string[][]).flat().find((n) => !byName.has(n))
  if (badIndexed !== undefined) throw badRequest(`opts.indexes: there is no property ${badIndexed}`, 'opts.indexes')
  const mode = c.storage_mode as string
  if (mode === 'history' || mode === 'transactionlog') {
    const p = byName.get(opts.partition_property as string)
    if (!p || (p.data_type !== 'date' && p.data_type !== 'datetime') || p.multi) {
      throw badRequest(
        `opts.partition_property: a ${mode} class is partitioned by a date or datetime property`,
        'opts.partition_property',
      )
    }
  }
  if (opts.expires_mode === 'create') {
    const ts = byName.get(opts.expires_ts_property as string)
    const ttl = byName.get(opts.expires_ttl_property as string)
    if (!ts || !['datetime', 'long'].includes(ts.data_type))
      throw badRequest('opts.expires_ts_property: name a datetime or long property', 'opts.expires_ts_property')
    if (!ttl || !['int', 'integer', 'long'].includes(ttl.data_type))
      throw badRequest('opts.expires_ttl_property: name a whole-number property (seconds)', 'opts.expires_ttl_property')
  }
  return model
}

/** Keeps a class's table in step with its definition. */
function* migrate(w: WriteContext, before: Doc | undefined, after: Doc | undefined, all: Doc[]): TxStep<void> {
  const c = (after ?? before)!
  const table = recordTable(w.domain, c.id as string)
  if (!after) {
    if (all.some((x) => x.parent_id === c.id))
      throw conflict(`class ${c.classname as string} has subclasses; delete them first`)
    if (before!.storage_mode !== 'abstract') {
      for (const record of yield* allRecords(table, w.domain)) {
        yield* appendJournal(w, {
          cmdtype: 'delete',
          objtype: `model/${c.classname as string}`,
          objid: record.id as string,
          obj: record,
        })
      }
      yield* dropRecordTable(table)
    }
    return
  }
  const model = checkAgainstDomain(after, all)
  if (after.storage_mode === 'abstract') {
    if (before && before.storage_mode !== 'abstract') {
      if ((yield* countRecords(table, w.domain)) > 0)
        throw conflict('storage_mode: a class with records cannot become abstract', 'storage_mode')
      yield* dropRecordTable(table)
    }
  } else {
    yield* createRecordTable(table)
    yield* indexProperties(
      table,
      model.lookup.filter((p) => p !== 'id'),
      (after.opts as Doc).indexes as string[][],
    )
  }
  if (!before) return
  // properties gone from this class or its ancestors leave the records of it and its subclasses
  const oldNames = new Set(
    effectiveProperties(all.map((x) => (x.id === c.id ? before : x)))
      .get(c.id as string)!
      .map((p) => p.name),
  )
  const gone = [...oldNames].filter((n) => !model.rules.properties.has(n))
  const affected = [c, ...all.filter((x) => descendsFrom(x, c.id as string, all))]
  for (const x of affected)
    if (x.storage_mode !== 'abstract') yield* stripProperties(recordTable(w.domain, x.id as string), gone)
  const derivation = (d: Doc) =>
    JSON.stringify([
      d.storage_mode,
      (d.opts as Doc).partition_property,
      (d.opts as Doc).expires_mode,
      (d.opts as Doc).expires_ts_property,
      (d.opts as Doc).expires_ttl_property,
    ])
  if (after.storage_mode !== 'abstract' && derivation(before) !== derivation(after)) {
    yield* rederive(table, (d) => derivedColumns(model, d))
    const undated = model.partition ? yield* countUndated(table, w.domain) : 0
    if (undated)
      throw conflict(
        `opts.partition_property: ${undated} record(s) have no date in ${model.partition!.property}`,
        'opts.partition_property',
      )
  }
}

/** Inside the transaction that changed a class (created: no `before`; deleted: no `after`): checks and storage. */
export function* applyClassChange(w: WriteContext, before: Doc | undefined, after: Doc | undefined): TxStep<void> {
  const all = yield* classDocsTx(w.domain)
  yield* migrate(w, before, after, all)
}

function descendsFrom(x: Doc, ancestor: string, all: Doc[]): boolean {
  const byId = new Map(all.map((c) => [c.id as string, c]))
  for (let p = byId.get(x.parent_id as string), n = 0; p && n <= all.length; p = byId.get(p.parent_id as string), n++)
    if (p.id === ancestor) return true
  return false
}

export const classes = defineEntity({
  name: 'class',
  table: classesTable,
  fields: [
    ...COMMON_FIELDS,
    'classname',
    'parent_id',
    'name',
    'description',
    'properties',
    'storage_mode',
    'integrity_mode',
    'cache_mode',
    'opts.*',
  ],
  listFields: [
    'id',
    'classname',
    'parent_id',
    'name',
    'description',
    'properties',
    'storage_mode',
    'integrity_mode',
    'cache_mode',
    'opts.title',
    'opts.comment',
    'ext.lwt',
    'ext.ct',
  ],
  lookupFields: ['id', 'classname'],
  create: {
    classname,
    name: v.optional(text(255)),
    description: v.optional(text(4096)),
    parent_id: v.optional(v.pipe(v.string(), v.uuid('parent_id must be a UUID'), v.toLowerCase())),
    storage_mode: v.optional(
      v.picklist(
        ['runtime', 'abstract', 'category', 'history', 'transactionlog'],
        'storage_mode is runtime, abstract, category, history or transactionlog',
      ),
    ),
    integrity_mode: v.optional(
      v.picklist(['sync_fast_notify', 'sync_fast_read'], 'integrity_mode is sync_fast_notify or sync_fast_read'),
    ),
    cache_mode: v.optional(v.picklist(['temp', 'none'], 'cache_mode is temp or none')),
    properties: v.optional(v.pipe(v.array(PropertySchema), v.maxLength(500, 'at most 500 properties'))),
    opts: classOpts,
    ext,
  },
  finish,
  hooks: {
    inTransaction: (_req, w, change) => applyClassChange(w, change.before, change.after),
    async afterCommit(req) {
      await req.deps.model.invalidate(req.domain)
    },
  },
})
