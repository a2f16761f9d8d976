/**
 * The answers of a collection's routes, from its item's schema: one item whole (a read, a write's
 * answer), and a list's items as the list presents them (its list fields; a mask may leave any
 * member out, so a typed client sees every member as optional). The errors each route adds to
 * those every route may give.
 */
import * as v from 'valibot'
import type { Collection } from '../entities/entity'
import { answer, errors, project } from './schemas'
import { named, pascal } from '../values'

/** Every member optional at every depth: what a mask may leave of an item. */
export type DeepPartial<T> = T extends readonly (infer U)[]
  ? DeepPartial<U>[]
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T

/** The collection's name as its URL says it (`classes`, `users_caches`). */
export const pluralOf = (c: Collection<unknown>) => c.path?.split('/').pop() ?? `${c.name}s`

/** 200 of a list: the items as the list fields present them. */
export function listAnswer<D>(c: Collection<D>) {
  const items = named(v.array(project(c.doc, c.listFields.paths)), `${pascal(c.name)}List`)
  return answer(items as unknown as v.GenericSchema<unknown, DeepPartial<D>[]>)
}

/** 200 of a read or a write: the item whole (a read's `mask` may leave members out). */
export const itemAnswer = <D>(c: Collection<D>) => answer(c.doc)

/** 404: no such item in this domain. */
export const NOT_FOUND = errors(404)
/** 409: a key already taken; 412: If-Match names another version. */
export const WRITE_ERRORS = errors(404, 409, 412)
