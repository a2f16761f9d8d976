/** The route table (method, URL, file) as text: printed by `bun run routes`, snapshotted by a test. */
import type { RouteEntry } from './route'
import { METHODS } from '../values'

export function routeRows(routes: RouteEntry[]): [method: string, url: string, file: string][] {
  return routes.flatMap((r) =>
    METHODS.filter((m) => r.module[m]).map((m): [string, string, string] => [m, r.url, r.file]),
  )
}

export function routeTable(routes: RouteEntry[]): string {
  const rows = routeRows(routes)
  const w0 = Math.max(6, ...rows.map((r) => r[0].length))
  const w1 = Math.max(3, ...rows.map((r) => r[1].length))
  return [['METHOD', 'URL', 'FILE'], ...rows].map(([m, u, f]) => `${m!.padEnd(w0)}  ${u!.padEnd(w1)}  ${f}`).join('\n')
}
