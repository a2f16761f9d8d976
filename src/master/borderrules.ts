/**
 * Border rules (/rest/v1/master/borderrules), master domain only: static filters of incoming SIP
 * requests at the edge, by site, service, sender address and patterns over domain, user name and
 * user agent. The lowest `priority` wins. `borderrules_check` answers which rule applies to a
 * request; the matching itself is src/master/border-match.ts, run on a thread of its own within a
 * time limit (src/master/border-matcher.ts).
 */
import * as v from 'valibot'
import { COMMON_FIELDS, defineEntity, ext, opts, requiredText } from '../entities/entity'
import { badRequest } from '../errors'
import { defineRoute } from '../http/route'
import { chooseRuleOffThread } from './border-matcher'
import { type BorderQuery, type BorderRule, MAX_PATTERN, parseIp, parseIpMask, patternError } from './border-match'

/** domain, username, useragent: '' (any value) or a JavaScript regular expression. */
const pattern = v.optional(
  v.pipe(
    v.string(),
    v.maxLength(MAX_PATTERN, `must be at most ${MAX_PATTERN} characters`),
    v.check(
      (p) => patternError(p) === null,
      (issue) => `not a valid regular expression (${patternError(issue.input)})`,
    ),
  ),
)

const remoteipmask = v.optional(
  v.pipe(
    v.string(),
    v.maxLength(100, 'must be at most 100 characters'),
    v.check(
      (s) => parseIpMask(s) !== null,
      'must be empty (any address), an address, a CIDR block (IPv4 /0-32, IPv6 /0-128) or a range a.b.c.d+N',
    ),
  ),
)

export const borderrules = defineEntity({
  name: 'borderrule',
  table: { table: 'borderrules', objtype: 'borderrule' },
  path: '/rest/v1/master/borderrules',
  // "The collection is only available in the master domain."
  domainKind: 'master',
  fields: [
    ...COMMON_FIELDS,
    'enabled',
    'priority',
    'site',
    'service',
    'domain',
    'username',
    'useragent',
    'remoteipmask',
    'action',
  ],
  // the spec's list fields plus enabled, service and action, which the original's list example shows
  listFields: [
    'id',
    'enabled',
    'priority',
    'site',
    'service',
    'domain',
    'username',
    'useragent',
    'remoteipmask',
    'action',
    'opts.title',
    'ext.lwt',
    'ext.ct',
  ],
  lookupFields: ['id'],
  create: {
    enabled: v.optional(v.picklist([0, 1], 'must be 0 or 1')),
    priority: v.pipe(v.number(), v.safeInteger('must be an integer')),
    site: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(255, 'must be at most 255 characters'))),
    service: v.optional(requiredText(64)),
    domain: pattern,
    username: pattern,
    useragent: pattern,
    remoteipmask,
    action: v.picklist(['allow', 'deny', 'drop'], 'must be allow, deny or drop'),
    opts: opts(),
    ext,
  },
  // defaults, and the members in the order of the original's examples
  finish: ({
    id,
    enabled = 1,
    priority,
    site = '*',
    service = 'sip',
    domain = '',
    username = '',
    useragent = '',
    remoteipmask = '',
    action,
    ...rest
  }) => ({ id, enabled, priority, site, service, domain, username, useragent, remoteipmask, action, ...rest }),
})

const CHECK_PARAMS = new Set(['ip', 'useragent', 'username', 'domain', 'site', 'service'])
/** Bounds the work of the rules' regular expressions per check. */
const MAX_CHECK_VALUE = 1024

/** The checker's query: `ip` required; site defaults to this process's site, service to sip. */
export function parseCheckQuery(query: Record<string, string | undefined>, ownSite: string): BorderQuery {
  for (const [name, value] of Object.entries(query)) {
    if (!CHECK_PARAMS.has(name)) throw badRequest(`unknown parameter '${name}'`, name)
    if (value !== undefined && value.length > MAX_CHECK_VALUE)
      throw badRequest(`${name}: must be at most ${MAX_CHECK_VALUE} characters`, name)
  }
  if (query.ip === undefined) throw badRequest('ip is required', 'ip')
  const ip = parseIp(query.ip)
  if (ip === null) throw badRequest('ip: must be an IPv4 or IPv6 address', 'ip')
  const { domain, username, useragent } = query
  return { ip, site: query.site || ownSite, service: query.service || 'sip', domain, username, useragent }
}

/**
 * GET /rest/v1/master/borderrules_check: `{action, rule}` of the rule that applies to the request
 * described by the query, or `{action: 'allow', rule: null}` when none does.
 */
export const checkBorderRules = defineRoute({
  domainKind: 'master',
  async handle(req) {
    const q = parseCheckQuery(req.query, req.deps.config.site)
    const repo = req.deps.repo(borderrules.table)
    // stored rules passed the entity's schema, so they carry every field matching reads
    const rules = (await req.deps.db.read(() => repo.all(req.ctx.domain))) as unknown as BorderRule[]
    const rule = await chooseRuleOffThread(rules, q)
    return rule ? { action: rule.action, rule } : { action: 'allow', rule: null }
  },
})
