/**
 * Evaluates a list filter (storage/query.ts FilterNode) against one JSON document in memory, with
 * the same result as the SQL that compileFilter produces over `json_extract(doc, '$.' + path)`:
 * subscriptions filter events this way, and a row a list would return must be an event they get.
 * tests/query/filter-eval.test.ts runs both over the same documents so the two cannot drift.
 *
 * Where JSON and SQLite differ, SQLite wins:
 * - A field reads as json_extract does: missing and JSON null are NULL; true/false are 1/0;
 *   objects and arrays are their JSON text; a path step into an array or a scalar is NULL.
 * - Literals are bound as the embedded driver binds them: booleans as 1/0, every number as a REAL.
 * - Three-valued logic: a comparison with NULL is unknown, `not` of unknown is unknown, and only a
 *   true result matches. `==` with a null literal is IS NULL; `!=` is IS NOT (never unknown).
 * - No type conversion in comparisons (the operands have no affinity): numbers sort before text,
 *   1 == '1' is false, and text compares by code point (UTF-8 byte order, not JS UTF-16 order).
 * - `like` and `ilike` read their subject as text: integers in decimal, REALs as SQLite prints
 *   them (%!.15g: 1.5, 2.0, 1.0e+21), booleans as 1/0. `like` is case-sensitive with % and _
 *   only (compileFilter escapes GLOB's * ? [); `ilike` folds ASCII letters only, as LIKE does.
 * - `in` with an empty list is false even for a NULL subject (it compiles to a constant 0).
 * - `contains` is true when the field is an array with an element equal to the value (EXISTS over
 *   json_each): never unknown; false for anything that is not an array.
 */
import { getPath } from '~storage/doc'
import type { FilterNode, Literal, Operand } from '~storage/query'

/** A value as SQLite holds it: NULL, a number (INTEGER or REAL), or text. */
type Scalar = null | number | string
/** SQL's third truth value is `null`. */
type Truth = boolean | null

/** True when the document is one the compiled SQL filter would select. */
export function filterHolds(node: FilterNode, doc: unknown): boolean {
  return evaluate(node, doc) === true
}

function evaluate(node: FilterNode, doc: unknown): Truth {
  switch (node.op) {
    case 'and':
    case 'or': {
      const results = node.args.map((n) => evaluate(n, doc))
      return combine(results, node.op === 'or')
    }
    case 'not': {
      const inner = evaluate(node.arg, doc)
      return inner === null ? null : !inner
    }
    case 'isnull':
      return scalarOf(node.arg, doc) === null
    case 'contains': {
      // json_each yields each element as json_extract would: compared without conversion, as == does
      const v = getPath(doc, node.field)
      if (!Array.isArray(v)) return false
      const wanted = literalScalar(node.value)
      return v.some((item) => {
        const x = fieldScalar(item)
        return x !== null && wanted !== null && compare(x, wanted) === 0
      })
    }
    case 'in': {
      if (node.values.length === 0) return false
      const left = scalarOf(node.left, doc)
      if (left === null) return null
      // IN compares without conversion, as == does: strict equality of the scalars
      const values = node.values.map(literalScalar)
      if (values.includes(left)) return true
      return values.includes(null) ? null : false
    }
    case 'like':
    case 'ilike': {
      const subject = textOf(node.left, doc)
      if (subject === null) return null
      return node.op === 'like'
        ? wildcardMatch(subject, node.pattern)
        : wildcardMatch(foldAscii(subject), foldAscii(node.pattern))
    }
    case '==':
      if (isNullLiteral(node.left)) return scalarOf(node.right, doc) === null
      if (isNullLiteral(node.right)) return scalarOf(node.left, doc) === null
      return comparison(node.left, node.right, doc, (c) => c === 0)
    case '!=': {
      // IS NOT: NULL is a value here, equal only to NULL
      const left = scalarOf(node.left, doc)
      const right = scalarOf(node.right, doc)
      if (left === null || right === null) return left !== right
      return compare(left, right) !== 0
    }
    case '<':
      return comparison(node.left, node.right, doc, (c) => c < 0)
    case '<=':
      return comparison(node.left, node.right, doc, (c) => c <= 0)
    case '>':
      return comparison(node.left, node.right, doc, (c) => c > 0)
    case '>=':
      return comparison(node.left, node.right, doc, (c) => c >= 0)
  }
}

/** AND (`decisive` false) or OR (`decisive` true): one decisive value decides, else unknown wins. */
function combine(values: Truth[], decisive: boolean): Truth {
  if (values.includes(decisive)) return decisive
  return values.includes(null) ? null : !decisive
}

function comparison(left: Operand, right: Operand, doc: unknown, holds: (order: number) => boolean): Truth {
  const a = scalarOf(left, doc)
  const b = scalarOf(right, doc)
  return a === null || b === null ? null : holds(compare(a, b))
}

const isNullLiteral = (o: Operand) => 'value' in o && o.value === null

function scalarOf(o: Operand, doc: unknown): Scalar {
  return 'field' in o ? fieldScalar(getPath(doc, o.field)) : literalScalar(o.value)
}

/** What json_extract returns for a JSON value. */
function fieldScalar(v: unknown): Scalar {
  if (v === undefined || v === null) return null
  if (typeof v === 'boolean') return v ? 1 : 0
  if (typeof v === 'number' || typeof v === 'string') return v
  return JSON.stringify(v) ?? null // a value JSON has no text for is no value
}

function literalScalar(v: Literal): Scalar {
  return typeof v === 'boolean' ? (v ? 1 : 0) : v
}

/** The order SQL's ORDER BY gives two field values of documents: NULL first, then numbers, then text. */
export function compareFields(a: unknown, b: unknown): number {
  const x = fieldScalar(a)
  const y = fieldScalar(b)
  if (x === null || y === null) return x === y ? 0 : x === null ? -1 : 1
  return compare(x, y)
}

/** SQLite's order without affinity: NULL (handled by callers) < numbers < text. */
function compare(a: number | string, b: number | string): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b
  if (typeof a === 'number') return -1
  if (typeof b === 'number') return 1
  return compareCodePoints(a, b)
}

/** BINARY collation compares UTF-8 bytes, which order as code points do. */
function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0
  const x = Array.from(a)
  const y = Array.from(b)
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!
    if (d !== 0) return d
  }
  return x.length - y.length
}

/** The text LIKE and GLOB see for an operand, or null for NULL. */
function textOf(o: Operand, doc: unknown): string | null {
  if ('value' in o) {
    const v = literalScalar(o.value)
    return typeof v === 'number' ? realText(v) : v
  }
  const v = fieldScalar(getPath(doc, o.field))
  if (typeof v !== 'number') return v
  // json_extract yields an INTEGER for a JSON integer that fits 64 bits, else a REAL
  return Number.isInteger(v) && Math.abs(v) < 2 ** 63 ? String(v) : realText(v)
}

/** A REAL as SQLite prints it: %!.15g (15 significant digits, at least one decimal, e+XX). */
function realText(x: number): string {
  const [digits, exponentText] = x.toExponential(14).split('e') as [string, string]
  const exponent = Number(exponentText)
  const trim = (s: string) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '.0') : `${s}.0`)
  if (exponent < -4 || exponent >= 15) {
    const sign = exponent < 0 ? '-' : '+'
    return `${trim(digits)}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`
  }
  return trim(x.toFixed(14 - exponent))
}

/** SQLite's LIKE folds only ASCII letters. */
function foldAscii(s: string): string {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase())
}

/**
 * `%` matches any run of characters, `_` exactly one (a code point), everything else itself.
 * Linear backtracking to the last `%` keeps hostile patterns at O(subject x pattern).
 */
function wildcardMatch(subject: string, pattern: string): boolean {
  const s = Array.from(subject)
  const p = Array.from(pattern)
  let si = 0
  let pi = 0
  let starAt = -1
  let resumeAt = 0
  while (si < s.length) {
    if (pi < p.length && p[pi] !== '%' && (p[pi] === '_' || p[pi] === s[si])) {
      si++
      pi++
    } else if (pi < p.length && p[pi] === '%') {
      starAt = pi++
      resumeAt = si
    } else if (starAt >= 0) {
      pi = starAt + 1
      si = ++resumeAt
    } else {
      return false
    }
  }
  while (p[pi] === '%') pi++
  return pi === p.length
}
