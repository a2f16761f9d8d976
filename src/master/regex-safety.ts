/**
 * Whether a regular expression can backtrack catastrophically, decided from its text before it is
 * ever run. Prefer refusing too much: a user can always write a simpler pattern. Three rules:
 *
 * - A big repetition (`*`, `+`, `{n,}`, `{n,m}` with m > BIG) of something whose length varies
 *   (`(a+)+`, `(a?a)+`, `(a{1,2})+`, `(a|ab)*`, `(\w+\s?)*`) or that can match the same text in more
 *   than one way (`(a|a)*`, `((a|a))*`, `(\d|\w)+`) has exponentially many ways to split a failing
 *   input, and is refused. "More than one way" is decided cheaply and conservatively: alternatives
 *   that can begin with the same character, anywhere inside, or a piece of varying length followed by
 *   one that can begin with a character the first can match (`a?a`, `.*@`).
 * - A small counted repetition (`{n,m}`, 1 < m <= BIG) of something that can match the same text in
 *   more than one way is refused above 3 times; one of something of varying length counts as that
 *   many copies in a row for the next rule (`(.+){10}x` is ten `.+` in a row).
 * - Repetitions of varying length in a row that can match the same characters each add a degree to
 *   the time of a failing match (`.*.*.*x` is cubic, and matching anywhere in the value adds one):
 *   more than MAX_DEGREE in a row are refused. A piece that none of them can match ends the row
 *   (`\d+\.\d+\.\d+` is linear).
 *
 * It is a static check, not a proof: the border matcher's time limit (./border-matcher.ts) still
 * guards the checks against what it lets through. The input must already compile as a JavaScript
 * regular expression (no `u` flag).
 */

/** Repetitions up to this many are small. */
const BIG = 10
/** Overlapping repetitions of varying length allowed in a row. */
const MAX_DEGREE = 2
/** A small counted repetition of something ambiguous is allowed up to this many times. */
const MAX_AMBIGUOUS_COUNT = 3

/** A set of characters (lower case) or "anything". */
type Chars = Set<string> | 'any'

/** One element of a sequence, for counting repetitions in a row. */
interface Elem {
  /** How many overlapping repetitions of varying length it holds in a row (0: none). */
  deg: number
  chars: Chars
  empty: boolean
}

interface Piece {
  /** The one length of text it matches, or null when the length varies. */
  len: number | null
  /** It can match the same text in more than one way. */
  ambiguous: boolean
  /** It can match the empty string (so what follows it may start the match). */
  empty: boolean
  /** What it can start with. */
  first: Chars
  /** Every character it can match. */
  chars: Chars
  /** Its elements in sequence (a counted repetition repeats them). */
  elems: Elem[]
}

class Reader {
  i = 0
  constructor(readonly s: string) {}
  peek(): string | undefined {
    return this.s[this.i]
  }
  next(): string {
    return this.s[this.i++] ?? ''
  }
}

class Unsafe extends Error {}

const NONE: Chars = new Set()
const union = (a: Chars, b: Chars): Chars => (a === 'any' || b === 'any' ? 'any' : new Set([...a, ...b]))
const size = (a: Chars) => (a === 'any' ? Infinity : a.size)
const overlaps = (a: Chars, b: Chars): boolean =>
  a === 'any' || b === 'any' ? size(a) > 0 && size(b) > 0 : [...a].some((c) => b.has(c))

/** Why the pattern may backtrack catastrophically, or null when it passes the rules. */
export function backtrackProblem(pattern: string): string | null {
  const r = new Reader(pattern)
  try {
    alternation(r)
    return null
  } catch (err) {
    if (err instanceof Unsafe) return err.message
    throw err
  }
}

/** The most overlapping repetitions of varying length in a row; refused above MAX_DEGREE. */
function degree(elems: Elem[]): number {
  let most = 0
  let run = 0
  let runChars: Chars = NONE
  for (const e of elems) {
    if (e.deg > 0) {
      const joins = run > 0 && overlaps(runChars, e.chars)
      run = joins ? run + e.deg : e.deg
      runChars = joins ? union(runChars, e.chars) : e.chars
    } else if (!e.empty && !overlaps(runChars, e.chars)) {
      run = 0
      runChars = NONE
    }
    most = Math.max(most, run)
  }
  if (most > MAX_DEGREE)
    throw new Unsafe(
      `more than ${MAX_DEGREE} repetitions of varying length that can match the same text follow one another (such as .*.*.* or (.+){10}): it can backtrack for a very long time`,
    )
  return most
}

/** alternatives separated by `|`, up to a `)` or the end. */
function alternation(r: Reader): Piece {
  const branches: Piece[] = [sequence(r)]
  while (r.peek() === '|') {
    r.next()
    branches.push(sequence(r))
  }
  if (branches.length === 1) return branches[0] as Piece
  const chars = branches.map((b) => b.chars).reduce(union)
  const empty = branches.some((b) => b.empty)
  const len = branches[0]?.len ?? null
  return {
    len: branches.every((b) => b.len === len) ? len : null,
    ambiguous:
      branches.some((b) => b.ambiguous) ||
      branches.some((a, i) => branches.some((b, j) => j > i && overlaps(a.first, b.first))),
    empty,
    first: branches.map((b) => b.first).reduce(union),
    chars,
    elems: [{ deg: Math.max(...branches.map((b) => degree(b.elems))), chars, empty }],
  }
}

function sequence(r: Reader): Piece {
  const out: Piece = { len: 0, ambiguous: false, empty: true, first: NONE, chars: NONE, elems: [] }
  /** Characters the pieces of varying length just before can match. */
  let pending: Chars = NONE
  for (let c = r.peek(); c !== undefined && c !== '|' && c !== ')'; c = r.peek()) {
    const p = quantified(r)
    out.ambiguous ||= p.ambiguous || overlaps(pending, p.first)
    if (p.len === null) pending = union(pending, p.chars)
    else if (!p.empty) pending = NONE
    out.len = out.len === null || p.len === null ? null : out.len + p.len
    if (out.empty) out.first = union(out.first, p.first)
    out.empty &&= p.empty
    out.chars = union(out.chars, p.chars)
    out.elems.push(...p.elems)
  }
  degree(out.elems)
  return out
}

const AMBIGUOUS =
  'a repetition of something that can match the same text in more than one way (such as (a|a)* or (\\d|\\w)+): it can backtrack without end'

function quantified(r: Reader): Piece {
  const piece = atom(r)
  const q = quantifier(r)
  if (!q) return piece
  if (r.peek() === '?') r.next() // lazy: the same ways to backtrack
  const fixed = q.min === q.max
  const len = piece.len !== null && fixed ? piece.len * q.min : null
  const empty = piece.empty || q.min === 0
  const one = (deg: number): Piece => ({ ...piece, len, empty, elems: [{ deg, chars: piece.chars, empty }] })
  if (q.max <= 1) return one(degree(piece.elems) + (fixed ? 0 : 1))
  if (q.max > BIG) {
    if (piece.len === null)
      throw new Unsafe(
        'a repetition of something whose length varies (such as (a+)+ or (a?a)+ or (a|ab)*): it can backtrack without end',
      )
    if (piece.ambiguous) throw new Unsafe(AMBIGUOUS)
    return one(1)
  }
  if (piece.ambiguous && q.max > MAX_AMBIGUOUS_COUNT) throw new Unsafe(AMBIGUOUS)
  if (piece.len !== null) return one(fixed ? 0 : 1)
  // a counted repetition of something of varying length: so many copies in a row
  const copies = Math.min(q.max, MAX_DEGREE + 1)
  const elems = Array.from({ length: copies }, () => piece.elems).flat()
  degree(elems)
  return { ...piece, len, empty, elems }
}

function quantifier(r: Reader): { min: number; max: number } | null {
  const c = r.peek()
  if (c === '*' || c === '+' || c === '?') {
    r.next()
    return { min: c === '+' ? 1 : 0, max: c === '?' ? 1 : Infinity }
  }
  if (c !== '{') return null
  const m = /^\{(\d+)(,(\d*))?\}/.exec(r.s.slice(r.i))
  if (!m) return null // a literal `{` outside the u flag
  r.i += m[0].length
  const min = Number(m[1])
  return { min, max: m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]) }
}

/** One character out of `chars`; `len` 0 and empty for an assertion. */
const single = (chars: Chars): Piece => ({
  len: 1,
  ambiguous: false,
  empty: false,
  first: chars,
  chars,
  elems: [{ deg: 0, chars, empty: false }],
})
const ASSERTION: Piece = { len: 0, ambiguous: false, empty: true, first: NONE, chars: NONE, elems: [] }
const DIGITS: Chars = new Set('0123456789')
/** A backreference: any text of any length. */
const BACKREF: Piece = { ...single('any'), len: null, elems: [{ deg: 1, chars: 'any', empty: true }] }

function atom(r: Reader): Piece {
  const c = r.next()
  if (c === '(') {
    let look = false
    if (r.peek() === '?') {
      r.next()
      const kind = r.next()
      if (kind === '<' && r.peek() !== '=' && r.peek() !== '!') {
        while (r.peek() !== undefined && r.next() !== '>'); // a named group
      } else if (kind === '<') {
        r.next()
        look = true
      } else look = kind === '=' || kind === '!'
    }
    const inner = alternation(r)
    r.next() // `)`
    // a lookaround matches no text (its inside was checked on its own)
    return look ? { ...ASSERTION, ambiguous: inner.ambiguous } : inner
  }
  if (c === '[') return single(charClass(r))
  if (c === '^' || c === '$') return ASSERTION
  if (c === '.') return single('any')
  if (c === '\\') return escaped(r)
  return single(new Set([c.toLowerCase()]))
}

/** The characters of a class after its `[`; anything when negated or not simple. */
function charClass(r: Reader): Chars {
  let out: Chars = r.peek() === '^' ? 'any' : NONE
  let prev: string | null = null
  while (r.peek() !== undefined && r.peek() !== ']') {
    let c = r.next()
    if (c === '\\') {
      const e = r.next()
      const known = e === 'd' ? DIGITS : /[wWsSDbBxuc0-9]/.test(e) ? 'any' : null
      if (known) {
        out = union(out, known)
        prev = null
        continue
      }
      c = e === 'n' || e === 't' || e === 'r' || e === 'f' || e === 'v' ? `\\${e}` : e
    } else if (c === '-' && prev !== null && r.peek() !== undefined && r.peek() !== ']') {
      const to = r.peek() === '\\' ? 'any' : r.next()
      const [a, b] = [prev.charCodeAt(0), to === 'any' ? 0 : to.charCodeAt(0)]
      out = to === 'any' || b - a > 128 ? 'any' : union(out, range(a, b))
      prev = null
      continue
    }
    out = union(out, new Set([c.toLowerCase()]))
    prev = c
  }
  r.next() // `]`
  return out
}

function range(a: number, b: number): Set<string> {
  const out = new Set<string>()
  for (let i = a; i <= b; i++) {
    const c = String.fromCharCode(i)
    out.add(c.toLowerCase()).add(c.toUpperCase().toLowerCase())
  }
  return out
}

function escaped(r: Reader): Piece {
  const c = r.next()
  if (c === 'b' || c === 'B') return ASSERTION
  if (/[1-9]/.test(c)) {
    while (/\d/.test(r.peek() ?? '')) r.next()
    return BACKREF
  }
  if (c === 'k' && r.peek() === '<') {
    while (r.peek() !== undefined && r.next() !== '>');
    return BACKREF
  }
  if (c === 'd') return single(DIGITS)
  if (/[DwWsS]/.test(c)) return single('any')
  if (c === 'x' || c === 'u' || c === 'c') return single('any') // a character by code: taken as any, conservatively
  return single(
    new Set([c === 'n' || c === 't' || c === 'r' || c === 'f' || c === 'v' || c === '0' ? `\\${c}` : c.toLowerCase()]),
  )
}
