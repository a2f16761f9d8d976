/**
 * Where the console is: the address's hash. `#/` the overview, `#/<collection>` its list,
 * `#/<collection>/new` the create form, `#/<collection>/item/<id>` one item.
 */
import { useEffect, useState } from 'preact/hooks'

export type Route =
  | { page: 'home' }
  | { page: 'list'; key: string }
  | { page: 'new'; key: string }
  | { page: 'item'; key: string; id: string }
  | { page: 'journal' }

/** A collection's key may hold slashes (`model/crm/deals`): the address ends with `/new` or `/item/<id>`, or not. */
export function parse(hash: string): Route {
  const rest = hash.replace(/^#\/?/, '')
  if (!rest) return { page: 'home' }
  if (rest === 'journal') return { page: 'journal' }
  const [, key, isNew, id] = /^(.+?)(?:\/(new)|\/item\/(.+))?$/.exec(rest)!
  if (isNew) return { page: 'new', key: key! }
  if (id !== undefined) return { page: 'item', key: key!, id: decodeURIComponent(id) }
  return { page: 'list', key: key! }
}

export const href = {
  home: () => '#/',
  journal: () => '#/journal',
  list: (key: string) => `#/${key}`,
  create: (key: string) => `#/${key}/new`,
  item: (key: string, id: string) => `#/${key}/item/${encodeURIComponent(id)}`,
}

export function go(to: string): void {
  location.hash = to
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parse(location.hash))
  useEffect(() => {
    const changed = () => setRoute(parse(location.hash))
    addEventListener('hashchange', changed)
    return () => removeEventListener('hashchange', changed)
  }, [])
  return route
}
