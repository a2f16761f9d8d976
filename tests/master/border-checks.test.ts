// The original's two checks of a request (address-only rules first, then every rule), and the
// static refusal of patterns that can backtrack catastrophically.
import { describe, expect, test } from 'bun:test'
import { addressOnly, type BorderQuery, type BorderRule, decide, parseIp } from '~/master/border-match'
import { backtrackProblem } from '~/master/regex-safety'

let n = 0
const rule = (name: string, r: Partial<BorderRule>): BorderRule & { name: string } => ({
  name,
  id: `00000000-0000-7000-8000-${String(++n).padStart(12, '0')}`,
  enabled: 1,
  priority: 10,
  site: '*',
  service: 'sip',
  domain: '',
  username: '',
  useragent: '',
  remoteipmask: '',
  action: 'allow',
  ...r,
})
const query = (q: Partial<Omit<BorderQuery, 'ip'>> & { ip?: string } = {}): BorderQuery => ({
  site: 'site1',
  service: 'sip',
  ...q,
  ip: parseIp(q.ip ?? '10.0.0.1')!,
})

describe('address-only rules', () => {
  test('a rule sets no domain, user name or user agent pattern', () => {
    expect(addressOnly(rule('net', { remoteipmask: '10.0.0.0/8' }))).toBe(true)
    expect(addressOnly(rule('any', {}))).toBe(true) // no condition at all: the address (any) alone
    expect(addressOnly(rule('ua', { useragent: 'x' }))).toBe(false)
    expect(addressOnly(rule('dom', { domain: 'x', remoteipmask: '10.0.0.0/8' }))).toBe(false)
  })
})

describe('the two checks', () => {
  // a whitelist by domain, a scanner filter, a banned network and a catch-all: the original's warning
  // ("this should be taken into account when creating whitelists") is the catch-all deny row
  const whitelist = rule('whitelist', { priority: 1, domain: '^docs[.]rootdomain[.]ru$', action: 'allow' })
  const scanner = rule('scanner', { priority: 2, useragent: 'friendly-scanner|sipvicious', action: 'drop' })
  const user = rule('user', { priority: 3, username: 'abcde', action: 'deny' })
  const banned = rule('banned', { priority: 50, remoteipmask: '203.0.113.0/24', action: 'deny' })
  const trusted = rule('trusted', { priority: 5, remoteipmask: '10.0.0.0/8', action: 'allow' })
  const dropAll = rule('dropAll', { priority: 100, action: 'drop' })
  const off = rule('off', { priority: 0, enabled: 0, action: 'deny' })
  const base = [whitelist, scanner, user, banned, trusted, off]

  const cases: [string, BorderRule[], BorderQuery, string | null, 'address' | 'all' | null][] = [
    ['no rule matches: allowed, no check decided', base, query({ ip: '192.0.2.1' }), null, null],
    [
      'a banned address is denied by the first check, though a whitelist of higher priority matches',
      base,
      query({ ip: '203.0.113.9', domain: 'docs.rootdomain.ru' }),
      'banned',
      'address',
    ],
    ['the same address with nothing else: the first check', base, query({ ip: '203.0.113.9' }), 'banned', 'address'],
    [
      'an allowing address-only rule passes the request on to the second check',
      base,
      query({ ip: '10.1.2.3', useragent: 'friendly-scanner/1.0' }),
      'scanner',
      'all',
    ],
    ['in the second check the first rule by priority decides', base, query({ ip: '10.1.2.3' }), 'trusted', 'all'],
    [
      'a whitelisted domain wins the second check over the scanner filter',
      base,
      query({ ip: '192.0.2.1', domain: 'docs.rootdomain.ru', useragent: 'sipvicious' }),
      'whitelist',
      'all',
    ],
    ['a user name rule (the original list example)', base, query({ username: 'abcde' }), 'user', 'all'],
    [
      'a catch-all drop is address-only: it ends the first check even for a whitelisted domain',
      [...base, dropAll],
      query({ ip: '192.0.2.1', domain: 'docs.rootdomain.ru' }),
      'dropAll',
      'address',
    ],
    [
      'an allowing address-only rule before the catch-all lets the request reach the second check',
      [...base, dropAll],
      query({ ip: '10.9.9.9', username: 'abcde' }),
      'user',
      'all',
    ],
    ['a disabled rule takes part in neither check', [off], query(), null, null],
  ]
  for (const [name, rules, q, expected, check] of cases)
    test(name, () => {
      const d = decide(rules, q)
      expect({ rule: (d.rule as { name: string } | null)?.name ?? null, check: d.check }).toEqual({
        rule: expected,
        check,
      })
    })
})

describe('patterns that can backtrack catastrophically are found before they run', () => {
  const refused = [
    '(a+)+$',
    '(a*)*b',
    '(\\w+\\s?)*$',
    '(x{1,50}){1,50}',
    '(a+){20}',
    '(?:[a-z]+\\.)*example',
    '(?<n>a+)+',
    '(a|a)*',
    '(a|ab)*',
    '(\\d|\\w)+',
    '(.|x)*',
    '((a|a))*',
    '(x?(a|a))*',
    '(a?a)+$',
    '(a{1,2})+$',
    '(.+){10}x',
    '(.+){2,10}x',
    '.*.*.*x',
    '(a|a){5}',
    '\\d+\\d+\\d+',
  ]
  const accepted = [
    'friendly-scanner',
    'friendly-scanner|sipvicious',
    'docs[.]rootdomain[.]ru',
    '^sip:.*@example\\.com$',
    '(foo|bar)+',
    '(\\d+\\.){3}\\d+',
    '(?:a+){2}',
    'a{2,}',
    '[(]+',
    '\\(a+\\)+',
    'x*y*z*',
    '^100\\d$',
    '(sip|sips):.*@example[.]com',
    '^docs[.]rootdomain[.]ru$',
    '(\\d{1,3}\\.){3}\\d{1,3}',
    '\\d+\\.\\d+\\.\\d+\\.\\d+',
    '.*@example',
    '',
  ]
  for (const p of refused) test(`refused: ${p}`, () => expect(backtrackProblem(p)).toBeString())
  for (const p of accepted) test(`accepted: ${p}`, () => expect(backtrackProblem(p)).toBeNull())

  test('a refused pattern really is slow, an accepted lookalike is not', () => {
    const value = `${'a'.repeat(26)}!`
    const time = (p: string) => {
      const t = performance.now()
      new RegExp(p).test(value)
      return performance.now() - t
    }
    expect(backtrackProblem('(a+)+$')).toBeString()
    expect(time('(a+)+$')).toBeGreaterThan(20)
    expect(backtrackProblem('a+$')).toBeNull()
    expect(time('a+$')).toBeLessThan(20)
  })
})
