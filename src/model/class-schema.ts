/**
 * What a class is made of (src/model/classes.ts is its entity): the create body's members and
 * options, and the stored class's type, apart from the entity so that the code its hooks run
 * (class-change.ts, class-model.ts) can name the type without importing the entity.
 */
import * as v from 'valibot'
import { type EntityDoc, ext, text } from '../entities/entity'
import { PropertySchema } from './properties'

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
export const ClassOpts = v.strictObject(OPTS)

export const OPTS_DEFAULTS: v.InferOutput<typeof ClassOpts> = {
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
export const MEMBERS = {
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

/** A class's create body: the classname; every other member and option may be left out (defaulted). */
export const CLASS_CREATE = {
  classname,
  ...v.partial(v.object(MEMBERS)).entries,
  opts: v.optional(v.partial(ClassOpts)),
  ext,
}

/** A class as stored (`finish` in classes.ts fills in every member and option the create left out). */
export type ClassDoc = EntityDoc<typeof CLASS_CREATE>
