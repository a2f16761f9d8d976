/**
 * Border rules (/rest/v1/master/borderrules), master domain only: static filters of incoming SIP
 * requests at the edge, by site, service, sender address and patterns over domain, user name and
 * user agent, decided by the original's two checks (address-only rules first). `borderrules_check` (./borderrules-api.ts) answers which
 * rule applies to a request; the matching itself is src/master/border-match.ts, run on a thread of its own within a
 * time limit (src/master/border-matcher.ts).
 */
import * as v from 'valibot'
import { COMMON_FIELDS, defineEntity, ext, opts, requiredText } from '../entities/entity'
import { MAX_PATTERN, parseIpMask, patternError } from './border-match'
import { backtrackProblem } from './regex-safety'

/**
 * domain, username, useragent: '' (any value) or a JavaScript regular expression, found anywhere in
 * the value; one that can backtrack catastrophically (./regex-safety.ts) is refused.
 */
const pattern = v.optional(
  v.pipe(
    v.string(),
    v.maxLength(MAX_PATTERN, `must be at most ${MAX_PATTERN} characters`),
    v.check(
      (p) => patternError(p) === null,
      (issue) => `not a valid regular expression (${patternError(issue.input)})`,
    ),
    v.check(
      (p) => patternError(p) !== null || backtrackProblem(p) === null,
      (issue) => `refused: ${backtrackProblem(issue.input)}`,
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

const flag = v.picklist([0, 1], 'must be 0 or 1')

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
    enabled: v.optional(flag),
    priority: v.pipe(v.number(), v.safeInteger('must be an integer')),
    site: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(255, 'must be at most 255 characters'))),
    service: v.optional(requiredText(64)),
    domain: pattern,
    username: pattern,
    useragent: pattern,
    remoteipmask,
    // only priority is required (the original's field table); its create example, every other field
    // left to its default, answers action allow
    action: v.optional(v.picklist(['allow', 'deny', 'drop'], 'must be allow, deny or drop')),
    opts: opts(),
    ext,
  },
  // what the defaults below leave set on every rule
  doc: {
    enabled: flag,
    site: v.pipe(v.string(), v.description('* for every site')),
    service: v.string(),
    domain: v.pipe(v.string(), v.description("'' for any domain, else a regular expression")),
    username: v.pipe(v.string(), v.description("'' for any user name, else a regular expression")),
    useragent: v.pipe(v.string(), v.description("'' for any user agent, else a regular expression")),
    remoteipmask: v.pipe(v.string(), v.description("'' for any address, else an address, CIDR block or range")),
    action: v.picklist(['allow', 'deny', 'drop']),
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
    action = 'allow',
    ...rest
  }) => ({ id, enabled, priority, site, service, domain, username, useragent, remoteipmask, action, ...rest }),
})
