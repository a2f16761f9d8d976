/**
 * A form's fields made from a request body schema, and the body made back from what was typed. A
 * field's raw value is what its control holds: text, a checkbox's state or the checked options.
 */
import { type PropRow, propertiesOf, rowsOf } from './class-properties'
import { FieldError } from './field-error'
import { labelOf, plain, type Schema, set, typeOf } from './schema'

export type Kind =
  | 'text'
  | 'textarea'
  | 'code'
  | 'password'
  | 'number'
  | 'boolean'
  | 'enum'
  | 'multi'
  | 'list'
  | 'json'
  | 'properties'
/** A control's value; a class's properties editor holds its rows. */
export type Raw = string | boolean | string[] | PropRow[]
export type Values = Record<string, Raw>

export interface Field {
  path: string
  label: string
  kind: Kind
  required: boolean
  /** The fieldset it sits in: the parent object's label ("Opts"). */
  group?: string
  options?: string[]
  hint?: string
  /** The schema's default: where a create form starts. */
  default?: unknown
  /** An enum of numbers (`isenabled`: 0 or 1): its option is sent as the number. */
  numeric?: boolean
}

const LONG_TEXT = new Set(['scriptdata', 'description', 'comment', 'value'])

function kindOf(name: string, nullable: Schema): Pick<Field, 'kind' | 'options' | 'numeric'> {
  // a script's code (its schema also takes the original's visual form, an object): an editor of text
  if (name === 'scriptdata') return { kind: 'code' }
  const s = plain(nullable)
  const type = typeOf(s)
  if (type === 'array') {
    const items = plain(s.items ?? {})
    if (items.enum) return { kind: 'multi', options: items.enum.map(String) }
    const itemType = typeOf(items)
    if (itemType === 'string' || itemType === 'integer' || itemType === 'number') return { kind: 'list' }
    // a model class's properties: a row each, the data types from the schema's enum
    const dataType = items.properties?.data_type
    if (items.properties?.name && dataType?.enum) return { kind: 'properties', options: dataType.enum.map(String) }
    return { kind: 'json' }
  }
  if (s.enum) return { kind: 'enum', options: s.enum.map(String), numeric: s.enum.every((x) => typeof x === 'number') }
  if (type === 'boolean') return { kind: 'boolean' }
  if (type === 'integer' || type === 'number') return { kind: 'number' }
  if (type === 'string') {
    if (name === 'pwd' || name === 'password') return { kind: 'password' }
    if (LONG_TEXT.has(name) || (s.maxLength ?? 0) > 2048) return { kind: 'textarea' }
    return { kind: 'text' }
  }
  return { kind: 'json' }
}

/** The fields of a body schema: top-level properties, and those of a nested object in a fieldset. */
export function fieldsOf(schema: Schema | undefined, skip: string[] = ['id']): Field[] {
  const out: Field[] = []
  const required = new Set(schema?.required ?? [])
  for (const [name, s] of Object.entries(schema?.properties ?? {})) {
    if (skip.includes(name)) continue
    if (typeOf(s) === 'object' && s.properties && Object.keys(s.properties).length) {
      const inner = new Set(s.required ?? [])
      for (const [sub, ss] of Object.entries(s.properties))
        out.push({
          path: `${name}.${sub}`,
          label: labelOf(sub),
          required: required.has(name) && inner.has(sub),
          group: labelOf(name),
          hint: ss.description,
          default: plain(ss).default,
          ...kindOf(sub, ss),
        })
      continue
    }
    out.push({
      path: name,
      label: labelOf(name),
      required: required.has(name),
      hint: s.description,
      default: plain(s).default,
      ...kindOf(name, s),
    })
  }
  return out
}

export function toRaw(f: Field, value: unknown): Raw {
  switch (f.kind) {
    case 'boolean':
      return value === true
    case 'multi':
      return Array.isArray(value) ? value.map(String) : []
    case 'list':
      return Array.isArray(value) ? value.map(String).join('\n') : ''
    case 'json':
      return value === undefined ? '' : JSON.stringify(value, null, 2)
    case 'properties':
      return rowsOf(value)
    case 'code':
      return typeof value === 'string'
        ? value
        : value === undefined || value === null
          ? ''
          : JSON.stringify(value, null, 2)
    default:
      return value === undefined || value === null ? '' : String(value)
  }
}

/** A create form's start: each field's default. */
export const defaultsOf = (fields: Field[]): Values =>
  Object.fromEntries(fields.map((f) => [f.path, toRaw(f, f.default)]))

export function valuesOf(fields: Field[], doc: unknown): Values {
  const out: Values = {}
  for (const f of fields) {
    let at = doc
    for (const part of f.path.split('.'))
      at = at && typeof at === 'object' ? (at as Record<string, unknown>)[part] : undefined
    out[f.path] = toRaw(f, at)
  }
  return out
}

export { FieldError }

/** The value a raw entry stands for; undefined when the control is empty. */
export function fromRaw(f: Field, raw: Raw): unknown {
  if (f.kind === 'boolean') return raw === true
  if (f.kind === 'multi') return raw as string[]
  if (f.kind === 'properties') return propertiesOf(raw as PropRow[], f.path)
  const text = String(raw).trim()
  if (f.kind === 'list') return text ? text.split(/\s*\n\s*|\s*,\s*/).filter(Boolean) : []
  if (!text) return undefined
  if (f.kind === 'enum' && f.numeric) return Number(text)
  if (f.kind === 'number') {
    const n = Number(text)
    if (!Number.isFinite(n)) throw new FieldError(f.path, `${f.label} must be a number`)
    return n
  }
  if (f.kind === 'json') {
    try {
      return JSON.parse(text)
    } catch {
      throw new FieldError(f.path, `${f.label} is not valid JSON`)
    }
  }
  return f.kind === 'password' || f.kind === 'code' ? String(raw) : text
}

const same = (a: Raw | undefined, b: Raw | undefined) => JSON.stringify(a) === JSON.stringify(b)

/**
 * The body to send: the fields that differ from where the form started (and, on a create, the
 * required ones). On a change an emptied field is removed: null inside `opts`, "" for text.
 */
export function bodyOf(fields: Field[], values: Values, initial: Values, mode: 'create' | 'change') {
  const body: Record<string, unknown> = {}
  for (const f of fields) {
    const raw = values[f.path] ?? toRaw(f, undefined)
    if (same(raw, initial[f.path] ?? toRaw(f, undefined)) && !(mode === 'create' && f.required)) continue
    const value = fromRaw(f, raw)
    if (value === undefined) {
      if (mode === 'create') {
        if (f.required) throw new FieldError(f.path, `${f.label} is required`)
        continue
      }
      if (f.path.includes('.')) set(body, f.path, null)
      else if (f.kind === 'text' || f.kind === 'textarea') set(body, f.path, '')
      continue
    }
    set(body, f.path, value)
  }
  return body
}

/** A password of 20 letters and digits from the browser's CSPRNG, with at least one of each kind. */
export function generatePassword(): string {
  const sets = ['ABCDEFGHJKLMNPQRSTUVWXYZ', 'abcdefghijkmnopqrstuvwxyz', '23456789']
  const all = sets.join('')
  for (;;) {
    // bytes past the last whole multiple of the alphabet are dropped, so every character is as likely
    const limit = 256 - (256 % all.length)
    const bytes = crypto.getRandomValues(new Uint8Array(64)).filter((b) => b < limit)
    if (bytes.length < 20) continue
    const pwd = Array.from(bytes.slice(0, 20), (b) => all[b % all.length]).join('')
    if (sets.every((s) => [...pwd].some((c) => s.includes(c)))) return pwd
  }
}
