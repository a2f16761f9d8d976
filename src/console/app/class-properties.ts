/**
 * A model class's properties as the editor's rows and back: the API's property is `{name, caption?,
 * data_type, required?, default?, multi?, items?}` (docs/api/model.md); a row holds what its
 * controls show, the default and enum items as text, read by the data type when the form is sent.
 */
import { FieldError } from './field-error'

export interface PropRow {
  name: string
  caption: string
  data_type: string
  required: boolean
  multi: boolean
  /** As typed: text, a number, true/false, JSON for `any` and `attachment`; a JSON array when multi. */
  default: string
  /** An enum's items, one a line. */
  items: string
}

export const newRow = (): PropRow => ({
  name: '',
  caption: '',
  data_type: 'string',
  required: false,
  multi: false,
  default: '',
  items: '',
})

const NUMBERS = new Set(['long', 'int', 'integer', 'float'])
const JSON_TYPES = new Set(['any', 'attachment'])
const STRING_TYPES = new Set(['string'])

const textOf = (type: string, value: unknown): string =>
  JSON_TYPES.has(type) || (typeof value === 'object' && value !== null) ? JSON.stringify(value) : String(value)

/** The rows of the API's properties (anything else: no rows). */
export function rowsOf(value: unknown): PropRow[] {
  if (!Array.isArray(value)) return []
  return value.map((p: Record<string, unknown>) => {
    const type = String(p.data_type ?? 'string')
    const d = p.default
    return {
      name: String(p.name ?? ''),
      caption: String(p.caption ?? ''),
      data_type: type,
      required: p.required === true,
      multi: p.multi === true,
      // a multi default whole, as JSON: its values may hold commas, or be objects
      default: d === undefined || d === null ? '' : p.multi === true ? JSON.stringify(d) : textOf(type, d),
      items: Array.isArray(p.items) ? p.items.join('\n') : '',
    }
  })
}

/** One default value of the type, from its text; a FieldError naming the row's default when it is not one. */
function defaultValue(type: string, text: string, path: string, name: string): unknown {
  if (NUMBERS.has(type)) {
    const n = Number(text)
    if (!Number.isFinite(n)) throw new FieldError(path, `The default of ${name} must be a number`)
    return n
  }
  if (type === 'boolean') {
    if (text !== 'true' && text !== 'false') throw new FieldError(path, `The default of ${name} is true or false`)
    return text === 'true'
  }
  if (JSON_TYPES.has(type))
    try {
      return JSON.parse(text)
    } catch {
      throw new FieldError(path, `The default of ${name} is not valid JSON`)
    }
  return text
}

/** A multi default: a JSON array whose values are each of the type (as the text of one would give it). */
function multiDefault(type: string, text: string, path: string, name: string): unknown[] {
  let values: unknown
  try {
    values = JSON.parse(text)
  } catch {
    values = undefined
  }
  if (!Array.isArray(values)) throw new FieldError(path, `The default of ${name} is a JSON array: ["a", "b"]`)
  if (JSON_TYPES.has(type)) return values
  return values.map((v) => {
    const wanted = NUMBERS.has(type) ? 'number' : type === 'boolean' ? 'boolean' : 'string'
    if (typeof v !== wanted) throw new FieldError(path, `Each value of the default of ${name} must be a ${wanted}`)
    return v
  })
}

/** The API's properties of the rows (`path` is the field's: errors name `<path>.<i>.<member>`). */
export function propertiesOf(rows: PropRow[], path: string): Record<string, unknown>[] {
  return rows.map((r, i) => {
    const at = `${path}.${i}`
    const name = r.name.trim()
    if (!name) throw new FieldError(`${at}.name`, `Property ${i + 1} needs a name`)
    const p: Record<string, unknown> = { name, data_type: r.data_type }
    if (r.caption.trim()) p.caption = r.caption.trim()
    if (r.required) p.required = true
    if (r.multi) p.multi = true
    if (r.data_type === 'enum') {
      const items = r.items
        .split('\n')
        .map((x) => x.trim())
        .filter(Boolean)
      if (!items.length) throw new FieldError(`${at}.items`, `The enum ${name} needs items`)
      p.items = items
    }
    // a text default is kept as typed (its spaces too); other types read from the trimmed text
    const text = r.default.trim()
    if (text && r.multi) p.default = multiDefault(r.data_type, text, `${at}.default`, name)
    else if (text)
      p.default = defaultValue(r.data_type, STRING_TYPES.has(r.data_type) ? r.default : text, `${at}.default`, name)
    return p
  })
}
