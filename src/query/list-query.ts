/**
 * The one parser of list parameters (`filter`, `mask`, `order`, `offset`, `limit`, `flat`) for every
 * collection. Structured values arrive JSON-encoded in the query string. Every field path is checked
 * against the collection's FieldSet; every limit below is a named constant.
 */
import type { CompareOp, FilterNode, Literal, ListQuery, Operand, OrderItem } from '~storage/query'
import { badRequest } from '../errors'
import type { FieldSet } from './fields'

export const MAX_FILTER_LENGTH = 8192
export const MAX_FILTER_DEPTH = 12
export const MAX_FILTER_NODES = 256
export const MAX_IN_VALUES = 500
export const MAX_ORDER_ITEMS = 8
export const MAX_MASK_ITEMS = 100
export const MAX_OFFSET = 10_000_000
export const MAX_LITERAL_LENGTH = 4096

export interface ListLimits {
  defaultLimit: number
  maxLimit: number
}

export interface ListRequest {
  query: ListQuery
  /** Output paths, or null for the collection's default projection. */
  mask: string[] | null
  flat: boolean
  /** `count=true`: the answer carries X-Total-Count, how many the filter selects. */
  count: boolean
}

export interface ListShape {
  /** Paths usable in filter and order. */
  fields: FieldSet
  /** Paths a list may output (its default projection and the bound of `mask`). */
  output: FieldSet
  limits: ListLimits
  /** Fields holding instants (beyond the stamps every collection has): filter values on them are made canonical. */
  instants?: ReadonlySet<string>
  /** Query parameters this list takes besides the list parameters (the journal's `params`, `interval`). */
  extra?: readonly string[]
  /** Fields the table assembles when read: those a mask leaves out are not assembled (`ListQuery.omit`). */
  assembled?: readonly string[]
}

export const LIST_PARAMS = ['filter', 'mask', 'order', 'offset', 'limit', 'flat', 'count', 'after'] as const

/** The cursor of a full page (X-Next-After): the last row's order values and id, as base64url JSON. */
export const encodeCursor = (values: readonly unknown[]) => Buffer.from(JSON.stringify(values)).toString('base64url')

function parseAfter(raw: string): (string | number | null)[] {
  let values: unknown
  try {
    values = JSON.parse(Buffer.from(raw, 'base64url').toString())
  } catch {
    throw badRequest('after must be the X-Next-After of the previous page', 'after')
  }
  if (
    !Array.isArray(values) ||
    values.length > MAX_ORDER_ITEMS + 1 ||
    !values.every((v) => v === null || ['string', 'number'].includes(typeof v))
  )
    throw badRequest('after must be the X-Next-After of the previous page', 'after')
  return values as (string | number | null)[]
}

/**
 * A parameter the endpoint does not take is a 400 naming it (`limt` is not silently ignored).
 * Names starting with `_` pass: clients add them to defeat caches.
 */
export function refuseUnknownParams(params: Params, allowed: readonly string[]): void {
  for (const name of Object.keys(params)) {
    if (name.startsWith('_') || allowed.includes(name)) continue
    throw badRequest(`unknown query parameter '${name}'; this endpoint takes ${allowed.join(', ')}`, name)
  }
}

/** The server's stamps: ISO 8601 UTC with milliseconds, as every stored instant is. */
const STAMPS = new Set(['ext.ct', 'ext.lwt', 'dtutc', 'obj.ext.ct', 'obj.ext.lwt'])

/** An instant in the one stored form (`2026-11-23T12:00:00.500Z`), whatever offset or fraction it came with. */
export function canonicalInstant(value: string, field: string): string {
  const ms = /\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN
  if (Number.isNaN(ms))
    throw badRequest(`filter: ${field} holds instants; ${JSON.stringify(value)} is not a date and time`, 'filter', {
      value: field,
    })
  return new Date(ms).toISOString()
}

/**
 * Stored instants are all in one form, so comparing strings compares instants (and indexes still
 * serve): a value compared with an instant field is brought to that form first.
 */
function canonicalInstants(node: FilterNode, instants: (field: string) => boolean): FilterNode {
  const fix = (field: string, v: Literal) => (typeof v === 'string' ? canonicalInstant(v, field) : v)
  switch (node.op) {
    case 'and':
    case 'or':
      return { ...node, args: node.args.map((n) => canonicalInstants(n, instants)) }
    case 'not':
      return { ...node, arg: canonicalInstants(node.arg, instants) }
    case 'in':
      return 'field' in node.left && instants(node.left.field)
        ? { ...node, values: node.values.map((v) => fix((node.left as { field: string }).field, v)) }
        : node
    case 'like':
    case 'ilike':
    case 'isnull':
      return node
    case 'contains':
      return instants(node.field) ? { ...node, value: fix(node.field, node.value) } : node
    default: {
      const { left, right } = node
      if ('field' in left && 'value' in right && instants(left.field))
        return { ...node, right: { value: fix(left.field, right.value) } }
      if ('field' in right && 'value' in left && instants(right.field))
        return { ...node, left: { value: fix(right.field, left.value) } }
      return node
    }
  }
}

type Params = Record<string, string | undefined>

export function parseListParams(params: Params, shape: ListShape): ListRequest {
  refuseUnknownParams(params, [...LIST_PARAMS, ...(shape.extra ?? [])])
  const isInstant = (f: string) => STAMPS.has(f) || (shape.instants?.has(f) ?? false)
  const filter = params.filter === undefined ? null : parseFilter(params.filter, shape.fields)
  const mask = params.mask === undefined ? null : parseMask(params.mask, shape.output)
  const omit = mask && shape.assembled?.filter((f) => !mask.some((p) => p === f || p.startsWith(`${f}.`)))
  return {
    query: {
      filter: filter && canonicalInstants(filter, isInstant),
      order: params.order === undefined ? [] : parseOrder(params.order, shape.fields),
      offset: parseCount(params.offset, 'offset', 0, MAX_OFFSET),
      ...(params.after ? { after: parseAfter(params.after) } : {}),
      limit: Math.min(
        parseCount(params.limit, 'limit', shape.limits.defaultLimit, Number.MAX_SAFE_INTEGER),
        shape.limits.maxLimit,
      ),
      ...(omit?.length ? { omit } : {}),
    },
    mask,
    flat: parseFlat(params.flat),
    count: parseBoolParam(params.count, 'count'),
  }
}

export const parseFlat = (raw: string | undefined): boolean => parseBoolParam(raw, 'flat')

/** A boolean query parameter: true/1, false/0, absent or empty (false); anything else is a 400 naming it. */
export function parseBoolParam(raw: string | undefined, name: string): boolean {
  if (raw === undefined || raw === '' || raw === 'false' || raw === '0') return false
  if (raw === 'true' || raw === '1') return true
  throw badRequest(`${name} must be true or false, got ${JSON.stringify(raw)}`, name)
}

function parseCount(raw: string | undefined, name: string, fallback: number, max: number): number {
  if (raw === undefined || raw === '') return fallback
  if (!/^\d{1,16}$/.test(raw))
    throw badRequest(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`, name)
  const n = Number(raw)
  if (n > max) throw badRequest(`${name} must be at most ${max}`, name)
  return n
}

function parseJsonParam(raw: string, name: string): unknown {
  try {
    return JSON.parse(raw)
  } catch {
    throw badRequest(`${name} is not valid JSON`, name)
  }
}

/** Mask: a comma list (`id,opts.title`) or a JSON array of paths. */
export function parseMask(raw: string, output: FieldSet): string[] {
  const trimmed = raw.trim()
  const items = trimmed.startsWith('[') ? parseJsonParam(trimmed, 'mask') : trimmed.split(',')
  if (!Array.isArray(items) || !items.every((i) => typeof i === 'string'))
    throw badRequest('mask must be a list of field names', 'mask')
  const names = items.map((i) => i.trim()).filter(Boolean)
  if (names.length === 0) throw badRequest('mask is empty', 'mask')
  if (names.length > MAX_MASK_ITEMS) throw badRequest(`mask may name at most ${MAX_MASK_ITEMS} fields`, 'mask')
  const out: string[] = []
  for (const name of names) {
    const paths = output.expand(name)
    if (!paths) throw badRequest(`mask: unknown field '${name}'`, 'mask', { value: name })
    for (const p of paths) if (!out.includes(p)) out.push(p)
  }
  return out
}

/**
 * Order: a JSON array of `"name"`, `"-name"` or `{"name": "asc"|"desc"}` (directions in any letter
 * case), one such item alone (`"name"`, `{"name": "DESC"}`), or a comma list of names.
 */
export function parseOrder(raw: string, fields: FieldSet): OrderItem[] {
  const trimmed = raw.trim()
  const parsed = /^[[{"]/.test(trimmed) ? parseJsonParam(trimmed, 'order') : trimmed.split(',').filter(Boolean)
  const items = Array.isArray(parsed) ? parsed : [parsed]
  if (!Array.isArray(items)) throw badRequest('order must be an array', 'order')
  if (items.length > MAX_ORDER_ITEMS) throw badRequest(`order may name at most ${MAX_ORDER_ITEMS} fields`, 'order')
  return items.map((item): OrderItem => {
    let field: string
    let desc = false
    if (typeof item === 'string') {
      desc = item.startsWith('-')
      field = item.replace(/^[-+]/, '').trim()
    } else if (item && typeof item === 'object' && !Array.isArray(item) && Object.keys(item).length === 1) {
      const [name, given] = Object.entries(item)[0]!
      const dir = typeof given === 'string' ? given.toLowerCase() : given
      if (dir !== 'asc' && dir !== 'desc')
        throw badRequest(`order: direction of '${name}' must be "asc" or "desc"`, 'order')
      field = name
      desc = dir === 'desc'
    } else {
      throw badRequest('order items must be "field", "-field" or {"field": "asc"|"desc"}', 'order')
    }
    if (!fields.has(field)) throw badRequest(`order: unknown field '${field}'`, 'order', { value: field })
    return { field, desc }
  })
}

const COMPARE_OPS = new Set<string>(['==', '!=', '>', '>=', '<', '<='])

/**
 * Filter: an object of equalities on field paths, or an array in prefix notation:
 * `["and", ["==", ["property", "status"], "new"], [">", ["property", "ext.ct"], "2026-01-01"]]`.
 */
export function parseFilter(raw: string, fields: FieldSet): FilterNode | null {
  if (raw.length > MAX_FILTER_LENGTH)
    throw badRequest(`filter is longer than ${MAX_FILTER_LENGTH} characters`, 'filter')
  const value = parseJsonParam(raw, 'filter')
  if (value && typeof value === 'object' && !Array.isArray(value))
    return objectFilter(value as Record<string, unknown>, fields)
  if (!Array.isArray(value)) throw badRequest('filter must be an object or an array in prefix notation', 'filter')
  let nodes = 0
  const fail = (msg: string) => badRequest(`filter: ${msg}`, 'filter')

  const field = (path: unknown): string => {
    if (typeof path !== 'string' || !fields.has(path))
      throw badRequest(`filter: unknown field '${String(path)}'`, 'filter', { value: String(path) })
    return path
  }
  const literal = (v: unknown): Literal => {
    if (v === null || typeof v === 'number' || typeof v === 'boolean') return v as Literal
    if (typeof v === 'string') {
      if (v.length > MAX_LITERAL_LENGTH) throw fail(`a value is longer than ${MAX_LITERAL_LENGTH} characters`)
      return v
    }
    throw fail(`expected a value or ["property", name], got ${JSON.stringify(v)}`)
  }
  const operand = (v: unknown): Operand => {
    if (Array.isArray(v)) {
      if (v.length !== 2 || v[0] !== 'property')
        throw fail(`expected ["property", name], got ${JSON.stringify(v).slice(0, 100)}`)
      return { field: field(v[1]) }
    }
    return { value: literal(v) }
  }
  const node = (expr: unknown, depth: number): FilterNode => {
    if (++nodes > MAX_FILTER_NODES) throw fail(`more than ${MAX_FILTER_NODES} nodes`)
    if (depth > MAX_FILTER_DEPTH) throw fail(`nested deeper than ${MAX_FILTER_DEPTH} levels`)
    if (!Array.isArray(expr) || typeof expr[0] !== 'string')
      throw fail(`expected an expression [operator, ...], got ${JSON.stringify(expr)?.slice(0, 100)}`)
    const [op, ...args] = expr as [string, ...unknown[]]
    const arity = (n: number) => {
      if (args.length !== n) throw fail(`'${op}' takes ${n} argument${n === 1 ? '' : 's'}, got ${args.length}`)
    }
    switch (op) {
      case 'and':
      case 'or':
        if (args.length === 0) throw fail(`'${op}' needs at least one argument`)
        return { op, args: args.map((a) => node(a, depth + 1)) }
      case 'not':
        arity(1)
        return { op, arg: node(args[0], depth + 1) }
      case 'isnull':
        arity(1)
        return { op, arg: operand(args[0]) }
      case 'in': {
        arity(2)
        if (!Array.isArray(args[1])) throw fail(`'in' takes a field and an array of values`)
        if (args[1].length > MAX_IN_VALUES) throw fail(`'in' takes at most ${MAX_IN_VALUES} values`)
        return { op, left: operand(args[0]), values: args[1].map(literal) }
      }
      case 'contains': {
        arity(2)
        const left = operand(args[0])
        if (!('field' in left)) throw fail(`'contains' takes ["property", name] and a value`)
        return { op, field: left.field, value: literal(args[1]) }
      }
      case 'like':
      case 'ilike': {
        arity(2)
        const pattern = args[1]
        if (typeof pattern !== 'string') throw fail(`'${op}' takes a field and a string pattern`)
        literal(pattern) // its length checked as any value's
        return { op, left: operand(args[0]), pattern }
      }
      default:
        if (!COMPARE_OPS.has(op)) throw fail(`unknown operator '${op}'`)
        arity(2)
        return { op: op as CompareOp, left: operand(args[0]), right: operand(args[1]) }
    }
  }
  return node(value, 1)
}

function objectFilter(obj: Record<string, unknown>, fields: FieldSet): FilterNode | null {
  const entries = Object.entries(obj)
  if (entries.length > MAX_FILTER_NODES) throw badRequest(`filter: more than ${MAX_FILTER_NODES} conditions`, 'filter')
  const conds: FilterNode[] = entries.map(([path, v]) => {
    if (!fields.has(path)) throw badRequest(`filter: unknown field '${path}'`, 'filter', { value: path })
    if (v !== null && typeof v === 'object')
      throw badRequest(`filter: value of '${path}' must be a string, number, boolean or null`, 'filter')
    if (typeof v === 'string' && v.length > MAX_LITERAL_LENGTH)
      throw badRequest(`filter: value of '${path}' is too long`, 'filter')
    return { op: '==', left: { field: path }, right: { value: v as Literal } }
  })
  if (conds.length === 0) return null
  return conds.length === 1 ? conds[0]! : { op: 'and', args: conds }
}

/** The client's filter with equality conditions ANDed in: the client cannot widen what they allow. */
export function withEqualities(filter: FilterNode | null, equal: Record<string, Literal>): FilterNode {
  const conds: FilterNode[] = Object.entries(equal).map(([field, value]) => ({
    op: '==',
    left: { field },
    right: { value },
  }))
  return { op: 'and', args: filter ? [...conds, filter] : conds }
}
