/** Parent chains (roles and classes inherit through `parent_id`): the one walk up a chain. */
import { NIL_UUID } from '../ids'

/**
 * `start` and its ancestors, nearest first, following `parentOf` until there is none (or the nil
 * UUID). A chain that loops ends where it would repeat, so a corrupt chain cannot hang a caller.
 */
export function ancestorsOf(start: string | undefined, parentOf: (id: string) => string | undefined): string[] {
  const out: string[] = []
  for (let id = start; id && id !== NIL_UUID && !out.includes(id); id = parentOf(id)) out.push(id)
  return out
}

/** A `parentOf` over documents by id that name their parent in `parent_id`. */
export const byParentId =
  (byId: ReadonlyMap<string, { parent_id?: unknown }>) =>
  (id: string): string | undefined => {
    const parent = byId.get(id)?.parent_id
    return typeof parent === 'string' ? parent : undefined
  }

/** The documents of `start`'s chain (itself first), skipping a parent that does not exist. */
export function chainOf<T extends { parent_id?: unknown }>(start: string, byId: ReadonlyMap<string, T>): T[] {
  const out: T[] = []
  for (const id of ancestorsOf(start, byParentId(byId))) {
    const doc = byId.get(id)
    if (doc) out.push(doc)
  }
  return out
}
