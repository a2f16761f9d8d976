/** Projects (/rest/v1/domain/projects): groups of entities within a working domain. */
import * as v from 'valibot'
import { COMMON_FIELDS, defineEntity, ext, opts, requiredText, text } from '../entities/entity'

export const projects = defineEntity({
  name: 'project',
  table: { table: 'projects', objtype: 'project', columns: { code: 'code' } },
  path: '/rest/v1/domain/projects',
  // "The collection is not available in the master domain."
  domainKind: 'working',
  fields: [...COMMON_FIELDS, 'code', 'name'],
  listFields: ['id', 'code', 'name', 'opts.title', 'ext.lwt', 'ext.ct'],
  lookupFields: ['id', 'code'],
  create: { code: requiredText(255), name: requiredText(255), opts: opts(), ext },
  // title and comment are always there ('' by default)
  doc: { opts: v.strictObject({ title: text(), comment: text(4096) }) },
})
