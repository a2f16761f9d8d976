/**
 * An entity definition: everything the generic routes need to serve a collection of the standard
 * shape. Adding a resource starts here (see README, "Adding a resource").
 */
import * as v from 'valibot'
import type { SqlValue, TxStep } from '~storage/db'
import type { Doc } from '~storage/doc'
import type { WriteContext } from '~storage/journal'
import type { TableSpec } from '~storage/repository'
import { FieldSet } from '../http/fields'
import type { ListLimits } from '../http/list-query'
import type { Req } from '../http/req'
import type { DomainKind } from '../http/route'

/** One write as hooks see it: the entity before and after, and the validated input (with virtual fields). */
export interface Change {
  before?: Doc
  after?: Doc
  input?: Doc
  /** What the transaction hook learned for the after-commit hook (ids of deleted users, say). */
  extra?: Doc
}

/** Entity-specific behaviour around the generic writes and reads. */
export interface EntityHooks {
  /** Async work before the transaction (hashing a password); may move input into hidden columns. */
  prepare?(req: Req, input: Doc): Promise<{ input: Doc; hidden?: Record<string, SqlValue> }>
  /** Inside the write transaction, after the row changed: check references, keep derived data. */
  inTransaction?(req: Req, w: WriteContext, change: Change): TxStep<void>
  /** After the commit: end sessions, drop caches. */
  afterCommit?(req: Req, change: Change): Promise<void>
  /** Shapes one entity for the caller (adds computed fields, hides what the caller may not see). */
  view?(req: Req, doc: Doc): Doc | Promise<Doc>
}

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
  /** Input fields that are not stored in the doc (hooks act on them). */
  virtual: readonly string[]
  hooks: EntityHooks
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
  virtual?: string[]
  hooks?: EntityHooks
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
    virtual: def.virtual ?? [],
    hooks: def.hooks ?? {},
  }
}

/** The doc with each missing member set to its default (members keep their order; defaults go last). */
export function withDefaults(doc: Doc, defaults: Doc): Doc {
  const out = { ...doc }
  for (const [k, v] of Object.entries(defaults)) if (out[k] === undefined) out[k] = v
  return out
}

// ---- schema pieces shared by entities ----

export const text = (max = 1024) => v.pipe(v.string(), v.maxLength(max, `must be at most ${max} characters`))
export const requiredText = (max = 1024) =>
  v.pipe(
    v.string(),
    v.trim(),
    v.minLength(1, 'must not be empty'),
    v.maxLength(max, `must be at most ${max} characters`),
  )

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
