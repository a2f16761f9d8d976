/**
 * An entity definition: everything the generic routes need to serve a collection of the standard
 * shape. Adding a resource starts here (see README, "Adding a resource").
 */
import * as v from 'valibot'
import type { Doc } from '~storage/doc'
import type { TableSpec } from '~storage/repository'
import { FieldSet } from '../http/fields'
import type { ListLimits } from '../http/list-query'
import type { DomainKind } from '../http/route'

export interface Entity {
  /** Singular name used in messages ("project"). */
  name: string
  table: TableSpec
  domainKind: DomainKind
  /** Paths usable in filter, order and a single item's mask. */
  fields: FieldSet
  /** The list's output fields: its default projection and the bound of its mask. */
  listFields: FieldSet
  /** Fields LOOKUP compares its key with. */
  lookupFields: readonly string[]
  limits: ListLimits
  /** Body of a create, without `id` (checked separately). */
  create: v.GenericSchema<unknown, Doc>
  /** Body of a patch, without `id`. */
  patch: v.GenericSchema<unknown, Doc>
  /** Checks and normalizations beyond the schema, applied to the complete new doc. */
  finish?(doc: Doc): Doc
}

export const DEFAULT_LIMITS: ListLimits = { defaultLimit: 100, maxLimit: 1000 }

export function defineEntity(def: {
  name: string
  table: TableSpec
  domainKind?: DomainKind
  fields: string[]
  listFields: string[]
  lookupFields: string[]
  limits?: ListLimits
  create: v.ObjectEntries
  finish?: (doc: Doc) => Doc
}): Entity {
  const create = v.strictObject(def.create)
  return {
    name: def.name,
    table: def.table,
    domainKind: def.domainKind ?? 'any',
    fields: new FieldSet(def.fields),
    listFields: new FieldSet(def.listFields),
    lookupFields: def.lookupFields,
    limits: def.limits ?? DEFAULT_LIMITS,
    create: create as unknown as v.GenericSchema<unknown, Doc>,
    patch: v.partial(create) as unknown as v.GenericSchema<unknown, Doc>,
    finish: def.finish,
  }
}

// ---- schema pieces shared by entities ----

export const text = (max = 1024) => v.pipe(v.string(), v.maxLength(max, `must be at most ${max} characters`))
export const requiredText = (max = 1024) =>
  v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(max, `must be at most ${max} characters`))

/** `opts` with the common title and comment plus entity-specific members. */
export const opts = (extra: v.ObjectEntries = {}) =>
  v.optional(v.strictObject({ title: v.optional(text()), comment: v.optional(text(4096)), ...extra }))

/** `ext` is open to clients; ct and lwt are set by the server and ignored on input. */
export const ext = v.optional(
  v.pipe(
    v.record(v.string(), v.unknown()),
    v.transform(({ ct: _ct, lwt: _lwt, ...rest }) => rest),
  ),
)

/** Fields every standard entity has. */
export const COMMON_FIELDS = ['id', 'opts.title', 'opts.comment', 'ext.ct', 'ext.lwt', 'ext.*']
