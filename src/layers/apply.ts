/**
 * Applying a product layer to a domain, and taking it away, as steps of one unit of work: entities
 * are upserted by their key (classes by classname, scripts by code, extobjs by id, settings by key)
 * through the same entity steps as any write, so each change is journaled and each class keeps its
 * table in step; what the layer installed is returned so it can be removed later.
 */
import type { TxStep } from '~storage/db'
import type { Doc } from '~storage/doc'
import type { Entity } from '../entities/entity'
import { ancestorsOf, byParentId } from '../entities/tree'
import type { Unit } from '../entities/unit'
import { validate } from '../entities/validate'
import { insertStep, removeStep, updateStep } from '../entities/writes'
import { ApiError } from '../errors'
import { isUuid, newId } from '../ids'
import { classes } from '../model/classes'
import { recordObjtype } from '../model/class-model'
import { recordTable } from '~storage/model-tables'
import { extobjs } from '../reference/extobjs'
import { requireParses } from '../scripts/script-syntax'
import { svcscripts } from '../scripts/svcscripts'
import { knownSetting, settingsTable, writeSetting } from '../settings/settings'
import { type LayerContent, LayerError } from './archive'

export interface Installed {
  classes: string[]
  svcscripts: string[]
  extobjs: string[]
  settings: string[]
}

/** A refusal of an archive object, reported against the file it came from. */
function againstFile(file: string, err: unknown): unknown {
  return err instanceof ApiError ? new LayerError(`${file}: ${err.message}`) : err
}

/** Validates one archive object as an entity body. */
function checked(entity: Entity, doc: Doc, id: string): Doc {
  const { id: _given, ...body } = doc
  const valid = { id, ...validate(entity.create, body) }
  return entity.finish ? entity.finish(valid) : valid
}

/**
 * Upserts one archive object, validated as an entity body: replaced (keeping the stored `ext`) when
 * it exists, created otherwise, through the entity's steps (so its hook runs).
 */
function* upsert(u: Unit, entity: Entity, file: string, doc: Doc, id: string, exists: boolean): TxStep<void> {
  try {
    const next = checked(entity, doc, id)
    if (exists) yield* updateStep(u, entity, id, (cur) => ({ ...next, ext: cur.ext }))
    else yield* insertStep(u, { entity, doc: next, input: next, hidden: {} })
  } catch (err) {
    throw againstFile(file, err)
  }
}

/**
 * A layer's scripts must parse, as any stored script (svcscripts' `prepare` hook): checked before the
 * layer's transaction, which cannot wait for the syntax thread. A script that does not is refused
 * naming its file and its code.
 */
export async function requireLayerScriptsParse(content: LayerContent): Promise<void> {
  for (const { file, doc } of content.svcscripts) {
    try {
      await requireParses(doc.scriptdata)
    } catch (err) {
      const code = typeof doc.code === 'string' ? doc.code.slice(0, 128) : '(without a code)'
      throw err instanceof ApiError ? new LayerError(`${file}: script ${code}: ${err.message}`) : err
    }
  }
}

type Item = LayerContent['classes'][number]

/**
 * Classes in an order where every parent comes before its children, otherwise as listed. Each item
 * is placed after the chain of parents above it, each item once: linear, where searching the pending
 * list for one that waits on nobody took cubic time (1,500 chained classes stalled the service 7 s).
 * In a cycle the walk stops where it meets itself; the class steps refuse the cycle.
 */
export function parentsFirst(items: Item[]): Item[] {
  const byId = new Map<unknown, Item>()
  for (const c of items) if (c.doc.id !== undefined && !byId.has(c.doc.id)) byId.set(c.doc.id, c)
  const out: Item[] = []
  const placed = new Set<Item>()
  for (const start of items) {
    const chain: Item[] = []
    const onChain = new Set<Item>()
    for (let c: Item | undefined = start; c; ) {
      if (placed.has(c) || onChain.has(c)) break
      chain.push(c)
      onChain.add(c)
      c = c.doc.parent_id === undefined ? undefined : byId.get(c.doc.parent_id)
    }
    for (let i = chain.length - 1; i >= 0; i--) {
      out.push(chain[i]!)
      placed.add(chain[i]!)
    }
  }
  return out
}

/** The id an archive object gets: the stored one's when it exists, else its own (a UUID) or a new one. */
const idFor = (current: { id: string } | undefined, doc: Doc) =>
  current ? current.id : isUuid(doc.id) ? doc.id.toLowerCase() : newId()

export function* applyLayer(u: Unit, content: LayerContent): TxStep<Installed> {
  const { repo } = u.ctx.deps
  const domain = u.w.domain
  const installed: Installed = { classes: [], svcscripts: [], extobjs: [], settings: [] }
  const total = content.classes.length + content.svcscripts.length + content.extobjs.length + content.settings.length
  const done = () =>
    u.progress(
      Object.values(installed).reduce((n, ids) => n + ids.length, 0),
      total,
    )
  // keyed by unknown: an archive's object may lack its key or give another type (then it is new)
  const existingClasses = new Map<unknown, { id: string }>(
    (yield* repo(classes.table).all(domain)).map((c) => [c.classname, c]),
  )
  for (const { file, doc } of parentsFirst(content.classes)) {
    const current = existingClasses.get(doc.classname)
    const id = idFor(current, doc)
    yield* upsert(u, classes, file, doc, id, current !== undefined)
    installed.classes.push(id)
    done()
  }
  const scripts = new Map<unknown, { id: string }>((yield* repo(svcscripts.table).all(domain)).map((s) => [s.code, s]))
  for (const { file, doc } of content.svcscripts) {
    const current = scripts.get(doc.code)
    const id = idFor(current, doc)
    yield* upsert(u, svcscripts, file, doc, id, current !== undefined)
    installed.svcscripts.push(id)
    done()
  }
  for (const { file, doc } of content.extobjs) {
    if (!isUuid(doc.id)) throw new LayerError(`${file}: an extobj of a layer needs its id, so that updates find it`)
    const id = doc.id.toLowerCase()
    const exists = (yield* repo(extobjs.table).existing(domain, 'id', [id])).size > 0
    yield* upsert(u, extobjs, file, doc, id, exists)
    installed.extobjs.push(id)
    done()
  }
  for (const { file, doc } of content.settings) {
    const key = doc.key
    const def = typeof key === 'string' ? knownSetting(key) : undefined
    if (typeof key !== 'string' || !def) throw new LayerError(`${file}: there is no setting ${JSON.stringify(key)}`)
    let value: unknown
    try {
      value = validate(def.value, doc.value, 'value')
    } catch (err) {
      throw againstFile(file, err)
    }
    yield* writeSetting(u, key, () => value)
    installed.settings.push(key)
    done()
  }
  return installed
}

/**
 * Removes what a layer installed. Classes that hold records stay unless `withData` (the `clear`
 * operation): their records are data, not part of the layer. Returns what was kept.
 */
export function* removeLayer(u: Unit, installed: Installed, withData: boolean): TxStep<string[]> {
  const { repo } = u.ctx.deps
  const domain = u.w.domain
  const total = Object.values(installed).reduce((n, ids) => n + ids.length, 0)
  let done = 0
  for (const key of installed.settings) {
    yield* repo(settingsTable).remove(u.w, key)
    u.progress(++done, total)
  }
  for (const id of installed.extobjs) {
    yield* removeStep(u, extobjs, id)
    u.progress(++done, total)
  }
  for (const id of installed.svcscripts) {
    yield* removeStep(u, svcscripts, id)
    u.progress(++done, total)
  }
  const all = yield* repo(classes.table).all(domain)
  const byId = new Map(all.map((c) => [c.id, c]))
  const mine = all.filter((c) => installed.classes.includes(c.id))
  // a class with records stays (unless clearing), and so do the classes it inherits from
  const keep = new Set<string>()
  if (!withData) {
    for (const c of mine) {
      if (c.storage_mode === 'abstract') continue
      const records = repo({
        table: recordTable(domain, c.id),
        objtype: recordObjtype(c.classname),
      })
      if ((yield* records.count(domain)) === 0) continue
      for (const id of ancestorsOf(c.id, byParentId(byId))) keep.add(id)
    }
  }
  const depth = (c: { id: string }) => ancestorsOf(c.id, byParentId(byId)).length
  const kept: string[] = []
  for (const c of mine.sort((a, b) => depth(b) - depth(a))) {
    if (keep.has(c.id)) kept.push(c.classname)
    else yield* removeStep(u, classes, c.id)
    u.progress(++done, total)
  }
  return kept
}
