/**
 * Properties of model classes: their definition, and the check of a record's values against
 * them (by data_type, `multi`, `required`, `default`). Every refusal names the field.
 */
import * as v from 'valibot'
import { isPlainObject, setOwn, type Doc } from '~storage/doc'
import { badRequest, payloadTooLarge } from '../errors'
import { isUuid } from '../ids'

export const DATA_TYPES = [
  'string',
  'any',
  'long',
  'int',
  'integer',
  'datetime',
  'boolean',
  'time',
  'date',
  'float',
  'enum',
  'uuid',
  'attachment',
] as const
export type DataType = (typeof DATA_TYPES)[number]

export const PROPERTY_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/

export const PropertySchema = v.strictObject({
  name: v.pipe(
    v.string(),
    v.regex(PROPERTY_NAME, 'a property name is letters, digits and _ (up to 64, not starting with a digit)'),
    // as a key of a record, `__proto__` would set the record's prototype instead of a value
    v.check((name) => name !== '__proto__', 'a property cannot be named __proto__'),
  ),
  caption: v.optional(v.pipe(v.string(), v.maxLength(255))),
  data_type: v.picklist(DATA_TYPES, `data_type must be one of ${DATA_TYPES.join(', ')}`),
  required: v.optional(v.boolean()),
  default: v.optional(v.unknown()),
  multi: v.optional(v.boolean()),
  items: v.optional(
    v.pipe(v.array(v.pipe(v.string(), v.minLength(1))), v.minLength(1, 'an enum needs items'), v.maxLength(1000)),
  ),
})
export type Property = v.InferOutput<typeof PropertySchema>

const INT32 = 2 ** 31
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const TIME = /^([01]\d|2[0-3]):([0-5]\d)(:([0-5]\d)(\.\d{1,6})?)?$/
const DATETIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/

function validDate(s: string): boolean {
  const m = DATE.exec(s)
  if (!m) return false
  const d = new Date(`${s}T00:00:00Z`)
  return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(s)
}

/** One value of a property (an element, for `multi`), normalized; throws a 400 naming `path`. */
function checkOne(p: Property, value: unknown, path: string): unknown {
  const fail = (expected: string) =>
    badRequest(`${path} must be ${expected}, got ${JSON.stringify(value)?.slice(0, 80)}`, path)
  switch (p.data_type) {
    case 'any':
      return value
    case 'string':
      if (typeof value !== 'string') throw fail('a string')
      return value
    case 'boolean':
      if (typeof value !== 'boolean') throw fail('true or false')
      return value
    case 'long':
      if (!Number.isSafeInteger(value)) throw fail('a whole number')
      return value
    case 'int':
    case 'integer':
      if (!Number.isInteger(value) || (value as number) < -INT32 || (value as number) >= INT32)
        throw fail('a 32-bit whole number')
      return value
    case 'float':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw fail('a number')
      return value
    case 'date':
      if (typeof value !== 'string' || !validDate(value)) throw fail('a date YYYY-MM-DD')
      return value
    case 'time':
      if (typeof value !== 'string' || !TIME.test(value)) throw fail('a time HH:MM[:SS[.fff]]')
      return value
    case 'datetime': {
      // a day out of range would roll over (2026-02-30 read as March 2): the date must be one
      if (
        typeof value !== 'string' ||
        !DATETIME.test(value) ||
        !validDate(value.slice(0, 10)) ||
        Number.isNaN(Date.parse(value))
      )
        throw fail('a date and time (ISO 8601)')
      const iso = new Date(value).toISOString()
      // its offset may carry it past the years stored times are compared in (+010000-..., -000001-...)
      if (!/^\d{4}-/.test(iso)) throw fail('a date and time in the years 0000 to 9999 (UTC)')
      return iso
    }
    case 'uuid':
      if (!isUuid(value)) throw fail('a UUID')
      return value.toLowerCase()
    case 'enum':
      if (typeof value !== 'string' || !p.items!.includes(value)) throw fail(`one of ${p.items!.join(', ')}`)
      return value
    case 'attachment':
      if (!isPlainObject(value) || typeof value.name !== 'string' || !value.name)
        throw fail('attachment metadata {name, size?, content_type?, ...}')
      if (value.size !== undefined && !Number.isSafeInteger(value.size))
        throw badRequest(`${path}.size must be a whole number`, `${path}.size`)
      return value
  }
}

/** A property's value: null, one value, or (multi) an array of them. */
export function checkValue(p: Property, value: unknown, path = p.name): unknown {
  if (value === null) return null
  if (!p.multi) return checkOne(p, value, path)
  if (!Array.isArray(value)) throw badRequest(`${path} must be an array (the property is multi)`, path)
  return value.map((item, i) => checkOne(p, item, `${path}.${i}`))
}

export interface RecordRules {
  properties: Map<string, Property>
  /** check_required_fill_defaults: fill defaults and check required properties. */
  fillDefaults: boolean
  maxSize: number
}

/**
 * A record as it will be stored. `create` and `replace` take the whole record, `patch` only the
 * changed properties (null removes one) merged into `current`.
 */
export function validateRecord(
  input: Doc,
  rules: RecordRules,
  mode: 'create' | 'replace' | 'patch',
  current?: Doc,
): Doc {
  const out: Doc = mode === 'patch' ? { ...current } : {}
  for (const [name, value] of Object.entries(input)) {
    if (name === 'id') continue
    const p = rules.properties.get(name)
    if (!p) throw badRequest(`unknown property '${name}'`, name)
    if (mode === 'patch' && value === null) delete out[name]
    else setOwn(out, name, checkValue(p, value)) // a class of before __proto__ was refused may name it
  }
  if (rules.fillDefaults) {
    // own values only: a property named `constructor` or `toString` is not set by Object.prototype's
    const missing = (name: string) => !Object.hasOwn(out, name) || out[name] === undefined || out[name] === null
    for (const p of rules.properties.values()) {
      if (missing(p.name) && p.default !== undefined && mode !== 'patch') out[p.name] = p.default
      if (p.required && missing(p.name)) throw badRequest(`${p.name} is required`, p.name)
    }
  }
  const size = Buffer.byteLength(JSON.stringify(out))
  if (size > rules.maxSize)
    throw payloadTooLarge(`the record is ${size} bytes; this class allows ${rules.maxSize} (opts.max_size)`, 'body')
  return out
}
