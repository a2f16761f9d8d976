// The query string is cut by hand on the hot path (src/http/dispatch.ts): it must read every string
// as URLSearchParams reads it, the first of a repeated parameter counting.
import { expect, test } from 'bun:test'
import fc from 'fast-check'
import { parseQuery } from '~/http/query-string'

/** What a URL's `searchParams` holds for the query after its `?` (the constructor drops one more leading `?`). */
function asUrlSearchParams(search: string): Record<string, string> {
  const query: Record<string, string> = Object.create(null)
  for (const [k, v] of new URLSearchParams(`?${search}`)) if (!Object.hasOwn(query, k)) query[k] = v
  return query
}

test('query strings read as URLSearchParams reads them', () => {
  const cases = [
    '',
    'a=1',
    'a=1&a=2',
    '&&a=1&&b',
    'b&c=',
    '=x',
    'a==b=c',
    'q=a+b%20c%2Bd',
    'f=%7B%22kind%22%3A%22k1%22%7D&limit=20',
    'bad=%zz&half=%E2%82&lone=%&pct=100%25',
    'caf%C3%A9=th%C3%A9',
    'utf=%F0%9F%98%80',
    '?a=1',
    '__proto__=1&constructor=2&toString=3',
  ]
  for (const search of cases) expect(parseQuery(search)).toEqual(asUrlSearchParams(search))
})

test("names of Object.prototype's members are parameters like any other", () => {
  const query = parseQuery('__proto__=1&constructor=2&toString=3&hasOwnProperty=4&__proto__=5')
  expect(Object.keys(query)).toEqual(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])
  expect([query.__proto__, query.constructor, query.toString, query.hasOwnProperty]).toEqual(['1', '2', '3', '4'])
  expect(Object.hasOwn(parseQuery('a=1'), 'constructor')).toBe(false)
})

test('random query strings read as URLSearchParams reads them', () => {
  const piece = fc.oneof(
    fc.constantFrom('a', 'b', '=', '&', '+', '%', '%2', '%20', '%2B', '%26', '%3D', '%C3%A9', '%E2%82', '%FF', '%zz'),
    fc.string({ maxLength: 3 }),
  )
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
      const search = pieces.join('')
      expect(parseQuery(search)).toEqual(asUrlSearchParams(search))
    }),
    { numRuns: 2000 },
  )
})
