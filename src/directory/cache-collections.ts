/**
 * The derived caches as collections (read-only): users' groups and roles, groups' relatives, users
 * and roles, users' subordinates. What they hold is computed in ./caches.ts and kept change by
 * change by ./refresh.ts; their routes beyond the standard factories are in ./caches-api.ts.
 */
import * as v from 'valibot'
import { GROUP_USERS, SUBORDINATES } from '~storage/directory-edges'
import type { AssembledField } from '~storage/table'
import { defineCollection } from '../entities/entity'
import { Uuid } from '../values'

/**
 * A cache table: derived data, rewritten row by row by the directory changes that affect it
 * (./refresh.ts) and never journaled; member lists are assembled from indexed edges when read.
 */
const cache = (
  name: string,
  table: string,
  idField: string,
  members: v.ObjectEntries,
  assembled?: Record<string, AssembledField>,
) =>
  defineCollection({
    name,
    table: { table, objtype: name, idField, stamps: false, journal: false, bare: true, assembled },
    fields: Object.keys(members),
    listFields: Object.keys(members),
    lookupFields: [idField],
    doc: v.strictObject(members),
  })

const ids = v.array(Uuid)
const roleNames = v.array(v.string())

/** The members of a user's cache (the one cache a client writes, through its direct groups). */
export const USER_CACHE = {
  id: Uuid,
  direct_groups: ids,
  direct_roles: roleNames,
  deep_groups: ids,
  deep_roles: roleNames,
}
export const usersCaches = cache('user cache', 'users_caches', 'id', USER_CACHE)
export const groupsCaches = cache(
  'group cache',
  'groups_caches',
  'id',
  {
    id: Uuid,
    direct_parents: ids,
    direct_children: ids,
    direct_users: ids,
    direct_roles: roleNames,
    deep_parents: ids,
    deep_children: ids,
    deep_users: ids,
    deep_roles: roleNames,
  },
  GROUP_USERS,
)
export const subordinationsCaches = cache(
  'subordination cache',
  'subordinations_caches',
  'top',
  { top: Uuid, sub: ids },
  SUBORDINATES,
)
