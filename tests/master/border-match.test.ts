// Border-rule matching as a pure function: address forms, patterns, and which rule is chosen.
import { describe, expect, test } from 'bun:test'
import {
  type BorderQuery,
  type BorderRule,
  byPrecedence,
  chooseRule,
  compilePattern,
  parseIp,
  parseIpMask,
} from '~/master/border-match'

/** Whether the mask covers the address (both must parse). */
function covers(mask: string, address: string): boolean {
  const range = parseIpMask(mask)
  const ip = parseIp(address)
  if (!range || ip === null) throw new Error(`unparsable case: ${mask} / ${address}`)
  return ip >= range.lo && ip <= range.hi
}

describe('remoteipmask', () => {
  const cases: [mask: string, address: string, covered: boolean][] = [
    // v4 exact
    ['192.168.0.10', '192.168.0.10', true],
    ['192.168.0.10', '192.168.0.11', false],
    ['192.168.0.10', '::ffff:192.168.0.10', true], // v4-mapped is the same address
    ['192.168.0.10', '::ffff:c0a8:000a', true],
    // v6 exact, compressed and full forms
    ['2001:db8::1', '2001:0db8:0000:0000:0000:0000:0000:0001', true],
    ['2001:0DB8:0:0::1', '2001:db8::1', true],
    ['2001:db8::1', '2001:db8::2', false],
    ['::1', '0:0:0:0:0:0:0:1', true],
    ['::ffff:10.0.0.1', '10.0.0.1', true],
    // CIDR edges
    ['0.0.0.0/0', '0.0.0.0', true],
    ['0.0.0.0/0', '255.255.255.255', true],
    ['0.0.0.0/0', '2001:db8::1', false], // an IPv4 block covers IPv4 addresses only
    ['::/0', '2001:db8::1', true],
    ['::/0', '10.1.2.3', true],
    ['10.1.2.3/32', '10.1.2.3', true],
    ['10.1.2.3/32', '10.1.2.4', false],
    ['2001:db8::5/128', '2001:db8::5', true],
    ['2001:db8::5/128', '2001:db8::4', false],
    ['192.168.1.0/24', '192.168.1.0', true], // first of the block
    ['192.168.1.0/24', '192.168.1.255', true], // last
    ['192.168.1.0/24', '192.168.0.255', false], // one below
    ['192.168.1.0/24', '192.168.2.0', false], // one above
    ['192.168.1.77/24', '192.168.1.0', true], // host bits of the base are ignored
    ['2001:db8:1::/48', '2001:db8:1::', true],
    ['2001:db8:1::/48', '2001:db8:1:ffff:ffff:ffff:ffff:ffff', true],
    ['2001:db8:1::/48', '2001:db8:0:ffff:ffff:ffff:ffff:ffff', false],
    ['2001:db8:1::/48', '2001:db8:2::', false],
    // ranges, crossing an octet
    ['10.0.0.250+10', '10.0.0.249', false],
    ['10.0.0.250+10', '10.0.0.250', true],
    ['10.0.0.250+10', '10.0.0.255', true],
    ['10.0.1.4', '10.0.1.4', true],
    ['10.0.0.250+10', '10.0.1.4', true],
    ['10.0.0.250+10', '10.0.1.5', false],
    ['172.25.0.50+0', '172.25.0.50', true],
    ['172.25.0.50+0', '172.25.0.51', false],
    ['255.255.255.250+5', '255.255.255.255', true],
    ['2001:db8::fffe+3', '2001:db8::1:1', true],
    ['2001:db8::fffe+3', '2001:db8::1:2', false],
    // empty: any address
    ['', '10.0.0.1', true],
    ['', '2001:db8::1', true],
  ]
  for (const [mask, address, covered] of cases)
    test(`${mask || "''"} ${covered ? 'covers' : 'does not cover'} ${address}`, () => {
      expect(covers(mask, address)).toBe(covered)
    })

  test('malformed masks are refused', () => {
    const bad = [
      '10.0.0.0/33',
      '::/129',
      '1.2.3',
      '1.2.3.4+',
      '+5',
      '1.2.3.4+-1',
      '1.2.3.4+1.5',
      '1.2.3.4+5+6',
      '10.0.0.0/8+1',
      '255.255.255.250+10', // runs past 255.255.255.255
      '255.255.255.255+1',
      'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff+1',
      'abc',
      '10.0.0.0/',
      '10.0.0.0/ 8',
      ' 10.0.0.1',
      '10.0.0.1 ',
      '256.0.0.1',
      '*',
    ]
    for (const mask of bad) expect([mask, parseIpMask(mask)]).toEqual([mask, null])
  })

  test('addresses to check: spaces and junk refused', () => {
    for (const ip of ['', ' 10.0.0.1', '10.0.0.1/32', '10.0.0.1+1', 'localhost', '1::2::3'])
      expect([ip, parseIp(ip)]).toEqual([ip, null])
  })
})

describe('patterns: a part of the value, ignoring case', () => {
  const cases: [pattern: string, value: string, matches: boolean][] = [
    // the original's examples: a domain written with [.], a user name, a scanner's user agent
    ['docs[.]rootdomain[.]ru', 'docs.rootdomain.ru', true],
    ['docs[.]rootdomain[.]ru', 'DOCS.RootDomain.RU', true],
    ['docs[.]rootdomain[.]ru', 'docsXrootdomain.ru', false], // [.] is a dot, not any character
    ['docs[.]rootdomain[.]ru', 'www.docs.rootdomain.ru', true], // a part: anchor to ask for the whole
    ['^docs[.]rootdomain[.]ru$', 'www.docs.rootdomain.ru', false],
    ['^docs[.]rootdomain[.]ru$', 'docs.rootdomain.ru', true],
    ['abcde', 'abcde', true],
    ['friendly-scanner', 'friendly-scanner', true],
    ['friendly-scanner', 'friendly-scanner/1.0', true],
    ['friendly-scanner', 'Friendly-Scanner 0.2.8', true],
    ['friendly-scanner', 'Linphone/4.5', false],
    ['friendly-scanner|sipvicious', 'sipvicious 0.3', true],
    ['a|b', 'xbx', true],
    ['a)|(b', 'a', false], // does not compile
    ['.*phone.*', 'Cisco IP Phone 7940', true],
    ['[', 'x', false],
  ]
  for (const [pattern, value, matches] of cases)
    test(`${pattern} ${matches ? 'matches' : 'does not match'} ${value}`, () => {
      expect(compilePattern(pattern)?.test(value) ?? false).toBe(matches)
    })
})

describe('choosing a rule', () => {
  let n = 0
  const rule = (r: Partial<BorderRule>): BorderRule => ({
    id: `00000000-0000-7000-8000-${String(++n).padStart(12, '0')}`,
    enabled: 1,
    priority: 10,
    site: '*',
    service: 'sip',
    domain: '',
    username: '',
    useragent: '',
    remoteipmask: '',
    action: 'deny',
    ...r,
  })
  const query = (q: Partial<Omit<BorderQuery, 'ip'>> & { ip?: string } = {}): BorderQuery => ({
    site: 'site1',
    service: 'sip',
    ...q,
    ip: parseIp(q.ip ?? '10.0.0.1')!,
  })
  const chosen = (rules: BorderRule[], q: BorderQuery) => chooseRule(rules, q)?.id ?? null

  const cases: [name: string, rules: BorderRule[], q: BorderQuery, expected: number | null][] = (() => {
    const low = rule({ priority: 1, remoteipmask: '10.0.0.0/8' })
    const high = rule({ priority: 5, action: 'allow' })
    const off = rule({ priority: 0, enabled: 0 })
    const tieB = rule({ id: 'b0000000-0000-7000-8000-000000000000', priority: 3 })
    const tieA = rule({ id: 'a0000000-0000-7000-8000-000000000000', priority: 3 })
    const ua = rule({ priority: 1, useragent: 'friendly-scanner' })
    const user = rule({ priority: 1, username: 'abcde', domain: 'docs[.]rootdomain[.]ru' })
    const site2 = rule({ priority: 1, site: 'site2' })
    const siteEmpty = rule({ priority: 1, site: '' })
    const ws = rule({ priority: 1, service: 'ws' })
    const v6 = rule({ priority: 1, remoteipmask: '2001:db8::/32' })
    const neg = rule({ priority: -5, remoteipmask: '192.168.0.0/16' })
    return [
      ['the lowest priority wins', [high, low], query(), 1],
      ['a rule whose mask does not cover the ip is passed over', [high, low], query({ ip: '11.0.0.1' }), 0],
      ['disabled rules are skipped', [off, high], query(), 1],
      ['only disabled rules: nothing', [off], query(), null],
      ['equal priorities: the smaller id', [tieB, tieA], query(), 1],
      ['equal priorities, other order', [tieA, tieB], query(), 0],
      ['a useragent pattern needs the value', [ua, high], query(), 1],
      ['a useragent pattern, value given', [ua, high], query({ useragent: 'Friendly-Scanner' }), 0],
      ['a useragent pattern, a value holding it', [ua, high], query({ useragent: 'friendly-scanner/1.0' }), 0],
      ['a useragent pattern, other value', [ua, high], query({ useragent: 'Linphone/4.5' }), 1],
      ['every pattern must match', [user, high], query({ username: 'ABCDE' }), 1],
      ['every pattern matches', [user, high], query({ username: 'ABCDE', domain: 'docs.rootdomain.ru' }), 0],
      ['another site', [site2, high], query(), 1],
      ['that site', [site2, high], query({ site: 'site2' }), 0],
      ["site '' applies everywhere", [siteEmpty], query({ site: 'anything' }), 0],
      ['another service', [ws, high], query(), 1],
      ['that service', [ws, high], query({ service: 'ws' }), 0],
      ['an IPv6 block and an IPv4 query', [v6], query(), null],
      ['an IPv6 block and an IPv6 query', [v6], query({ ip: '2001:db8:ffff::1' }), 0],
      ['negative priorities come first', [high, neg], query({ ip: '192.168.3.4' }), 1],
      ['no rules', [], query(), null],
    ]
  })()
  for (const [name, rules, q, expected] of cases)
    test(name, () => {
      expect(chosen(rules, q)).toBe(expected === null ? null : rules[expected]!.id)
    })

  test('precedence sorts by priority, then id', () => {
    const a = rule({ id: 'a', priority: 2 })
    const b = rule({ id: 'b', priority: 2 })
    const c = rule({ id: 'c', priority: 1 })
    expect([b, a, c].sort(byPrecedence).map((r) => r.id)).toEqual(['c', 'a', 'b'])
  })

  test('a stored rule that no longer parses never matches', () => {
    expect(chooseRule([rule({ remoteipmask: 'junk' }), rule({ useragent: '(' })], query())).toBeNull()
  })
})
