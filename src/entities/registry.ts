/**
 * The entity registry: every collection of the service with its table spec, in one list. What
 * spans collections reads it instead of naming tables: deleting a domain purges every table,
 * the journal's object types come from it, and tests compare each spec with its migration.
 * (Model classes add one table each at run time; see src/model/class-model.ts.)
 *
 * It composes the domains entity, whose deletion purges the tables listed here: the domains' hooks
 * receive the list, so no entity imports the registry back (tests/module-cycles.test.ts).
 */
import type { TableSpec } from '~storage/repository'
import { groupsCaches, subordinationsCaches, usersCaches } from '../directory/cache-collections'
import { declaredDomains } from '../directory/declarations'
import { domainHooks } from '../directory/domains'
import { groups } from '../directory/groups'
import { roles } from '../directory/roles'
import { sipusers } from '../directory/sipusers'
import { users } from '../directory/users'
import { channels } from '../integration/channels'
import { layersTable } from '../layers/product-layer-orders'
import { borderrules } from '../master/borderrules'
import { classes } from '../model/classes'
import { projects } from '../projects/projects'
import { extobjs } from '../reference/extobjs'
import { svcscripts } from '../scripts/svcscripts'
import { svctasks } from '../scripts/svctasks'
import { settingsTable } from '../settings/settings'
import { type AnyEntity, type Collection, withHooks } from './entity'

/** Domains (/rest/v1/domain/domains): a deletion purges every table below. */
export const domains = withHooks(
  declaredDomains,
  domainHooks(() => tables()),
)

/** The entities clients write, in the order a reader meets them in docs/api/. */
export const entities = (): AnyEntity[] => [
  domains,
  users,
  groups,
  roles,
  sipusers,
  projects,
  extobjs,
  svcscripts,
  svctasks,
  channels,
  classes,
  borderrules,
]

/** Read-only collections derived from entities. */
export const derivedCollections = (): Collection[] => [usersCaches, groupsCaches, subordinationsCaches]

/** Every table of the standard shape. */
export const tables = (): TableSpec[] => [
  ...entities().map((e) => e.table),
  ...derivedCollections().map((c) => c.table),
  settingsTable,
  layersTable,
]

/** The object types the journal records (model records add `model/<classname>`). */
export const journalObjtypes = (): string[] =>
  tables()
    .filter((t) => t.journal !== false)
    .map((t) => t.objtype)
