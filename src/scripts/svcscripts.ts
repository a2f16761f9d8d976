/**
 * Service scripts (/rest/v1/service/svcscripts): code unique per domain, name, and `scriptdata`:
 * JavaScript text, which this service runs, or an object — the original's visual form
 * ({objects, variables, scriptVersion}), kept as given so it round-trips, but not run here.
 */
import * as v from 'valibot'
import type { TxStep } from '~storage/db'
import { NIL_UUID } from '../ids'
import { COMMON_FIELDS, defineEntity, ext, opts, requiredText, withDefaults } from '../entities/entity'
import { requireIds } from '../directory/maintain'
import { enforceLimit } from '../master/licence'
import { projects } from '../projects/projects'
import { Uuid } from '../values'
import { requireParses } from './script-syntax'

/** A script's code, also how a service task names the script it runs. */
export const scriptCode = v.pipe(
  requiredText(128),
  v.regex(/^[A-Za-z0-9_.-]+$/, 'a script code is letters, digits and _ . -'),
)

const MAX_SCRIPT = 4 * 1024 * 1024
/** A JSON object (not an array), kept as given. */
const plainObject = v.custom<Record<string, unknown>>(
  (x) => typeof x === 'object' && x !== null && !Array.isArray(x),
  'must be an object',
)

export const svcscripts = defineEntity({
  name: 'svcscript',
  table: { table: 'svcscripts', objtype: 'svcscript', columns: { code: 'code' } },
  path: '/rest/v1/service/svcscripts',
  fields: [...COMMON_FIELDS, 'code', 'name', 'projectid'],
  listFields: ['id', 'code', 'name', 'projectid', 'opts.title', 'ext.lwt', 'ext.ct'],
  lookupFields: ['id', 'code'],
  create: {
    code: scriptCode,
    name: requiredText(255),
    scriptdata: v.pipe(
      v.union([v.string(), plainObject], 'must be JavaScript text or an object (the original form)'),
      v.check((s) => (typeof s === 'string' ? s : JSON.stringify(s)).length <= MAX_SCRIPT, 'a script is at most 4 MB'),
    ),
    projectid: v.optional(v.pipe(v.string(), v.uuid('projectid must be a UUID'), v.toLowerCase())),
    opts: opts({
      loglevel: v.optional(v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(0), v.maxValue(100))),
      variables: v.optional(plainObject),
    }),
    ext,
  },
  doc: { projectid: v.pipe(Uuid, v.description('the project the script belongs to; the nil UUID for none')) },
  finish: (doc) => withDefaults(doc, { projectid: NIL_UUID }),
  hooks: {
    // a script that does not parse is refused when it is stored, not when it is first run
    async prepare(_ctx, input) {
      await requireParses(input.scriptdata)
      return { input }
    },
    // the licence counts scripts across every domain
    *inTransaction(u, { before, after }): TxStep<void> {
      if (!before && after) yield* enforceLimit(u, 'svcscripts', yield* u.ctx.deps.repo(svcscripts.table).countAll())
      // a script belongs to a project of its own domain, or to none (the nil id)
      const project = after?.projectid
      if (project && project !== NIL_UUID && project !== before?.projectid)
        yield* requireIds(u, projects, [project], 'projectid')
    },
  },
})
