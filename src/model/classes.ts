/**
 * Classes (/rest/v1/design/classes): each defines a collection of records under
 * /rest/v1/model/<classname>. Creating a class creates its table; changing it migrates the table
 * without losing records; deleting it removes the table and journals each record's deletion.
 */
import type { TxStep } from '~storage/db'
import type { Doc } from '~storage/doc'
import { COMMON_FIELDS, defineEntity, withDefaults } from '../entities/entity'
import { badRequest } from '../errors'
import { NIL_UUID } from '../ids'
import { checkBuiltinClass } from './builtin'
import { applyClassChange } from './class-change'
import { CLASS_CREATE, ClassOpts, MEMBERS, OPTS_DEFAULTS } from './class-schema'
import { checkValue, type Property } from './properties'

/** Checks of one class on its own: property names, enums, defaults. */
function finish<T extends Doc>(doc: T): T {
  const out = withDefaults<Doc>(doc, {
    name: '',
    description: '',
    parent_id: NIL_UUID,
    storage_mode: 'runtime',
    integrity_mode: 'sync_fast_notify',
    cache_mode: 'temp',
    properties: [],
  })
  out.opts = withDefaults((doc.opts as Doc | undefined) ?? {}, OPTS_DEFAULTS as Doc)
  const seen = new Set<string>()
  ;(out.properties as Property[]).forEach((p, i) => {
    const at = `properties.${i}`
    if (p.name === 'id') throw badRequest(`${at}.name: id is every record's identifier, not a property`, `${at}.name`)
    if (seen.has(p.name)) throw badRequest(`${at}.name: property ${p.name} is defined twice`, `${at}.name`)
    seen.add(p.name)
    if ((p.data_type === 'enum') !== (p.items !== undefined))
      throw badRequest(`${at}.items: items go with data_type enum, and an enum needs them`, `${at}.items`)
    if (p.default !== undefined) checkValue(p, p.default, `${at}.default`)
  })
  return out as T
}

export const classes = defineEntity({
  name: 'class',
  table: { table: 'classes', objtype: 'class', columns: { classname: 'classname' } },
  path: '/rest/v1/design/classes',
  // a change migrates the records of the class and its subclasses; a deletion removes them
  long: { patch: 'class migration', remove: 'class deletion' },
  fields: [
    ...COMMON_FIELDS,
    'classname',
    'parent_id',
    'name',
    'description',
    'properties',
    'storage_mode',
    'integrity_mode',
    'cache_mode',
    'opts.*',
  ],
  listFields: [
    'id',
    'classname',
    'parent_id',
    'name',
    'description',
    'properties',
    'storage_mode',
    'integrity_mode',
    'cache_mode',
    'opts.title',
    'opts.comment',
    'ext.lwt',
    'ext.ct',
  ],
  lookupFields: ['id', 'classname'],
  create: CLASS_CREATE,
  // what finish() fills in: every member and option, defaulted
  doc: { ...MEMBERS, opts: ClassOpts },
  finish,
  hooks: {
    *inTransaction(u, change): TxStep<void> {
      checkBuiltinClass(change.before, change.after)
      const domain = u.w.domain
      const all = yield* u.ctx.deps.repo(classes.table).all(domain)
      yield* applyClassChange(u, change.before, change.after, all)
      u.afterCommit(`model:${domain}`, () => u.ctx.deps.model.invalidate(domain))
    },
  },
})
