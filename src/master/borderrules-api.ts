/** GET /rest/v1/master/borderrules_check: which border rule (./borderrules.ts) applies to a request. */
import * as v from 'valibot'
import { queryOf } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer, errors } from '../http/schemas'
import { decideOffThread } from './border-matcher'
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
 * GET /rest/v1/master/borderrules_check: `{action, check, rule}`: the rule that decides the request
 * the query describes and which of the original's two checks chose it (`address`: the rules that
 * filter by address alone; `all`: every rule), or `{action: 'allow', check: null, rule: null}`.
 */
export const checkBorderRules = defineRoute({
  domainKind: 'master',
  summary: 'Check which border rule applies to a request',
  description:
    "The original's two checks of the request the query describes: first the enabled rules that filter by " +
    'address alone, by priority (then id), where a deny or drop decides (check: address); then, for what ' +
    'passed, every enabled rule by priority, the first that matches deciding (check: all). ' +
    "`{action: 'allow', check: null, rule: null}` when no rule decides. 422 when a rule's pattern takes too " +
    'long on the values given (error_details.field: rules).',
  query: CheckQuery,
  response: {
    200: answer(
      v.strictObject({
        action: v.picklist(['allow', 'deny', 'drop']),
        check: v.pipe(
          v.nullable(v.picklist(['address', 'all'])),
          v.description('address: the first check (address-only rules); all: the second; null: no rule decided'),
        ),
        rule: v.nullable(borderrules.doc),
      }),
    ),
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
    const { rule, check } = await decideOffThread(rules, q)
    return rule ? { action: rule.action, check, rule } : { action: 'allow', check: null, rule: null }
  },
})
