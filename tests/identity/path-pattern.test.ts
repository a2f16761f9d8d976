// Role path patterns (src/identity/path-pattern.ts) answer what the regular expression they replaced
// answered, for every pattern the role schema accepts, and in time linear in the path: that
// expression backtracked exponentially on several `**` (five routes of eight held the process 3.4 s).
import { expect, test } from 'bun:test'
import fc from 'fast-check'
import { compileGrant, grants } from '~/identity/access'

/** The compilation this replaced: fast enough on the small patterns and paths drawn below. */
function regexOf(path: string): RegExp {
  let source = ''
  for (const seg of path.split('/').filter(Boolean)) {
    if (seg === '**') source += '(?:/[^/]+)*'
    else if (seg === '*') source += '/[^/]+'
    else source += `/${seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`
  }
  return new RegExp(`^${source}/?$`)
}

const granted = (pattern: string, path: string) =>
  grants(['r'], new Map([['r', [compileGrant(pattern, ['GET'])]]]), 'GET', path)

// the role schema's alphabet: letters, digits and _ - . / * :
const token = fc.constantFrom('**', '**', '*', '*', 'a', 'b', 'a.b', 'x:y', '-_9', '*a', 'a*', '***', '')
const segment = fc.constantFrom('a', 'b', 'a.b', 'x:y', '-_9', '*', '**', '*a', 'a*', '***', 'A', 'aa', '\n', 'é', '')
const pattern = fc
  .tuple(fc.array(token, { maxLength: 8 }), fc.boolean())
  .map(([tokens, slash]) => `/${tokens.join('/')}${slash ? '/' : ''}`)

/** A path the pattern may well match: each `*` one segment, each `**` up to three, the rest itself; maybe one changed. */
const near = (p: string) => {
  const tokens = p.split('/').filter(Boolean)
  const fill = fc.array(fc.array(segment, { maxLength: 3 }), { minLength: tokens.length, maxLength: tokens.length })
  return fc
    .tuple(fill, fc.option(fc.tuple(fc.nat(), segment), { freq: 2 }), fc.constantFrom('', '/'))
    .map(([fill, change, end]) => {
      const parts = tokens.flatMap((t, i) => (t === '**' ? fill[i]! : t === '*' ? [fill[i]![0] ?? 'z'] : [t]))
      if (change && parts.length) parts[change[0] % parts.length] = change[1]
      return `/${parts.join('/')}${end}`
    })
}
const anyPath = fc.oneof(
  fc
    .tuple(fc.constantFrom('/', '', '//'), fc.array(segment, { maxLength: 8 }), fc.constantFrom('', '/', '//'))
    .map(([start, parts, end]) => `${start}${parts.join('/')}${end}`),
  fc.string({ maxLength: 12 }),
)

test('the same answer as the regular expression it replaced, over random patterns and paths', () => {
  const seen = { true: 0, false: 0 }
  fc.assert(
    fc.property(
      pattern.chain((p) => fc.tuple(fc.constant(p), fc.oneof(near(p), anyPath))),
      ([p, path]) => {
        const expected = regexOf(p).test(path)
        seen[`${expected}`]++
        expect([p, path, granted(p, path)]).toEqual([p, path, expected])
      },
    ),
    { numRuns: 20000 },
  )
  // both answers are well represented, so the comparison says something about each
  expect(Math.min(seen.true, seen.false)).toBeGreaterThan(2000)
})

test('the same answer for patterns of more than 32 segments (states over several words)', () => {
  // at most three `**`, so the regular expression stays fast on paths of a hundred segments
  const seen = { true: 0, false: 0 }
  const long = fc
    .tuple(
      fc.array(fc.constantFrom('*', 'a', 'b'), { minLength: 30, maxLength: 90 }),
      fc.array(fc.nat(90), { minLength: 1, maxLength: 3 }),
    )
    .map(([tokens, at]) => {
      const all: string[] = [...tokens] // fast-check reuses the drawn array while shrinking
      for (const i of at) all.splice(Math.min(i, all.length), 0, '**')
      return `/${all.join('/')}`
    })
  fc.assert(
    fc.property(
      long.chain((p) => fc.tuple(fc.constant(p), near(p))),
      ([p, path]) => {
        const expected = regexOf(p).test(path)
        seen[`${expected}`]++
        expect([p, path, granted(p, path)]).toEqual([p, path, expected])
      },
    ),
    { numRuns: 2000 },
  )
  expect(Math.min(seen.true, seen.false)).toBeGreaterThan(400)
})

test('examples: * one segment, ** any number (none too), a* literal, one trailing slash', () => {
  expect(granted('/rest/v1/domain/projects/*', '/rest/v1/domain/projects/42')).toBe(true)
  expect(granted('/rest/v1/domain/projects/*', '/rest/v1/domain/projects')).toBe(false)
  expect(granted('/rest/v1/domain/projects/*', '/rest/v1/domain/projects/42/x')).toBe(false)
  expect(granted('/rest/v1/reference/**', '/rest/v1/reference')).toBe(true)
  expect(granted('/rest/v1/reference/**', '/rest/v1/reference/a/b/c/')).toBe(true)
  expect(granted('/rest/v1/reference/**', '/rest/v1/reference//a')).toBe(false)
  expect(granted('/a*/b', '/ab/b')).toBe(false)
  expect(granted('/a*/b', '/a*/b')).toBe(true)
  expect(granted('/**/x/**/y/**', '/x/y')).toBe(true)
  expect(granted('/**/x/**/y/**', '/y/x')).toBe(false)
  expect(granted('/', '/')).toBe(true)
  expect(granted('/', '')).toBe(true)
  expect(granted('/a', 'a')).toBe(false)
})

/** Milliseconds one check of a role of `count` routes of `pattern` takes on `path`. */
function timed(pattern: string, count: number, path: string): number {
  const byRole = new Map([['r', Array.from({ length: count }, () => compileGrant(pattern, ['GET']))]])
  const start = performance.now()
  expect(grants(['r'], byRole, 'GET', path)).toBe(false)
  return performance.now() - start
}

test('the probe: a role of five routes of eight `**` answers a 40-segment path within milliseconds', () => {
  const path = `/rest/v1/model/a/${Array.from({ length: 40 }, (_, i) => `s${i}`).join('/')}/b`
  for (const p of ['/**/**/**/**/**/**/**/**/z', '/**/s1/**/s1/**/s1/**/s1/**/z/**', '/**/*/**/*/**/*/**/*/**/c'])
    expect(timed(p, 5, path)).toBeLessThan(10)
})

test('a role of 500 routes of the worst kind answers a path of 8,000 segments (a 16 KB head) in linear time', () => {
  const as = (n: number) => Array.from({ length: n }, () => 'a').join('/')
  // every segment leaves 250 partial matches of the block alive: what a backtracking matcher pays for
  const block = `/**/${as(250)}/b/**`
  expect(timed(block, 500, `/rest/v1/model/${as(8000)}`)).toBeLessThan(1500)
  expect(timed('/**/a/**/a/**/a/**/a/**/a/**/a/**/b/**', 500, `/rest/v1/model/${as(8000)}`)).toBeLessThan(200)
})
