/**
 * A column's value as its table declares it. The drivers type every value as unknown; a value of
 * another type means the SQL beside the read is wrong, so it fails here, loudly, instead of
 * flowing on mistyped. Plain `typeof` checks: no allocation, cheap enough for every row of a page.
 */
import type { Doc } from './doc'

function mistyped(expected: string, v: unknown): never {
  throw new TypeError(`a ${expected} column held ${v === null ? 'null' : typeof v}`)
}

/** A TEXT column (NOT NULL, or a key). */
export function text(v: unknown): string {
  return typeof v === 'string' ? v : mistyped('text', v)
}

/** A TEXT column that may be NULL. */
export function textOrNull(v: unknown): string | null {
  return v === null || typeof v === 'string' ? v : mistyped('text', v)
}

/** An INTEGER column (NOT NULL), a count or a sequence number: the drivers answer numbers. */
export function int(v: unknown): number {
  return typeof v === 'number' ? v : mistyped('integer', v)
}

/** A column holding a JSON object: the stored doc. */
export function docOf(v: unknown): Doc {
  return JSON.parse(text(v))
}
