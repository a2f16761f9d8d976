/**
 * Finds the route file serving a URL path: one matcher for HTTP requests and for calls dispatched
 * without HTTP (websocket frames, scripts). Static segments win over `:param`, which wins over `*`
 * (the rest of the path); one trailing slash is ignored.
 */
import type { RouteEntry } from './route'

interface Node {
  statics: Map<string, Node>
  param?: { name: string; node: Node }
  /** A `*` route below this node: takes the rest of the path, undecoded. */
  rest?: RouteEntry
  entry?: RouteEntry
}

export interface RouteMatch {
  entry: RouteEntry
  params: Record<string, string>
}

const newNode = (): Node => ({ statics: new Map() })

function decodeParam(raw: string): string {
  if (!raw.includes('%')) return raw // the common case, and the hot one: ids
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw // a malformed escape is refused by the handler that checks the value
  }
}

export class Router {
  private readonly root = newNode()

  constructor(readonly routes: readonly RouteEntry[]) {
    for (const entry of routes) this.add(entry)
  }

  private add(entry: RouteEntry): void {
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
        if (!next) node.statics.set(seg, (next = newNode()))
        node = next
      }
    }
    node.entry = entry
  }

  /** The route of a raw (still percent-encoded) path without its query string, or null. */
  match(rawPath: string): RouteMatch | null {
    const path = rawPath.length > 1 && rawPath.endsWith('/') ? rawPath.slice(0, -1) : rawPath
    if (!path.startsWith('/')) return null
    const segments = path.split('/') // the first is the empty one before the leading slash
    const params: Record<string, string> = {}
    const entry = this.walk(this.root, segments, 1, params)
    return entry ? { entry, params } : null
  }

  private walk(node: Node, segments: string[], at: number, params: Record<string, string>): RouteEntry | null {
    if (at === segments.length) return node.entry ?? node.rest ?? null
    const seg = segments[at]!
    const next = node.statics.get(seg)
    const viaStatic = next && this.walk(next, segments, at + 1, params)
    if (viaStatic) return viaStatic
    if (node.param && seg !== '') {
      const found = this.walk(node.param.node, segments, at + 1, params)
      if (found) {
        params[node.param.name] = decodeParam(seg)
        return found
      }
    }
    if (node.rest) {
      params['*'] = segments.slice(at).join('/')
      return node.rest
    }
    return null
  }
}
