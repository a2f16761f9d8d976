/**
 * A role's path pattern: segments, where `*` is exactly one path segment, `**` any number of them
 * (none included) and any other segment itself (`a*` is literal). Empty segments of the pattern are
 * ignored; the path may end with one `/`. The segments before the first `**` and after the last are
 * compared in place; what lies between runs as a bit-parallel automaton over the path's segments
 * (a Map lookup and a few 32-bit operations per segment), so the time is linear in the path
 * whatever the pattern. The regular expression this replaced backtracked exponentially on several
 * `**`: five routes with eight `**` each held the process 3.4 s on a 40-segment path.
 */

/** The states are "i segments matched", i from 0 to the segment count, as bits of 32-bit words. */
interface Automaton {
  /** The accepting state: every segment matched. */
  readonly last: number
  /** States at a `**`: a path segment keeps them where they are. */
  readonly any: Int32Array
  /** States at a `*`: any path segment moves them on. */
  readonly one: Int32Array
  /** For each literal, the states it moves on. */
  readonly literals: ReadonlyMap<string, Int32Array>
  /** What a segment that is no literal moves on: nothing. */
  readonly none: Int32Array
}

export interface PathPattern {
  /** The segments before the first `**` (all of them when there is none), matched at the start. */
  readonly head: readonly string[]
  /** The segments after the last `**`, matched at the end; null when there is no `**`. */
  readonly tail: readonly string[] | null
  /** From the first `**` to the last, when there are two with segments between them. */
  readonly middle: Automaton | null
}

export function compilePathPattern(pattern: string): PathPattern {
  const tokens: string[] = []
  for (const seg of pattern.split('/')) {
    // `**/**` matches what `**` does; collapsing them lets the automaton's closure take one step
    if (seg !== '' && !(seg === '**' && tokens.at(-1) === '**')) tokens.push(seg)
  }
  const first = tokens.indexOf('**')
  if (first < 0) return { head: tokens, tail: null, middle: null }
  const last = tokens.lastIndexOf('**')
  return {
    head: tokens.slice(0, first),
    tail: tokens.slice(last + 1),
    middle: last > first ? automaton(tokens.slice(first, last + 1)) : null,
  }
}

function automaton(tokens: readonly string[]): Automaton {
  const words = (tokens.length >>> 5) + 1
  const any = new Int32Array(words)
  const one = new Int32Array(words)
  const literals = new Map<string, Int32Array>()
  tokens.forEach((token, i) => {
    let set = token === '**' ? any : token === '*' ? one : literals.get(token)
    if (!set) {
      set = new Int32Array(words)
      literals.set(token, set)
    }
    set[i >>> 5]! |= 1 << (i & 31)
  })
  return { last: tokens.length, any, one, literals, none: new Int32Array(words) }
}

/** The segments of a request path; null when no pattern matches it (no leading `/`, an empty segment). */
export function pathSegments(path: string): string[] | null {
  const body = path.endsWith('/') ? path.slice(0, -1) : path
  if (body === '') return []
  if (body[0] !== '/') return null
  const segments = body.slice(1).split('/')
  return segments.includes('') ? null : segments
}

export function matchesPath(p: PathPattern, segments: readonly string[]): boolean {
  const { head, tail, middle } = p
  if (tail === null) return segments.length === head.length && fits(head, segments, 0)
  const end = segments.length - tail.length
  if (end < head.length || !fits(head, segments, 0) || !fits(tail, segments, end)) return false
  return middle === null || runs(middle, segments, head.length, end)
}

function fits(tokens: readonly string[], segments: readonly string[], at: number): boolean {
  for (let i = 0; i < tokens.length; i++) if (tokens[i] !== '*' && tokens[i] !== segments[at + i]) return false
  return true
}

/** Whether the automaton accepts segments[from, to). */
function runs(a: Automaton, segments: readonly string[], from: number, to: number): boolean {
  const { any, one, literals, none, last } = a
  const words = any.length
  const states = new Int32Array(words)
  states[0] = 0b11 // the first segment is a `**`, which may match none
  for (let i = from; i < to; i++) {
    const literal = literals.get(segments[i]!) ?? none
    let carry = 0
    let carryOverEmpty = 0
    for (let w = 0; w < words; w++) {
      const now = states[w]!
      const anyHere = any[w]!
      const moved = now & (one[w]! | literal[w]!)
      let next = (moved << 1) | carry | (now & anyHere)
      // a `**` also matches no segment: its state reaches the next one, never another `**` (collapsed)
      const atAny = next & anyHere
      next |= (atAny << 1) | carryOverEmpty
      states[w] = next
      carry = moved >>> 31
      carryOverEmpty = atAny >>> 31
    }
    // the last segment is a `**`: once reached, the accepting state stays
    if ((states[last >>> 5]! >>> (last & 31)) & 1) return true
  }
  return false
}

/**
 * Whether the pattern names one record of the collection at `collection` (its segments): the
 * collection's path, then one literal segment (an id), and nothing more but a final `**`. A role
 * granting GET on such paths reads those records, though no other id of the collection.
 */
export function namesRecordOf(p: PathPattern, collection: readonly string[]): boolean {
  const n = collection.length
  if (p.head.length !== n + 1 || (p.tail !== null && (p.tail.length > 0 || p.middle !== null))) return false
  const id = p.head[n]!
  return id !== '*' && collection.every((segment, i) => p.head[i] === segment || p.head[i] === '*')
}
