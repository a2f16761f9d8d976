/**
 * Finds the route file serving a URL path: one matcher for HTTP requests and for calls dispatched
 * without HTTP (websocket frames, scripts). Static segments win over `:param`, which wins over `*`
 * (the rest of the path); one trailing slash is ignored.
 */
import type { Deps } from '../deps'
import type { ReadAccess } from '../ports'
import type { DeclaredEntry } from './route-declaration'

interface Node {
  statics: Map<string, Node>
  /**
   * The same children by the code of their name's first character: a path's segment is compared
   * where it stands, since cutting each out and hashing it cost as much as the rest of the match.
   */
  byFirst: Map<number, [string, Node][]>
  param?: { name: string; node: Node }
  /** A `*` route below this node: takes the rest of the path, undecoded. */
  rest?: DeclaredEntry
  entry?: DeclaredEntry
}

export interface RouteMatch {
  entry: DeclaredEntry
  params: Record<string, string>
}

const newNode = (): Node => ({ statics: new Map(), byFirst: new Map() })

function decodeParam(raw: string): string {
  if (!raw.includes('%')) return raw // the common case, and the hot one: ids
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw // a malformed escape is refused by the handler that checks the value
  }
}

/** What callers need of the route table: the routes, and the one serving a path. */
export interface RouteTable {
  readonly routes: readonly DeclaredEntry[]
  match(rawPath: string): RouteMatch | null
}

/**
 * What the HTTP layer uses: the services a call may use and the route table. The table is not in
 * Deps, since its entries' handlers take a Req that carries Deps (domain code never needs it).
 */
export interface HttpDeps extends Deps {
  /** The route files by URL: what a URL serves (Allow, the method override). */
  routes: RouteTable
}

/** The read access a route table gives (Deps carries this, not the table). */
export function readAccessOf(table: RouteTable): ReadAccess {
  return { of: (path) => table.match(path)?.entry.module.GET?.hook.admit.access ?? null }
}

export class Router implements RouteTable {
  private readonly root = newNode()

  constructor(readonly routes: readonly DeclaredEntry[]) {
    for (const entry of routes) this.add(entry)
  }

  private add(entry: DeclaredEntry): void {
    let node = this.root
    for (const seg of entry.url.split('/').slice(1)) {
      if (seg === '*') {
        node.rest = entry
        return
      }
      if (seg.startsWith(':')) {
        node.param ??= { name: seg.slice(1), node: newNode() }
        node = node.param.node
      } else {
        let next = node.statics.get(seg)
        if (!next) {
          next = newNode()
          node.statics.set(seg, next)
          const first = seg.charCodeAt(0) // NaN for an empty segment: found through `statics`
          node.byFirst.get(first)?.push([seg, next]) ?? node.byFirst.set(first, [[seg, next]])
        }
        node = next
      }
    }
    node.entry = entry
  }

  /** The route of a raw (still percent-encoded) path without its query string, or null. */
  match(rawPath: string): RouteMatch | null {
    if (rawPath.charCodeAt(0) !== 47 /* / */) return null
    const end = rawPath.length > 1 && rawPath.endsWith('/') ? rawPath.length - 1 : rawPath.length
    const params: Record<string, string> = {}
    const entry = this.walk(this.root, rawPath, end, 1, params)
    return entry ? { entry, params } : null
  }

  /** The entry below `node` for the segments of `path` from `at` (just after a slash) to `end`. */
  private walk(
    node: Node,
    path: string,
    end: number,
    at: number,
    params: Record<string, string>,
  ): DeclaredEntry | null {
    if (at > end) return node.entry ?? node.rest ?? null
    let segEnd = path.indexOf('/', at)
    if (segEnd < 0 || segEnd > end) segEnd = end
    const next = at === segEnd ? node.statics.get('') : staticChild(node, path, at, segEnd)
    const viaStatic = next && this.walk(next, path, end, segEnd + 1, params)
    if (viaStatic) return viaStatic
    if (node.param && at < segEnd) {
      const found = this.walk(node.param.node, path, end, segEnd + 1, params)
      if (found) {
        params[node.param.name] = decodeParam(path.slice(at, segEnd))
        return found
      }
    }
    if (node.rest) {
      params['*'] = path.slice(at, end)
      return node.rest
    }
    return null
  }
}

/** The child of `node` named by `path` from `at` to `segEnd`. */
function staticChild(node: Node, path: string, at: number, segEnd: number): Node | undefined {
  const candidates = node.byFirst.get(path.charCodeAt(at))
  if (!candidates) return undefined
  for (const [name, child] of candidates) if (name.length === segEnd - at && path.startsWith(name, at)) return child
  return undefined
}
