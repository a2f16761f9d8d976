/**
 * Where the console is: the address's hash. `#/` the overview, `#/<collection>` its list,
 * `#/<collection>/new` the create form, `#/<collection>/item/<id>` one item.
 */
import { useEffect, useState } from 'preact/hooks'
import { CATALOGUE } from './spec'

export type Route =
  | { page: 'home' }
  | { page: 'list'; key: string }
  | { page: 'new'; key: string }
  | { page: 'item'; key: string; id: string }
  | { page: 'unknown' }

export function parse(hash: string): Route {
  const rest = hash.replace(/^#\/?/, '')
  if (!rest) return { page: 'home' }
  const known = CATALOGUE.find((c) => rest === c.key || rest.startsWith(`${c.key}/`))
  if (!known) return { page: 'unknown' }
  const tail = rest.slice(known.key.length + 1)
  if (!tail) return { page: 'list', key: known.key }
  if (tail === 'new') return { page: 'new', key: known.key }
  if (tail.startsWith('item/')) return { page: 'item', key: known.key, id: decodeURIComponent(tail.slice(5)) }
  return { page: 'unknown' }
}

export const href = {
  home: () => '#/',
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
