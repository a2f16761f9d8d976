/** JSON Schema as the API description states it, and reading values along dotted paths. */

export interface Schema {
  $ref?: string
  type?: string | string[]
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  enum?: unknown[]
  format?: string
  description?: string
  additionalProperties?: boolean | Schema
  default?: unknown
  anyOf?: Schema[]
  allOf?: Schema[]
  oneOf?: Schema[]
  pattern?: string
  minimum?: number
  maximum?: number
  maxLength?: number
}

export type Doc = Record<string, unknown>

export function get(value: unknown, path: string): unknown {
  let at = value
  for (const part of path.split('.')) {
    if (at === null || typeof at !== 'object') return undefined
    at = (at as Doc)[part]
  }
  return at
}

export function set(target: Doc, path: string, value: unknown): void {
  const parts = path.split('.')
  let at = target
  for (const part of parts.slice(0, -1)) {
    if (at[part] === null || typeof at[part] !== 'object') at[part] = {}
    at = at[part] as Doc
  }
  at[parts.at(-1)!] = value
}

/** A nullable schema (`anyOf: [X, {type: null}]`, null removing the member in a change) as X. */
export function plain(s: Schema): Schema {
  const options = (s.anyOf ?? s.oneOf)?.filter((x) => x.type !== 'null')
  return options?.length === 1 ? { ...options[0], description: s.description ?? options[0]!.description } : s
}

export const typeOf = (s: Schema): string | undefined =>
  Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : (s.type ?? (s.enum ? 'string' : undefined))

/** A property name as a label: `recv_timeout` is "Recv timeout". */
export function labelOf(name: string): string {
  const known: Record<string, string> = {
    pwd: 'Password',
    id: 'Id',
    ct: 'Created',
    lwt: 'Last written',
    url: 'URL',
    opts: 'Options',
    ext: 'Extension fields',
  }
  const last = name.split('.').at(-1)!
  if (known[last]) return known[last]
  const words = last.replace(/_/g, ' ')
  return words.charAt(0).toUpperCase() + words.slice(1)
}

/** Leaf columns of a list item: `opts.title`, `ext.ct`; nested objects one level down. */
export function columnsOf(item: Schema | undefined, prefix = ''): string[] {
  const out: string[] = []
  for (const [name, s] of Object.entries(item?.properties ?? {})) {
    const path = prefix + name
    if (typeOf(s) === 'object' && s.properties && !prefix) out.push(...columnsOf(s, `${path}.`))
    else out.push(path)
  }
  return out
}

/** A cell's text: strings as they are, other values as JSON. */
export function cellText(value: unknown): string {
  if (value === undefined || value === null) return ''
  if (typeof value === 'string') return value
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(', ')
  return JSON.stringify(value)
}

/** What a row is called in a message: its login, name, code... or its id. */
export function nameOf(row: unknown, key = 'id'): string {
  for (const path of ['login', 'name', 'code', 'classname', 'key', 'opts.title', 'type', key]) {
    const v = get(row, path)
    if (typeof v === 'string' && v) return v
  }
  return '(unnamed)'
}
