// The router compares a path's segments where they stand (src/http/router.ts). Over the service's own
// route table and random paths built from its segments, it must find what the plain matcher below
// finds: split the path, static segments before `:param` before `*`, backtracking where a branch
// ends without a route.
import { expect, test } from 'bun:test'
import fc from 'fast-check'
import { routes } from '../../routes/_manifest.gen'
import type { RouteEntry } from '~/http/route'
import { Router } from '~/http/router'

/** The plain matcher: each candidate route tried against the split path, in the router's order. */
function plainMatch(path: string): { url: string; params: Record<string, string> } | null {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path
  if (!trimmed.startsWith('/')) return null
  const segments = trimmed.split('/').slice(1)
  const patterns = routes.map((r) => ({ r, parts: r.url.split('/').slice(1) }))
  const walk = (at: number, candidates: typeof patterns, params: Record<string, string>): RouteEntry | null => {
    const here = candidates.filter((c) => c.parts.length > at || c.parts.length === at)
    if (at === segments.length) {
      const exact = here.find((c) => c.parts.length === at)
      return exact?.r ?? here.find((c) => c.parts[at] === '*')?.r ?? null
    }
    const seg = segments[at]!
    const statics = here.filter((c) => c.parts[at] === seg)
    const viaStatic = statics.length ? walk(at + 1, statics, params) : null
    if (viaStatic) return viaStatic
    const dynamic = here.filter((c) => c.parts[at]?.startsWith(':'))
    if (dynamic.length && seg !== '') {
      const found = walk(at + 1, dynamic, params)
      if (found) {
        params[dynamic[0]!.parts[at]!.slice(1)] = safeDecode(seg)
        return found
      }
    }
    const rest = here.find((c) => c.parts[at] === '*')
    if (rest) {
      params['*'] = segments.slice(at).join('/')
      return rest.r
    }
    return null
  }
  const params: Record<string, string> = {}
  const found = walk(0, patterns, params)
  return found ? { url: found.url, params } : null
}

function safeDecode(raw: string): string {
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}

const router = new Router(routes)
const segments = [...new Set(routes.flatMap((r) => r.url.split('/').slice(1)))].filter((s) => !/^[:*]/.test(s))

test('the router finds what the plain matcher finds, over random paths of the route table', () => {
  const segment = fc.oneof(fc.constantFrom(...segments), fc.constantFrom('', 'x', 'a%20b', '%zz', '0192a3b4'))
  fc.assert(
    fc.property(fc.array(segment, { maxLength: 8 }), fc.boolean(), (parts, slash) => {
      const path = `/${parts.join('/')}${slash ? '/' : ''}`
      const got = router.match(path)
      expect(got ? { url: got.entry.url, params: got.params } : null).toEqual(plainMatch(path))
    }),
    { numRuns: 3000 },
  )
})

test('every route matches its own URL with values for its parameters', () => {
  for (const r of routes) {
    const path = r.url.replace(/:(\w+)/g, 'v-$1').replace('*', 'a/b')
    const got = router.match(path)!
    expect(got.entry.url).toBe(r.url)
    for (const [, name] of r.url.matchAll(/:(\w+)/g)) expect(got.params[name!]).toBe(`v-${name}`)
  }
  expect(router.match('no-slash')).toBeNull()
  expect(router.match('/rest/v1/nothing-here')).toBeNull()
})
