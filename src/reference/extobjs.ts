/** External objects (/rest/v1/reference/extobjs): typed documents of arbitrary JSON. */
import * as v from 'valibot'
import { checkStorable } from '~storage/doc'
import { payloadTooLarge } from '../errors'
import { COMMON_FIELDS, defineEntity, ext, opts, requiredText, text } from '../entities/entity'

/** "The size of data in one object is no more than 10 MB." Measured on the serialized value. */
export const MAX_VALUE_BYTES = 10 * 1024 * 1024

/**
 * `value` may arrive as a string holding serialized JSON: a string that starts like an object or
 * an array and parses is stored parsed; any other string is stored as the string it is.
 */
function parseSerialized(value: unknown): unknown {
  if (typeof value !== 'string') return value
  const t = value.trimStart()
  if (!t.startsWith('{') && !t.startsWith('[')) return value
  try {
    return JSON.parse(value)
  } catch {
    return value
  }
}

function finish<T extends { value?: unknown }>(doc: T): T {
  const value = parseSerialized(doc.value)
  // before the size is measured: JSON.stringify of a value nested 100,000 deep overflows the stack
  if (value !== undefined) checkStorable({ value })
  if (value !== undefined && Buffer.byteLength(JSON.stringify(value)) > MAX_VALUE_BYTES) {
    throw payloadTooLarge(`value is larger than ${MAX_VALUE_BYTES} bytes`, 'value')
  }
  return value === undefined ? doc : { ...doc, value }
}

const UserTags = v.optional(v.array(text(255)))

export const extobjs = defineEntity({
  name: 'extobj',
  table: { table: 'extobjs', objtype: 'extobj', columns: { type: 'type' }, detached: ['value'] },
  path: '/rest/v1/reference/extobjs',
  fields: [...COMMON_FIELDS, 'type', 'value', 'value.*', 'opts.user_tags'],
  listFields: ['id', 'type', 'opts.title', 'ext.lwt', 'ext.ct'],
  lookupFields: ['id', 'type'],
  create: {
    type: requiredText(255),
    value: v.optional(v.unknown()),
    opts: opts({ user_tags: UserTags }),
    ext,
  },
  // title and comment are always there ('' by default)
  doc: { opts: v.strictObject({ title: text(), comment: text(4096), user_tags: UserTags }) },
  finish,
})
