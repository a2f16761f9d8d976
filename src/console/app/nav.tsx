/** Navigation by area: the collections this domain offers, the open one marked. */
import type { Route } from './router'
import { href } from './router'
import type { Collection } from './spec'

export function areasOf(collections: Collection[]): [string, Collection[]][] {
  const areas = new Map<string, Collection[]>()
  for (const c of collections) areas.set(c.area, [...(areas.get(c.area) ?? []), c])
  return [...areas]
}

export function Nav(props: { collections: Collection[]; route: Route; open: boolean; onPick: () => void }) {
  const current = 'key' in props.route ? props.route.key : undefined
  return (
    <nav id="nav" class={props.open ? 'open' : ''} aria-label="Areas">
      <a href={href.home()} aria-current={props.route.page === 'home' ? 'page' : undefined} onClick={props.onPick}>
        Overview
      </a>
      <a
        href={href.journal()}
        aria-current={props.route.page === 'journal' ? 'page' : undefined}
        onClick={props.onPick}
      >
        Journal
      </a>
      {areasOf(props.collections).map(([area, list]) => (
        <div key={area}>
          <h2>{area}</h2>
          <ul>
            {list.map((c) => (
              <li key={c.key}>
                <a href={href.list(c.key)} aria-current={current === c.key ? 'page' : undefined} onClick={props.onPick}>
                  {c.title}
                </a>
              </li>
            ))}
          </ul>
        </div>
      ))}
    </nav>
  )
}
