/**
 * Classes (/rest/v1/design/classes): each defines a collection of records under
 * /rest/v1/model/<classname>. Creating a class creates its table; changing it migrates the table
 * without losing records; deleting it removes the table and journals each record's deletion.
 */
import * as v from 'valibot'
import type { TxStep } from '~storage/db'
import type { Doc } from '~storage/doc'
import { COMMON_FIELDS, defineEntity, ext, text, withDefaults } from '../entities/entity'
import { badRequest } from '../errors'
import { NIL_UUID } from '../ids'
import { checkBuiltinClass } from './builtin'
import { applyClassChange } from './class-change'
import { checkValue, PropertySchema, type Property } from './properties'

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

/** The options of a class; a create may give any of them, and the stored class has them all (the defaults below). */
const OPTS = {
  title: text(),
  comment: text(4096),
  dms_group: v.record(v.string(), v.unknown()),
  cache_limit: count(0, 10_000_000),
  cache_sec: count(0, 30 * 86400),
  check_required_fill_defaults: v.boolean(),
  expires_mode: v.picklist(['none', 'create'], 'expires_mode is none or create'),
  expires_ts_property: v.string(),
  expires_ttl_property: v.string(),
  lookup_properties: names,
  max_limit: count(1, 100_000),
  max_mask: names,
  max_size: count(64, 16 * 1024 * 1024),
  notify_transactions: v.boolean(),
  partition_count: count(1, 1024),
  partition_interval: v.picklist(['day', 'month', 'year'], 'partition_interval is day, month or year'),
  partition_property: v.string(),
  replication_factor: count(1, 16),
  storage_instance: text(255),
  filestorage_instance: text(255),
  /** Extension: composite indexes for hot filtered and ordered lists, e.g. [["kind", "n"]]. */
  indexes: v.pipe(
    v.array(v.pipe(v.array(v.string()), v.minLength(1), v.maxLength(4))),
    v.maxLength(8, 'at most 8 indexes'),
  ),
}
const ClassOpts = v.strictObject(OPTS)

const OPTS_DEFAULTS: v.InferOutput<typeof ClassOpts> = {
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

/** The members of a class besides its classname: a create may leave each out, and its default is stored. */
const MEMBERS = {
  name: text(255),
  description: text(4096),
  parent_id: v.pipe(v.string(), v.uuid('parent_id must be a UUID'), v.toLowerCase()),
  storage_mode: v.picklist(
    ['runtime', 'abstract', 'category', 'history', 'transactionlog'],
    'storage_mode is runtime, abstract, category, history or transactionlog',
  ),
  integrity_mode: v.picklist(
    ['sync_fast_notify', 'sync_fast_read'],
    'integrity_mode is sync_fast_notify or sync_fast_read',
  ),
  cache_mode: v.picklist(['temp', 'none'], 'cache_mode is temp or none'),
  properties: v.pipe(v.array(PropertySchema), v.maxLength(500, 'at most 500 properties')),
}

/** Checks of one class on its own: property names, enums, defaults. */
function finish<T extends Doc>(doc: T): T {
  const out = withDefaults<Doc>(doc, {
    name: '',
    description: '',
    parent_id: NIL_UUID,
    storage_mode: 'runtime',
    integrity_mode: 'sync_fast_notify',
    cache_mode: 'temp',
    properties: [],
  })
  out.opts = withDefaults((doc.opts as Doc | undefined) ?? {}, OPTS_DEFAULTS as Doc)
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
  return out as T
}

export const classes = defineEntity({
  name: 'class',
  table: { table: 'classes', objtype: 'class', columns: { classname: 'classname' } },
  path: '/rest/v1/design/classes',
  // a change migrates the records of the class and its subclasses; a deletion removes them
  long: { patch: 'class migration', remove: 'class deletion' },
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
    ...v.partial(v.object(MEMBERS)).entries,
    opts: v.optional(v.partial(ClassOpts)),
    ext,
  },
  // what finish() fills in: every member and option, defaulted
  doc: { ...MEMBERS, opts: ClassOpts },
  finish,
  hooks: {
    *inTransaction(u, change): TxStep<void> {
      checkBuiltinClass(change.before, change.after)
      const domain = u.w.domain
      const all = yield* u.ctx.deps.repo(classes.table).all(domain)
      yield* applyClassChange(u, change.before, change.after, all)
      u.afterCommit(`model:${domain}`, () => u.ctx.deps.model.invalidate(domain))
    },
  },
})
