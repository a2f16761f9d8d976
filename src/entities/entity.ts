/**
 * Collections and entities. A collection is a table of the standard shape that lists, reads and
 * looks up like every other; an entity is a collection clients write, with its body schema and its
 * hooks. The table spec (storage layout) lives here, next to the fields it stores. Adding a
 * resource starts here (see docs/ARCHITECTURE.md, "Adding a resource").
 */
import * as v from 'valibot'
import type { SqlValue, TxStep } from '~storage/db'
import type { Doc } from '~storage/doc'
import type { TableSpec } from '~storage/repository'
import type { Ctx } from '../context'
import { FieldSet } from '../query/fields'
import type { ListLimits } from '../query/list-query'
import { type DomainKind, Instant, JsonObject, named, objectBody, pascal, Uuid } from '../values'
import type { Unit } from './unit'

/** `D`: one item as the API answers it. */
// biome-ignore lint/suspicious/noExplicitAny: a collection of any item
export interface Collection<D = any> {
  /** Singular name used in messages ("project"). */
  name: string
  table: TableSpec
  /** The REST path of the collection (its records are `<path>/<id>`): where a pushed change can be read. */
  path?: string
  domainKind: DomainKind
  /** Paths usable in filter, order and a single item's mask. */
  fields: FieldSet
  /** The list's output fields: its default projection and the bound of its mask. */
  listFields: FieldSet
  /** Fields LOOKUP compares its key with. */
  lookupFields: readonly string[]
  limits: ListLimits
  /** One item as the API answers it (the routes' answers, the API description). */
  doc: v.GenericSchema<unknown, D>
}

/** One write as hooks see it: the entity before and after, and the validated input (with virtual fields). */
export interface Change<T> {
  before?: T
  after?: T
  input?: Doc
}

/** Entity-specific behaviour around the generic writes and reads. */
export interface EntityHooks<T> {
  /** Async work before the transaction (hashing a password); may move input into hidden columns. */
  prepare?(ctx: Ctx, input: Doc): Promise<{ input: Doc; hidden?: Record<string, SqlValue> }>
  /**
   * Inside the write transaction, after the row changed: check references, keep derived data in
   * step, and queue what must follow the commit on the unit (`u.afterCommit`).
   */
  inTransaction?(u: Unit, change: Change<T>): TxStep<void>
  /**
   * Shapes one entity for the caller (adds computed fields, hides what the caller may not see). A
   * step, so that a write can check If-Match on the view inside its transaction.
   */
  view?(ctx: Ctx, doc: T): TxStep<Doc>
  /**
   * Members the view adds that change with the time, not with the entity (a task's next run): they
   * are no part of its version, so its ETag and If-Match leave them out.
   */
  live?: readonly string[]
}

/**
 * `T`: the stored document as hooks see it (virtual members too); `D`: as the API answers it; `B`
 * and `P`: the bodies of a create and of a change, as clients send them.
 */
// biome-ignore lint/suspicious/noExplicitAny: an entity of any item and bodies
export interface Entity<T extends Doc = Doc, D = any, B = any, P = any> extends Collection<D> {
  /** The table, whose reads return the stored document. */
  table: TableSpec<T>
  /** What POST takes: the create body, and the id a client may give. */
  createBody: v.GenericSchema<B, B>
  /** What PATCH takes: any part of the create body; the id, when given, must be the addressed one. */
  patchBody: v.GenericSchema<P, P>
  /** Body of a create, without `id` (checked separately). */
  create: v.GenericSchema<unknown, Doc>
  /** Body of a patch, without `id`: any part of a create; a null member of `opts` removes it. */
  patch: v.GenericSchema<unknown, Doc>
  /** Checks and normalizations beyond the schema, applied to the complete new doc. */
  finish?(doc: T): T
  /** Input fields that are not stored in the doc (hooks act on them). */
  virtual: readonly string[]
  hooks: EntityHooks<T>
  /** Changes and removals that may be too large for one turn of the event loop: see `LongWrites`. */
  long?: LongWrites
}

/**
 * An entity whose PATCH or DELETE can carry much work (a class migrating its records, a domain's
 * deletion) commits them as long work (src/long-work.ts), named by the kind given for the operation;
 * `gatesOwnDomain`: the entity is a domain, whose own requests wait too.
 */
export interface LongWrites {
  patch?: string
  remove?: string
  gatesOwnDomain?: boolean
}

// biome-ignore lint: a registry holds entities of every document type
export type AnyEntity = Entity<any>

/** The document type of an entity: `type User = DocOf<typeof users>`. */
export type DocOf<E> = E extends Entity<infer T> ? T : never

/** The id a client may give on a create, and may repeat on a change (the service checks it: src/ids.ts). */
const GivenId = v.optional(
  v.pipe(
    v.string(),
    v.description('a UUID: on a create, made by the service when absent; on a change, the addressed one'),
  ),
)

/** An entity's item as the API answers it: its create body but the virtual members, with what the service adds. */
export type AnswerDoc<E extends v.ObjectEntries, V extends string, X extends v.ObjectEntries> = Omit<
  EntityDoc<E>,
  V | keyof X | 'ext'
> &
  v.InferOutput<v.ObjectSchema<X, undefined>> &
  ('ext' extends keyof E ? { ext: v.InferOutput<typeof ExtDoc> } : Record<never, never>)

/** The stored document of an entity whose create body has these entries. */
export type EntityDoc<E extends v.ObjectEntries> = { id: string } & v.InferOutput<v.StrictObjectSchema<E, undefined>>

export const DEFAULT_LIMITS: ListLimits = { defaultLimit: 100, maxLimit: 1000 }

/** What a collection is defined by: paths as plain lists, the kind and limits optional. */
interface CollectionDef<T extends Doc = Doc> {
  name: string
  table: TableSpec<T>
  path?: string
  domainKind?: DomainKind
  fields: string[]
  listFields: string[]
  lookupFields: string[]
  limits?: ListLimits
}

export function defineCollection<D>(def: CollectionDef & { doc: v.GenericSchema<unknown, D> }): Collection<D> {
  return {
    doc: named(def.doc, pascal(def.name)),
    name: def.name,
    table: def.table,
    path: def.path,
    domainKind: def.domainKind ?? 'any',
    fields: new FieldSet(def.fields),
    listFields: new FieldSet(def.listFields),
    lookupFields: def.lookupFields,
    limits: def.limits ?? DEFAULT_LIMITS,
  }
}

export function defineEntity<
  const E extends v.ObjectEntries,
  const V extends string = never,
  const X extends v.ObjectEntries = Record<never, never>,
>(
  def: CollectionDef<EntityDoc<E>> & {
    create: E
    /**
     * Members of the stored item besides (or instead of) the create body's: what the service adds
     * (computed or defaulted members). The item is the body without its virtual members, with the
     * id and the server's stamps.
     */
    doc?: X
    finish?: (doc: EntityDoc<E>) => EntityDoc<E>
    virtual?: V[]
    hooks?: EntityHooks<EntityDoc<E>>
    long?: LongWrites
  },
): Entity<
  EntityDoc<E>,
  AnswerDoc<E, V, X>,
  v.InferInput<v.StrictObjectSchema<E & { id: typeof GivenId }, undefined>>,
  Partial<v.InferInput<v.StrictObjectSchema<E & { id: typeof GivenId }, undefined>>>
> {
  const finish = hasCommonOpts(def.create) ? withCommonOpts(def.finish) : def.finish
  const virtual: readonly string[] = def.virtual ?? []
  const stored = Object.fromEntries(Object.entries(def.create).filter(([k]) => !virtual.includes(k)))
  const entries: v.ObjectEntries = { id: Uuid, ...stored, ...def.doc }
  if (def.create.ext) entries.ext = ExtDoc
  const doc = v.strictObject(entries) as unknown as v.GenericSchema<unknown, AnswerDoc<E, V, X>>
  return {
    ...defineCollection({ ...def, doc }),
    table: def.table,
    create: v.strictObject(def.create) as unknown as v.GenericSchema<unknown, Doc>,
    patch: v.partial(v.strictObject(patchable(def.create))) as unknown as v.GenericSchema<unknown, Doc>,
    createBody: named(objectBody({ id: GivenId, ...def.create }), `${pascal(def.name)}Create`) as never,
    patchBody: named(
      v.pipe(JsonObject, v.partial(v.strictObject({ id: GivenId, ...patchable(def.create) }))),
      `${pascal(def.name)}Change`,
    ) as never,
    finish,
    virtual: def.virtual ?? [],
    hooks: def.hooks ?? {},
    long: def.long,
  }
}

/**
 * A declared entity (`defineEntity` without hooks) joined with its hooks. Declared apart, an
 * entity can be named by the rules of the entities it cascades to without an import circle.
 */
export function withHooks<E extends AnyEntity>(declared: E, hooks: EntityHooks<DocOf<E>>): E {
  return { ...declared, hooks }
}

/** Whether the entity's `opts` is the common one (`opts()` below: title and comment). */
function hasCommonOpts(entries: v.ObjectEntries): boolean {
  const inner = (entries.opts as { wrapped?: { entries?: v.ObjectEntries } } | undefined)?.wrapped?.entries
  return inner !== undefined && 'title' in inner && 'comment' in inner
}

/**
 * `opts.title` and `opts.comment` are always there, empty by default, first, as in the original's
 * examples: on create, and after every change (a member PATCHed to null returns to '').
 */
function withCommonOpts<D extends Doc>(finish?: (doc: D) => D): (doc: D) => D {
  return (doc) => {
    const done = finish ? finish(doc) : doc
    const opts = { title: '', comment: '', ...(done.opts as Doc | undefined) }
    if ('opts' in done) return { ...done, opts }
    // placed where the original's examples have it: just before ext
    const out: Doc = {}
    for (const [k, value] of Object.entries(done)) {
      if (k === 'ext') out.opts = opts
      out[k] = value
    }
    out.opts ??= opts
    return out as D
  }
}

/** The create entries with each member of `opts` also accepting null (PATCH removes it). */
function patchable(entries: v.ObjectEntries): v.ObjectEntries {
  const opts = entries.opts as { wrapped?: { type?: string; entries?: v.ObjectEntries } } | undefined
  const inner = opts?.wrapped
  if (inner?.type !== 'strict_object' || !inner.entries) return entries
  const nullable = (s: v.ObjectEntries[string]) => {
    const wrapped =
      (s as { type: string; wrapped?: v.GenericSchema }).type === 'optional'
        ? (s as { wrapped: v.GenericSchema }).wrapped
        : s
    return v.optional(v.nullable(wrapped))
  }
  const members = Object.fromEntries(Object.entries(inner.entries).map(([k, s]) => [k, nullable(s)]))
  return { ...entries, opts: v.optional(v.strictObject(members)) }
}

/** The doc with each missing member set to its default (members keep their order; defaults go last). */
export function withDefaults<T extends Doc>(doc: T, defaults: Partial<T>): T {
  const out: Doc = { ...doc }
  for (const [k, value] of Object.entries(defaults)) if (out[k] === undefined) out[k] = value
  return out as T
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
export const opts = <E extends v.ObjectEntries = Record<never, never>>(extra: E = {} as E) =>
  v.optional(v.strictObject({ title: v.optional(text()), comment: v.optional(text(4096)), ...extra }))

/** `ext` as stored: the server's stamps, and whatever members a client gave it. */
export const ExtDoc = v.looseObject({ ct: Instant, lwt: Instant })

/** `ext` is open to clients; ct and lwt are set by the server and ignored on input. */
export const ext = v.optional(
  v.pipe(
    v.record(v.string(), v.unknown()),
    v.transform(({ ct: _ct, lwt: _lwt, ...rest }): Doc => rest),
  ),
)

/** Fields every standard entity has. */
export const COMMON_FIELDS = ['id', 'opts.title', 'opts.comment', 'ext.ct', 'ext.lwt', 'ext.*']
