/**
 * GET /rest/v1/journal/changes: change records found by search conditions (`params`), then
 * filtered, masked, ordered and paged like any list. A search needs a time bound or an object.
 */
import * as v from 'valibot'
import { searchJournal, type JournalSearch } from '~storage/journal'
import { journalHorizon } from '~storage/journal-retention'
import { validate } from '../entities/validate'
import { ApiError, badRequest } from '../errors'
import { FieldSet } from '../query/fields'
import { parseListParams } from '../query/list-query'
import { present } from '../query/present'
import type { Req } from '../http/req'
import { listQuery } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer, errors } from '../http/schemas'
import { Instant } from '../values'
import { isUuid } from '../ids'

const FIELDS = new FieldSet([
  'cmdtype',
  'dtutc',
  'modifierid',
  'modifiername',
  'objtype',
  'objid',
  'fields',
  'obj',
  'obj.*',
])
const OUTPUT = ['cmdtype', 'dtutc', 'modifierid', 'modifiername', 'objtype', 'objid', 'fields', 'obj']
const LIMITS = { defaultLimit: 100, maxLimit: 1000 }

/** Any date the platform can read; compared in the journal's own form (ISO 8601 UTC, milliseconds). */
const instant = v.pipe(
  v.string(),
  v.check((s) => !Number.isNaN(Date.parse(s)), 'must be a date and time, RFC 3339 UTC preferred'),
  v.transform((s) => new Date(s).toISOString()),
)
const count = (max: number) => v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(max))

const Params = v.strictObject({
  dtstart: v.optional(instant),
  dtstop: v.optional(instant),
  cmdtype: v.optional(v.picklist(['create', 'update', 'delete'], 'must be create, update or delete')),
  objtype: v.optional(v.pipe(v.string(), v.minLength(1))),
  objid: v.optional(
    v.pipe(
      v.string(),
      v.check((s) => isUuid(s), 'must be a UUID'),
    ),
  ),
  objkey: v.optional(v.pipe(v.string(), v.minLength(1))),
  offset: v.optional(count(10_000_000)),
  limit: v.optional(count(LIMITS.maxLimit)),
})

const REQUIRED = 'params needs dtstart and/or dtstop, or objtype with objid or objkey'

export function parseSearch(raw: string | undefined): JournalSearch {
  if (raw === undefined)
    throw badRequest(REQUIRED, 'params', { required: ['dtstart', 'dtstop', 'objtype+objid', 'objtype+objkey'] })
  let json: unknown
  try {
    json = JSON.parse(raw)
  } catch {
    throw badRequest('params is not valid JSON', 'params')
  }
  const p = validate(Params, json, 'params')
  const fail = (message: string, field: string, required: string[]) =>
    badRequest(message, `params.${field}`, { required })
  if (p.objid !== undefined && p.objkey !== undefined)
    throw fail('give objid or objkey, not both', 'objkey', ['objtype+objid', 'objtype+objkey'])
  if ((p.objid !== undefined || p.objkey !== undefined) && p.objtype === undefined)
    throw fail('objid and objkey need objtype', 'objtype', ['objtype'])
  if (p.objtype !== undefined && p.objid === undefined && p.objkey === undefined)
    throw fail('objtype needs objid or objkey', 'objtype', ['objid', 'objkey'])
  if (!p.dtstart && !p.dtstop && !p.objtype)
    throw badRequest(REQUIRED, 'params', { required: ['dtstart', 'dtstop', 'objtype+objid', 'objtype+objkey'] })
  if (p.dtstart && p.dtstop && p.dtstart > p.dtstop)
    throw fail('dtstart is after dtstop', 'dtstart', ['dtstart<=dtstop'])
  return {
    dtstart: p.dtstart,
    dtstop: p.dtstop,
    cmdtype: p.cmdtype,
    objtype: p.objtype,
    objid: p.objid?.toLowerCase() ?? p.objkey,
    offset: p.offset ?? 0,
    limit: p.limit ?? LIMITS.maxLimit,
  }
}

/**
 * Retention removed this domain's older records: a search wholly before what is kept is a 410; one
 * reaching back past it is answered with what is left, and `X-Journal-Horizon` says since when.
 */
async function tellHorizon(req: Req, search: JournalSearch): Promise<void> {
  const horizon = await journalHorizon(req.deps.db, req.ctx.domain)
  if (!horizon) return
  if (search.dtstop !== undefined && search.dtstop <= horizon.dtutc)
    throw new ApiError(
      410,
      `the journal keeps this domain's changes after ${horizon.dtutc}; older ones were removed by retention`,
      { field: 'params.dtstop', horizon: horizon.dtutc },
    )
  if (search.dtstart === undefined || search.dtstart <= horizon.dtutc) req.headers['x-journal-horizon'] = horizon.dtutc
}

/** One change as the journal lists it (`fields`: the members an update changed). */
const Change = v.strictObject({
  cmdtype: v.picklist(['create', 'update', 'delete']),
  dtutc: Instant,
  modifierid: v.pipe(v.string(), v.description('the id of the user (or the service, the nil UUID) who made it')),
  modifiername: v.string(),
  objtype: v.pipe(v.string(), v.description('what changed: user, class, model/<classname>, ...')),
  objid: v.string(),
  fields: v.optional(v.pipe(v.string(), v.description('an update: the members it changed, a comma list'))),
  obj: v.pipe(
    v.record(v.string(), v.unknown()),
    v.description('the object as the change left it; a deletion: as it was'),
  ),
})

const SearchParam = v.optional(
  v.pipe(
    v.string(),
    v.description(
      'JSON search conditions: dtstart and/or dtstop, or objtype with objid or objkey; cmdtype, offset and ' +
        'limit narrow them. {"objtype":"user","objid":"<id>"}',
    ),
  ),
)

export const listChanges = defineRoute({
  summary: 'Search the journal of changes',
  description:
    'The changes of the domain that `params` finds (it needs a time bound or an object), then filtered, ordered, ' +
    'masked and paged like any list. A search reaching back past what retention kept answers what is left with ' +
    'X-Journal-Horizon; one wholly before it is a 410.',
  query: listQuery({ params: SearchParam }),
  response: { 200: answer(v.array(Change)), ...errors(410) },
  async handle(req) {
    const search = parseSearch(req.query.params)
    const { query, mask, flat } = parseListParams(req.query, {
      fields: FIELDS,
      output: FIELDS,
      limits: LIMITS,
      extra: ['params'],
    })
    await tellHorizon(req, search)
    const records = await searchJournal(req.deps.db, req.ctx.domain, search, query)
    return records.map(({ seq: _seq, ...r }) => present(r, mask ?? OUTPUT, flat))
  },
})
