/**
 * The field paths a collection knows. `x.*` admits any path below `x` (free-form objects such as
 * `ext` or an extobj's `value`). Used to whitelist filter, order and mask paths.
 */

/** One path segment: what a field name may look like anywhere in a query. */
const SEGMENT = /^[A-Za-z_][A-Za-z0-9_]*$/

export function isValidPath(path: string): boolean {
  return path.length <= 200 && path.split('.').every((s) => SEGMENT.test(s))
}

export class FieldSet {
  private readonly exact: Set<string>
  private readonly open: string[]

  constructor(readonly paths: readonly string[]) {
    this.exact = new Set(paths.filter((p) => !p.endsWith('.*')))
    this.open = paths.filter((p) => p.endsWith('.*')).map((p) => p.slice(0, -1))
    // every parent of a known path is known too (`opts` for `opts.title`)
    for (const p of [...this.exact, ...this.open.map((o) => o.slice(0, -1))]) {
      const parts = p.split('.')
      for (let i = 1; i < parts.length; i++) this.exact.add(parts.slice(0, i).join('.'))
    }
  }

  has(path: string): boolean {
    return isValidPath(path) && (this.exact.has(path) || this.open.some((o) => path.startsWith(o)))
  }

  /**
   * The output paths a mask entry stands for: itself when known, or the known paths below it
   * (`ext` -> `ext.ct, ext.lwt` in a list that shows only those). Null when it names nothing.
   */
  expand(path: string): string[] | null {
    if (!isValidPath(path)) return null
    if (this.paths.includes(path) || this.open.some((o) => path.startsWith(o))) return [path]
    const below = this.paths.filter((p) => p.startsWith(`${path}.`))
    if (below.length) return below.map((p) => (p.endsWith('.*') ? p.slice(0, -2) : p))
    return this.exact.has(path) ? [path] : null
  }
}
