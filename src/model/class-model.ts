/**
 * The classes of a domain compiled for the record routes: effective properties (inherited first),
 * validation rules, list limits, partitioning, expiry and the table spec of each class. Pure: the
 * registry (registry.ts) caches what this builds.
 */
import type { Doc } from '~storage/doc'
import { recordTable } from '~storage/model-tables'
import type { TableSpec } from '~storage/repository'
import { chainOf } from '../entities/tree'
import { FieldSet } from '../query/fields'
import type { ListLimits } from '../query/list-query'
import type { Property, RecordRules } from './properties'

export type StorageMode = 'runtime' | 'abstract' | 'category' | 'history' | 'transactionlog'

/**
 * What the model reads of a stored class (a ClassDoc of ./class-schema.ts, which this module does not
 * import: the ports name ClassModel, and the schema imports the entity layer).
 */
export type ClassFields = {
  id: string
  classname: string
  parent_id?: string
  storage_mode?: StorageMode
  properties?: Property[]
  opts?: {
    partition_property?: string
    partition_interval?: 'day' | 'month' | 'year'
    expires_mode?: string
    expires_ts_property?: string
    expires_ttl_property?: string
    max_mask?: string[]
    max_limit?: number
    max_size?: number
    check_required_fill_defaults?: boolean
    lookup_properties?: string[]
  }
}

export interface ClassModel {
  id: string
  classname: string
  doc: Doc
  storageMode: StorageMode
  /** Own and inherited properties, ancestors' first. */
  properties: Property[]
  rules: RecordRules
  /** null for abstract classes: they have no records. */
  table: TableSpec | null
  fields: FieldSet
  /** What a list may output: opts.max_mask, or every field. */
  output: FieldSet
  /** What a list outputs without a mask: opts.max_mask, or (null) whole records. */
  defaultOutput: string[] | null
  limits: ListLimits
  /** Properties holding datetimes (filter values on them are compared as instants). */
  instants: ReadonlySet<string>
  lookup: string[]
  /** How records are partitioned by date; `interval` is the form of a partition's path segment. */
  partition: { property: string; type: 'date' | 'datetime'; interval: 'day' | 'month' | 'year' } | null
  expiry: { ts: string; ttl: string; tsType: string } | null
  /** The domain's model generation these definitions were read at (storage/model-generations.ts). */
  generation: number
}

/** Effective properties of each class by id: its ancestors' first, then its own. */
export function effectiveProperties(classes: ClassFields[]): Map<string, Property[]> {
  const byId = new Map(classes.map((c) => [c.id, c]))
  const out = new Map<string, Property[]>()
  for (const c of classes) {
    const chain = chainOf(c.id, byId)
    out.set(
      c.id,
      chain.reverse().flatMap((x) => x.properties ?? []),
    )
  }
  return out
}

/** The journal and event type of a class's records. */
export const recordObjtype = (classname: string) => `model/${classname}`

/** The partition date (ISO, start of a day for date properties) and expiry time of a record. */
export function derivedColumns(
  model: Pick<ClassModel, 'partition' | 'expiry'>,
  doc: Doc,
): { pdate: string | null; expires: number | null } {
  let pdate: string | null = null
  const p = model.partition && doc[model.partition.property]
  const at = typeof p === 'string' ? Date.parse(model.partition!.type === 'date' ? `${p}T00:00:00.000Z` : p) : NaN
  if (Number.isFinite(at)) pdate = new Date(at).toISOString() // a value that is no date leaves the record out of every day
  let expires: number | null = null
  if (model.expiry) {
    const ts = doc[model.expiry.ts]
    const ttl = doc[model.expiry.ttl]
    const start = typeof ts === 'number' ? ts : typeof ts === 'string' ? Date.parse(ts) : NaN
    if (Number.isFinite(start) && typeof ttl === 'number') expires = start + ttl * 1000
  }
  return { pdate, expires }
}

export function buildModels(domain: string, classes: ClassFields[], generation = 0): Map<string, ClassModel> {
  const props = effectiveProperties(classes)
  const models = new Map<string, ClassModel>()
  for (const c of classes) {
    const properties = props.get(c.id)!
    const byName = new Map(properties.map((p) => [p.name, p]))
    // classes.ts fills in every member and option a create left out: the fallbacks are its defaults
    const mode = c.storage_mode ?? 'runtime'
    const opts = c.opts ?? {}
    const partitionProp = opts.partition_property ?? ''
    const partition =
      (mode === 'history' || mode === 'transactionlog') && byName.has(partitionProp)
        ? {
            property: partitionProp,
            type: byName.get(partitionProp)!.data_type === 'date' ? ('date' as const) : ('datetime' as const),
            interval: opts.partition_interval ?? 'month',
          }
        : null
    const tsName = opts.expires_ts_property ?? ''
    const expiry =
      (opts.expires_mode ?? 'none') === 'create' && byName.has(tsName)
        ? { ts: tsName, ttl: opts.expires_ttl_property ?? '', tsType: byName.get(tsName)!.data_type }
        : null
    const names = properties.map((p) => p.name)
    const open = properties
      .filter((p) => p.data_type === 'any' || p.data_type === 'attachment')
      .map((p) => `${p.name}.*`)
    const maxMask = opts.max_mask ?? []
    const maxLimit = opts.max_limit ?? 100
    const model: ClassModel = {
      id: c.id,
      classname: c.classname,
      doc: c,
      storageMode: mode,
      properties,
      rules: {
        properties: byName,
        fillDefaults: opts.check_required_fill_defaults ?? true,
        maxSize: opts.max_size ?? 1_000_000,
      },
      table: null,
      fields: new FieldSet(['id', ...names, ...open]),
      output: new FieldSet(maxMask.length ? maxMask : ['id', ...names, ...open]),
      defaultOutput: maxMask.length ? maxMask : null,
      limits: { defaultLimit: Math.min(100, maxLimit), maxLimit },
      instants: new Set(properties.filter((p) => p.data_type === 'datetime').map((p) => p.name)),
      lookup: opts.lookup_properties ?? [],
      partition,
      expiry,
      generation,
    }
    if (mode !== 'abstract') {
      model.table = {
        table: recordTable(domain, model.id),
        objtype: recordObjtype(model.classname),
        stamps: false,
        // only a class that expires records has expiries: the others' reads carry no time, so a point
        // read or a list page asked again is answered from memory until the next write
        expiring: model.expiry !== null,
        derived: { pdate: (d) => derivedColumns(model, d).pdate, expires: (d) => derivedColumns(model, d).expires },
      }
    }
    models.set(model.classname, model)
  }
  return models
}
