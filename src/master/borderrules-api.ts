/** GET /rest/v1/master/borderrules_check: which border rule (./borderrules.ts) applies to a request. */
import * as v from 'valibot'
import { queryOf } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer, errors } from '../http/schemas'
import { chooseRuleOffThread } from './border-matcher'
import { type BorderQuery, type BorderRule, parseIp } from './border-match'
import { borderrules } from './borderrules'

/** Bounds the work of the rules' regular expressions per check. */
const MAX_CHECK_VALUE = 1024
const checkValue = (what: string) =>
  v.optional(
    v.pipe(
      v.string(),
      v.maxLength(MAX_CHECK_VALUE, `must be at most ${MAX_CHECK_VALUE} characters`),
      v.description(what),
    ),
  )

/** The checker's query: the request to check. */
const CheckQuery = queryOf({
  ip: v.pipe(
    v.string(),
    v.check((s) => parseIp(s) !== null, 'must be an IPv4 or IPv6 address'),
    v.description("the sender's address"),
  ),
  useragent: checkValue('the User-Agent of the request'),
  username: checkValue('the user name of the request'),
  domain: checkValue('the domain of the request'),
  site: checkValue("the site it arrives at; this process's site when absent or empty"),
  service: checkValue('sip when absent or empty'),
})

/**
 * GET /rest/v1/master/borderrules_check: `{action, rule}` of the rule that applies to the request
 * described by the query, or `{action: 'allow', rule: null}` when none does.
 */
export const checkBorderRules = defineRoute({
  domainKind: 'master',
  summary: 'Check which border rule applies to a request',
  description:
    'The enabled rule of lowest priority (then smallest id) that matches the request the query describes, ' +
    "and its action; `{action: 'allow', rule: null}` when none does. 422 when a rule's pattern takes too long " +
    'on the values given (error_details.field: rules).',
  query: CheckQuery,
  response: {
    200: answer(v.strictObject({ action: v.picklist(['allow', 'deny', 'drop']), rule: v.nullable(borderrules.doc) })),
    ...errors(422),
  },
  async handle(req) {
    const { ip, domain, username, useragent } = req.query
    const q: BorderQuery = {
      ip: parseIp(ip)!,
      site: req.query.site || req.deps.config.site,
      service: req.query.service || 'sip',
      domain,
      username,
      useragent,
    }
    const repo = req.deps.repo(borderrules.table)
    // stored rules passed the entity's schema, so they carry every field matching reads
    const rules = (await req.deps.db.read(() => repo.all(req.ctx.domain))) as unknown as BorderRule[]
    const rule = await chooseRuleOffThread(rules, q)
    return rule ? { action: rule.action, rule } : { action: 'allow', rule: null }
  },
})
