/** Routes of /rest/v1/master/license (master domain only). */
import * as v from 'valibot'
import { parseBoolParam } from '../query/list-query'
import { BoolParam, NoQuery, queryOf } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer } from '../http/schemas'
import { Instant, Uuid } from '../values'
import { getLicence, installLicence, LicenceSchema } from './licence'

const { dql, sqf } = LicenceSchema.entries
/**
 * The licence object of the spec, then where it comes from. Open at each level: a licence as issued
 * (`file=true`) shows members a later licensor adds, which this service does not know.
 */
const LicenceView = v.looseObject({
  ...LicenceSchema.entries,
  dql: v.looseObject(dql.entries),
  sqf: v.looseObject(sqf.entries),
  installation: v.pipe(Uuid, v.description('the installation id licences are bound to (their `sub`)')),
  evaluation: v.pipe(v.boolean(), v.description('true: no licence is in force, the evaluation licence applies')),
  issuer: v.optional(v.string()),
  issued: v.optional(Instant),
  expires: v.optional(Instant),
})
const licenceAnswer = answer(LicenceView)

export const getLicenceRoute = defineRoute({
  domainKind: 'master',
  summary: 'Read the licence',
  description:
    'The licence in force (the evaluation licence when none is: not posted, expired, or verified under ' +
    'another key), or with `file=true` the licence posted last, as issued.',
  query: queryOf({ file: v.optional(v.pipe(BoolParam, v.description('true: the licence posted last, as issued'))) }),
  response: { 200: licenceAnswer },
  handle: (req) => getLicence(req.ctx, parseBoolParam(req.query.file, 'file')),
})

export const postLicenceRoute = defineRoute({
  domainKind: 'master',
  summary: 'Install a licence',
  description:
    'The body is the licence token as a JSON string: a compact JWS signed by the licensor, bound to this ' +
    'installation. A token that does not verify is a 400 naming the check in error_details.reason. Answers ' +
    'the licence then in force.',
  query: NoQuery,
  body: v.pipe(v.string('must be a JSON string: the licence token'), v.description('the licence token')),
  response: { 200: licenceAnswer },
  handle: (req) => installLicence(req.ctx, req.body),
})
