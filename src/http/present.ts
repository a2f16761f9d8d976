/** Output shaping shared by every read: `mask` picks paths, `flat` turns nested objects into dotted keys. */
import { flatten, getPath, isPlainObject, type Doc } from '~storage/doc'

/** A document holding only the given paths (nested as in the source). */
export function pick(doc: Doc, paths: readonly string[]): Doc {
  const out: Doc = {}
  for (const path of paths) {
    const value = getPath(doc, path)
    if (value === undefined) continue
    const keys = path.split('.')
    let cur = out
    for (const key of keys.slice(0, -1)) {
      if (!isPlainObject(cur[key])) cur[key] = {}
      cur = cur[key] as Doc
    }
    cur[keys[keys.length - 1]!] = value
  }
  return out
}

export function present(doc: Doc, paths: readonly string[] | null, flat: boolean): Doc {
  const shaped = paths ? pick(doc, paths) : doc
  return flat ? flatten(shaped) : shaped
}
