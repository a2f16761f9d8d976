/** Query strings, read as URLSearchParams reads them: one parser for every call (HTTP, websocket frames, scripts). */

/**
 * A query string's parameters, read as URLSearchParams reads them; of a parameter given twice, the
 * first counts. Cut by hand: URLSearchParams and its iterator cost a list request more than its SQL.
 */
export function parseQuery(search: string): Record<string, string | undefined> {
  // no prototype: `__proto__` is kept as a parameter like any other instead of setting the prototype
  const query: Record<string, string | undefined> = Object.create(null)
  for (let at = 0; at < search.length; ) {
    let end = search.indexOf('&', at)
    if (end < 0) end = search.length
    if (end > at) {
      let eq = search.indexOf('=', at)
      if (eq < 0 || eq > end) eq = end
      const name = formDecode(search.slice(at, eq))
      if (!Object.hasOwn(query, name)) query[name] = eq < end ? formDecode(search.slice(eq + 1, end)) : ''
    }
    at = end + 1
  }
  return query
}

/** One name or value of a query string: `+` is a space, then percent-decoding (malformed escapes as URLSearchParams keeps them). */
function formDecode(part: string): string {
  if (part.indexOf('%') < 0 && part.indexOf('+') < 0) return part
  try {
    return decodeURIComponent(part.replaceAll('+', ' '))
  } catch {
    return new URLSearchParams(`a=${part}`).get('a')!
  }
}
