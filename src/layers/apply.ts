/**
 * Applying a product layer to a domain, and taking it away, each in one transaction: entities are
 * upserted by their key (classes by classname, scripts by code, extobjs by id, settings by key) and
 * journaled like any change; what the layer installed is returned so it can be removed later.
 */
import type { TxStep } from '~storage/db'
import { allDocs } from '~storage/directory'
import type { Doc } from '~storage/doc'
import type { WriteContext } from '~storage/journal'
import { classDocsTx, countRecords, recordTable } from '~storage/model-tables'
import type { Deps } from '../deps'
import type { Entity } from '../entities/entity'
import { extobjs } from '../entities/extobjs'
import { SETTINGS, settingsTable } from '../entities/settings'
import { svcscripts } from '../entities/svcscripts'
import { validate } from '../entities/validate'
import { applyPatch } from '../entities/writes'
import { ApiError } from '../http/errors'
import { isUuid, NIL_UUID } from '../http/req'
import { applyClassChange, classes } from '../model/classes'
import { LayerError, type LayerContent } from './archive'

export interface Installed {
  classes: string[]
  svcscripts: string[]
  extobjs: string[]
  settings: string[]
}

/** Validates one archive object as an entity body; errors name the file and the field. */
function checked(entity: Entity, file: string, doc: Doc, id: string): Doc {
  const { id: _given, ...body } = doc
  try {
    const valid = { id, ...validate(entity.create, body) }
    return entity.finish ? entity.finish(valid) : valid
  } catch (err) {
    if (err instanceof ApiError) throw new LayerError(`${file}: ${err.message}`)
    throw err
  }
}

/** Classes in an order where every parent comes before its children. */
function parentsFirst(items: { file: string; doc: Doc }[]): { file: string; doc: Doc }[] {
  const out: typeof items = []
  const pending = [...items]
  const placed = new Set<string>()
  while (pending.length) {
    const i = pending.findIndex(
      (c) =>
        !pending.some(
          (p) => p !== c && p.doc.id !== undefined && p.doc.id === c.doc.parent_id && !placed.has(String(p.doc.id)),
        ),
    )
    const [next] = pending.splice(i < 0 ? 0 : i, 1)
    out.push(next!)
    if (next!.doc.id !== undefined) placed.add(String(next!.doc.id))
  }
  return out
}

export function* applyLayer(deps: Deps, w: WriteContext, content: LayerContent): TxStep<Installed> {
  const installed: Installed = { classes: [], svcscripts: [], extobjs: [], settings: [] }
  const classRepo = deps.repo(classes.table)
  const existingClasses = new Map((yield* classDocsTx(w.domain)).map((c) => [c.classname as string, c]))
  for (const { file, doc } of parentsFirst(content.classes)) {
    const current = existingClasses.get(doc.classname as string)
    const id = current ? (current.id as string) : isUuid(doc.id) ? doc.id.toLowerCase() : Bun.randomUUIDv7()
    const next = checked(classes, file, doc, id)
    if (current) {
      const after = yield* classRepo.update(w, id, (cur) => ({ ...next, ext: cur.ext }))
      yield* classChange(file, w, current, after!)
    } else {
      yield* classChange(file, w, undefined, yield* classRepo.insert(w, next))
    }
    installed.classes.push(id)
  }
  const scriptRepo = deps.repo(svcscripts.table)
  const scripts = new Map((yield* allDocs('svcscripts', w.domain)).map((s) => [s.code as string, s]))
  for (const { file, doc } of content.svcscripts) {
    const current = scripts.get(doc.code as string)
    const id = current ? (current.id as string) : isUuid(doc.id) ? doc.id.toLowerCase() : Bun.randomUUIDv7()
    const next = checked(svcscripts, file, doc, id)
    if (current) yield* scriptRepo.update(w, id, (cur) => ({ ...next, ext: cur.ext }))
    else yield* scriptRepo.insert(w, next)
    installed.svcscripts.push(id)
  }
  const extobjRepo = deps.repo(extobjs.table)
  for (const { file, doc } of content.extobjs) {
    if (!isUuid(doc.id)) throw new LayerError(`${file}: an extobj of a layer needs its id, so that updates find it`)
    const id = doc.id.toLowerCase()
    const next = checked(extobjs, file, doc, id)
    const updated = yield* extobjRepo.update(w, id, (cur) => ({ ...next, ext: cur.ext }))
    if (!updated) yield* extobjRepo.insert(w, next)
    installed.extobjs.push(id)
  }
  const settingRepo = deps.repo(settingsTable)
  for (const { file, doc } of content.settings) {
    const key = doc.key as string
    const def = SETTINGS[key]
    if (!def) throw new LayerError(`${file}: there is no setting ${JSON.stringify(key)}`)
    let value: unknown
    try {
      value = validate(def.value, doc.value, 'value')
    } catch (err) {
      throw new LayerError(`${file}: ${(err as Error).message}`)
    }
    const updated = yield* settingRepo.update(w, key, (cur) => applyPatch(cur, { value }))
    if (!updated) yield* settingRepo.insert(w, { key, value })
    installed.settings.push(key)
  }
  return installed
}

function* classChange(file: string, w: WriteContext, before: Doc | undefined, after: Doc): TxStep<void> {
  try {
    yield* applyClassChange(w, before, after)
  } catch (err) {
    if (err instanceof ApiError) throw new LayerError(`${file}: ${err.message}`)
    throw err
  }
}

/**
 * Removes what a layer installed. Classes that hold records stay unless `withData` (the `clear`
 * operation): their records are data, not part of the layer. Returns what was kept.
 */
export function* removeLayer(deps: Deps, w: WriteContext, installed: Installed, withData: boolean): TxStep<string[]> {
  const kept: string[] = []
  for (const key of installed.settings) yield* deps.repo(settingsTable).remove(w, key)
  for (const id of installed.extobjs) yield* deps.repo(extobjs.table).remove(w, id)
  for (const id of installed.svcscripts) yield* deps.repo(svcscripts.table).remove(w, id)
  const classRepo = deps.repo(classes.table)
  const all = yield* classDocsTx(w.domain)
  const byId = new Map(all.map((c) => [c.id as string, c]))
  const mine = all.filter((c) => installed.classes.includes(c.id as string))
  // a class with records stays (unless clearing), and so do the classes it inherits from
  const keep = new Set<string>()
  if (!withData) {
    for (const c of mine) {
      if (c.storage_mode === 'abstract' || (yield* countRecords(recordTable(w.domain, c.id as string), w.domain)) === 0)
        continue
      for (let p: Doc | undefined = c; p && !keep.has(p.id as string); p = byId.get(p.parent_id as string))
        keep.add(p.id as string)
    }
  }
  const depth = (c: Doc): number =>
    c.parent_id === NIL_UUID || !byId.has(c.parent_id as string) ? 0 : 1 + depth(byId.get(c.parent_id as string)!)
  for (const c of mine.sort((a, b) => depth(b) - depth(a))) {
    if (keep.has(c.id as string)) {
      kept.push(c.classname as string)
      continue
    }
    const before = yield* classRepo.remove(w, c.id as string)
    if (before) yield* applyClassChange(w, before, undefined)
  }
  return kept
}
