/**
 * What a change to a class does inside its transaction (created: no `before`; deleted: no
 * `after`): the checks that need the domain's other classes, and the class's records table kept
 * in step: created with the class, migrated when its properties or derivation change, dropped
 * (each record's deletion journaled) with it.
 */
import type { TxStep } from '~storage/db'
import { countUndated, createRecordTable, dropRecordTable, indexProperties, recordTable } from '~storage/model-tables'
import { ancestorsOf, byParentId } from '../entities/tree'
import type { Unit } from '../entities/unit'
import { badRequest, conflict } from '../errors'
import { NIL_UUID } from '../ids'
import { buildModels, type ClassModel, effectiveProperties, recordObjtype } from './class-model'
import type { ClassDoc } from './class-schema'
import { migrateRecords } from './migrate-values'

/** Checks that need the other classes of the domain: parent, inherited names, options naming properties. */
function checkAgainstDomain(c: ClassDoc, all: ClassDoc[], models: Map<string, ClassModel>): ClassModel {
  const byId = new Map(all.map((x) => [x.id, x]))
  const parent = c.parent_id ?? NIL_UUID
  if (parent !== NIL_UUID) {
    if (!byId.has(parent)) throw badRequest(`parent_id: there is no class ${parent} in this domain`, 'parent_id')
    if (ancestorsOf(parent, byParentId(byId)).includes(c.id)) {
      throw badRequest('parent_id: a class cannot inherit from itself', 'parent_id')
    }
  }
  const props = effectiveProperties(all)
  for (const x of all) {
    const list = props.get(x.id)!
    const dup = list.find((p, i) => list.findIndex((q) => q.name === p.name) !== i)
    if (dup) {
      const message = `properties: ${dup.name} is also defined by an ancestor of ${x.classname}`
      throw badRequest(message, 'properties')
    }
  }
  const model = models.get(c.classname)!
  const byName = model.rules.properties
  const opts = c.opts ?? {}
  const known = (name: string) => name === 'id' || byName.has(name)
  for (const key of ['lookup_properties', 'max_mask'] as const) {
    const bad = (opts[key] ?? []).find((n) => !known(n))
    if (bad !== undefined) throw badRequest(`opts.${key}: there is no property ${bad}`, `opts.${key}`)
  }
  const badIndexed = (opts.indexes ?? []).flat().find((n) => !byName.has(n))
  if (badIndexed !== undefined) throw badRequest(`opts.indexes: there is no property ${badIndexed}`, 'opts.indexes')
  const mode = c.storage_mode
  if (mode === 'history' || mode === 'transactionlog') {
    const p = byName.get(opts.partition_property ?? '')
    if (!p || (p.data_type !== 'date' && p.data_type !== 'datetime') || p.multi) {
      const message = `opts.partition_property: a ${mode} class is partitioned by a date or datetime property`
      throw badRequest(message, 'opts.partition_property')
    }
  }
  if (opts.expires_mode === 'create') {
    const ts = byName.get(opts.expires_ts_property ?? '')
    const ttl = byName.get(opts.expires_ttl_property ?? '')
    if (!ts || !['datetime', 'long'].includes(ts.data_type)) {
      throw badRequest('opts.expires_ts_property: name a datetime or long property', 'opts.expires_ts_property')
    }
    if (!ttl || !['int', 'integer', 'long'].includes(ttl.data_type)) {
      throw badRequest('opts.expires_ttl_property: name a whole-number property (seconds)', 'opts.expires_ttl_property')
    }
  }
  return model
}

/** What decides a record's derived columns (partition date, expiry). */
const derivation = (d: ClassDoc) => {
  const o = d.opts ?? {}
  return JSON.stringify([
    d.storage_mode,
    o.partition_property,
    o.expires_mode,
    o.expires_ts_property,
    o.expires_ttl_property,
  ])
}

/** Inside the transaction that changed a class: checks and storage. `all` is every class of the domain now. */
export function* applyClassChange(
  u: Unit,
  before: ClassDoc | undefined,
  after: ClassDoc | undefined,
  all: ClassDoc[],
): TxStep<void> {
  const { repo } = u.ctx.deps
  const domain = u.w.domain
  const c = (after ?? before)!
  const table = recordTable(domain, c.id)
  if (!after) {
    if (all.some((x) => x.parent_id === c.id)) throw conflict(`class ${c.classname} has subclasses; delete them first`)
    if (before!.storage_mode !== 'abstract') {
      const records = repo({ table, objtype: recordObjtype(c.classname), stamps: false })
      yield* records.removeAll(u.w, undefined, u.progress)
      yield* dropRecordTable(table)
    }
    return
  }
  const models = buildModels(domain, all)
  const model = checkAgainstDomain(after, all, models)
  if (after.storage_mode === 'abstract') {
    if (before && before.storage_mode !== 'abstract') {
      const records = yield* repo({ table, objtype: recordObjtype(c.classname) }).count(domain)
      if (records > 0) throw conflict('storage_mode: a class with records cannot become abstract', 'storage_mode')
      yield* dropRecordTable(table)
    }
  } else {
    yield* createRecordTable(table)
    const lookups = model.lookup.filter((p) => p !== 'id')
    yield* indexProperties(table, lookups, after.opts?.indexes ?? [])
  }
  if (!before) return
  // properties gone from this class or its ancestors leave the records of it and its subclasses
  const oldProperties = effectiveProperties(all.map((x) => (x.id === c.id ? before : x))).get(c.id)!
  const oldNames = new Set(oldProperties.map((p) => p.name))
  const gone = [...oldNames].filter((n) => !model.rules.properties.has(n))
  const byId = new Map(all.map((x) => [x.id, x]))
  const affected = all.filter((x) => ancestorsOf(x.id, byParentId(byId)).includes(c.id))
  const tables = affected.flatMap((x) => models.get(x.classname)?.table ?? [])
  if (gone.length > 0)
    for (const spec of tables)
      yield* repo(spec).rewriteAll((doc) => Object.fromEntries(Object.entries(doc).filter(([k]) => !gone.includes(k))))
  // values of retyped properties converted (or the change refused), new defaults filled in
  yield* migrateRecords(
    u,
    tables.map((spec) => repo(spec)),
    oldProperties,
    model.properties,
    model.rules.fillDefaults,
  )
  if (model.table && derivation(before) !== derivation(after)) {
    yield* repo(model.table).rewriteAll()
    const undated = model.partition ? yield* countUndated(table, domain) : 0
    if (undated) {
      const message = `opts.partition_property: ${undated} record(s) have no date in ${model.partition!.property}`
      throw conflict(message, 'opts.partition_property')
    }
  }
}
