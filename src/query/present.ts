/** Output shaping shared by every read: `mask` picks paths, `flat` turns nested objects into dotted keys. */
import { flatten, isPlainObject, setOwn, type Doc } from '~storage/doc'

/** Paths split once: lists apply the same mask to every item. */
const splitCache = new Map<readonly string[], string[][]>()
function split(paths: readonly string[]): string[][] {
  let keys = splitCache.get(paths)
  if (!keys) {
    keys = paths.map((p) => p.split('.'))
    if (splitCache.size > 1000) splitCache.clear()
    splitCache.set(paths, keys)
  }
  return keys
}

/** Own members only, read and written: a path through `__proto__` reached Object.prototype, and wrote to it. */
function valueAt(doc: Doc, keys: string[]): unknown {
  let cur: unknown = doc
  for (const key of keys) {
    if (!isPlainObject(cur) || !Object.hasOwn(cur, key)) return undefined
    cur = cur[key]
  }
  return cur
}

/** A document holding only the given paths (nested as in the source). */
export function pick(doc: Doc, paths: readonly string[]): Doc {
  const out: Doc = {}
  for (const keys of split(paths)) {
    const value = valueAt(doc, keys)
    if (value === undefined) continue
    let cur = out
    for (const key of keys.slice(0, -1)) {
      if (!Object.hasOwn(cur, key) || !isPlainObject(cur[key])) setOwn(cur, key, {})
      cur = cur[key] as Doc
    }
    setOwn(cur, keys[keys.length - 1]!, value)
  }
  return out
}

export function present(doc: Doc, paths: readonly string[] | null, flat: boolean): Doc {
  const shaped = paths ? pick(doc, paths) : doc
  return flat ? flatten(shaped) : shaped
}
