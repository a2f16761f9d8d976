/**
 * Whether a regular expression can backtrack catastrophically, decided from its text before it is
 * ever run: the star-height rule of safe-regex. A repetition is "big" when it may repeat more than
 * BIG times (`*`, `+`, `{n,}`, `{n,m}` with m > BIG); a big repetition of something that itself
 * holds a big repetition (`(a+)+`, `(a*)*b`, `(\w+\s?)*$`, `(x{1,50}){1,50}`) has exponentially many
 * ways to split a failing input, and is refused. So is a big repetition of a group whose
 * alternatives can begin with the same character (`(a|a)*`, `(\d|\w)+`, `(.|x)*`), the other
 * classic exponential form, checked by first character only (a cheap, conservative test).
 *
 * It is a static check, not a proof: polynomial forms (`.*.*.*x`) pass it, and the border
 * matcher's time limit (./border-matcher.ts) still guards the checks against what it lets through.
 * The input must already compile as a JavaScript regular expression (no `u` flag).
 */

/** Repetitions up to this many are small: nested small ones stay polynomial. */
const BIG = 10

/** What a piece of the pattern can start with: a literal character (lower case) or "anything". */
type First = Set<string> | 'any'

interface Piece {
  /** It holds a big repetition somewhere inside. */
  big: boolean
  /** It can match the empty string (so what follows it may start the match). */
  empty: boolean
  first: First
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

const union = (a: First, b: First): First => (a === 'any' || b === 'any' ? 'any' : new Set([...a, ...b]))
const overlaps = (a: First, b: First) => a === 'any' || b === 'any' || [...a].some((c) => b.has(c))

/** Why the pattern may backtrack catastrophically, or null when it passes the rule. */
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

class Unsafe extends Error {}

/** alternatives separated by `|`, up to a `)` or the end. */
function alternation(r: Reader): Piece & { branches: First[] } {
  const branches: Piece[] = [sequence(r)]
  while (r.peek() === '|') {
    r.next()
    branches.push(sequence(r))
  }
  return {
    big: branches.some((b) => b.big),
    empty: branches.some((b) => b.empty),
    first: branches.map((b) => b.first).reduce(union),
    branches: branches.map((b) => b.first),
  }
}

function sequence(r: Reader): Piece {
  const out: Piece = { big: false, empty: true, first: new Set() }
  for (let c = r.peek(); c !== undefined && c !== '|' && c !== ')'; c = r.peek()) {
    const p = quantified(r)
    out.big ||= p.big
    if (out.empty) out.first = union(out.first, p.first)
    out.empty &&= p.empty
  }
  return out
}

function quantified(r: Reader): Piece {
  const { piece, branches } = atom(r)
  const q = quantifier(r)
  if (!q) return piece
  if (r.peek() === '?') r.next() // lazy: the same ways to backtrack
  const big = q.max > BIG
  if (big && piece.big)
    throw new Unsafe('a repetition holds another repetition (such as (a+)+): it can backtrack without end')
  if (big && branches && branches.some((a, i) => branches.some((b, j) => j > i && overlaps(a, b))))
    throw new Unsafe(
      'a repetition of alternatives that can start alike (such as (a|ab)*): it can backtrack without end',
    )
  return { big: piece.big || big, empty: piece.empty || q.min === 0, first: piece.first }
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

const ANY: Piece = { big: false, empty: false, first: 'any' }
const EMPTY: Piece = { big: false, empty: true, first: new Set() }
const literal = (c: string): Piece => ({ big: false, empty: false, first: new Set([c.toLowerCase()]) })

function atom(r: Reader): { piece: Piece; branches?: First[] } {
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
    // a lookaround matches no text: its inside still counts for nesting
    return look ? { piece: { ...EMPTY, big: inner.big } } : { piece: inner, branches: inner.branches }
  }
  if (c === '[') {
    while (r.peek() !== undefined && r.peek() !== ']') if (r.next() === '\\') r.next()
    r.next()
    return { piece: ANY }
  }
  if (c === '^' || c === '$') return { piece: EMPTY }
  if (c === '.') return { piece: ANY }
  if (c === '\\') return { piece: escaped(r) }
  return { piece: literal(c) }
}

function escaped(r: Reader): Piece {
  const c = r.next()
  if (c === 'b' || c === 'B') return EMPTY
  if (/[dDwWsS]/.test(c) || /[1-9]/.test(c)) {
    if (/[1-9]/.test(c)) while (/\d/.test(r.peek() ?? '')) r.next()
    return ANY
  }
  if (c === 'k' && r.peek() === '<') {
    while (r.peek() !== undefined && r.next() !== '>');
    return ANY
  }
  if (c === 'x' || c === 'u' || c === 'c') return ANY // a character by code: taken as any, conservatively
  return literal(c === 'n' || c === 't' || c === 'r' || c === 'f' || c === 'v' || c === '0' ? `\\${c}` : c)
}
