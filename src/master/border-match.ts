/**
 * Border-rule matching, pure (no I/O): a `remoteipmask` as a range of addresses, the patterns as
 * case-insensitive regular expressions that match a part of the value (as the original's
 * `friendly-scanner` catches `friendly-scanner/1.0`; `^...$` asks for the whole value), and the
 * original's two checks that decide which rule applies. The entity validates with the same
 * parsers, so whatever is stored compiles here.
 */
import { parseAddress, parseCidr } from '../net/cidr'

/** Longest pattern a rule may hold (a regular expression is compiled for every check). */
export const MAX_PATTERN = 255

const MAX_ADDRESS = (1n << 128n) - 1n
/** 255.255.255.255 as parseAddress gives it (IPv4-mapped IPv6). */
const MAX_V4 = (0xffffn << 32n) | 0xffffffffn

/** Addresses from `lo` to `hi`, both included, as 128-bit numbers (IPv4 as IPv4-mapped IPv6). */
export interface AddressRange {
  lo: bigint
  hi: bigint
}

const ANY_ADDRESS: AddressRange = { lo: 0n, hi: MAX_ADDRESS }

/** One address as a client sends it; unlike parseAddress, surrounding spaces are refused. */
export function parseIp(text: string): bigint | null {
  return /\s/.test(text) ? null : parseAddress(text)
}

/**
 * A `remoteipmask`: '' (any address), an address, a CIDR block, or `addr+N` (addr and the N
 * addresses after it; an IPv4 range may cross octets but not run past 255.255.255.255).
 * An IPv4 form covers IPv4 addresses only; `::/0` covers every address. null when malformed.
 */
export function parseIpMask(text: string): AddressRange | null {
  if (text === '') return ANY_ADDRESS
  if (/\s/.test(text)) return null
  const plus = text.indexOf('+')
  if (plus >= 0) {
    const addr = text.slice(0, plus)
    const count = text.slice(plus + 1)
    const first = parseIp(addr)
    if (first === null || !/^\d{1,39}$/.test(count)) return null
    const hi = first + BigInt(count)
    return hi > (addr.includes(':') ? MAX_ADDRESS : MAX_V4) ? null : { lo: first, hi }
  }
  const cidr = parseCidr(text)
  return cidr && { lo: cidr.base, hi: cidr.base | (MAX_ADDRESS ^ cidr.mask) }
}

/** Why a pattern does not compile, or null when it does. */
export function patternError(pattern: string): string | null {
  try {
    new RegExp(pattern)
    return null
  } catch (err) {
    return (err as Error).message
  }
}

/** The pattern, found anywhere in a value, ignoring case; null when it does not compile. */
export function compilePattern(pattern: string): RegExp | null {
  if (patternError(pattern) !== null) return null
  return new RegExp(pattern, 'i')
}

/** The fields of a rule that matching reads. */
export interface BorderRule {
  id: string
  enabled: number
  priority: number
  site: string
  service: string
  domain: string
  username: string
  useragent: string
  remoteipmask: string
  action: string
}

const PATTERN_FIELDS = ['domain', 'username', 'useragent'] as const
type PatternField = (typeof PATTERN_FIELDS)[number]

/** What is checked: a parsed address, the site and service (defaults applied), the other values if given. */
export interface BorderQuery extends Partial<Record<PatternField, string>> {
  ip: bigint
  site: string
  service: string
}

/** A rule's conditions, parsed: its addresses and the patterns it sets (an empty one sets none). */
export interface CompiledRule<R extends BorderRule = BorderRule> {
  rule: R
  addresses: AddressRange
  patterns: [PatternField, RegExp][]
}

/** null for a rule whose mask or patterns do not parse (it then never matches). */
export function compileRule<R extends BorderRule>(rule: R): CompiledRule<R> | null {
  const addresses = parseIpMask(rule.remoteipmask)
  if (!addresses) return null
  const patterns: [PatternField, RegExp][] = []
  for (const field of PATTERN_FIELDS) {
    if (rule[field] === '') continue
    const re = compilePattern(rule[field])
    if (!re) return null
    patterns.push([field, re])
  }
  return { rule, addresses, patterns }
}

export function ruleMatches(compiled: CompiledRule, q: BorderQuery): boolean {
  const { rule, addresses } = compiled
  if (rule.site !== '*' && rule.site !== '' && rule.site !== q.site) return false
  if (rule.service !== q.service) return false
  if (q.ip < addresses.lo || q.ip > addresses.hi) return false
  // a pattern needs a value: an omitted one matches only rules that leave the field empty
  return compiled.patterns.every(([field, re]) => {
    const value = q[field]
    return value !== undefined && re.test(value)
  })
}

/** Lower priority first; equal priorities by id, so the choice never depends on storage order. */
export function byPrecedence(a: BorderRule, b: BorderRule): number {
  if (a.priority !== b.priority) return a.priority < b.priority ? -1 : 1
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

/** A rule that filters by the sender's address alone: it sets no domain, user name or user agent pattern. */
export function addressOnly(rule: BorderRule): boolean {
  return PATTERN_FIELDS.every((field) => rule[field] === '')
}

/** Which of the original's two checks decided: `address` (address-only rules), `all` (every rule). */
export type BorderCheck = 'address' | 'all'

export interface BorderDecision<R extends BorderRule = BorderRule> {
  /** The rule that decided; null when none matched (the request is allowed). */
  rule: R | null
  /** The check that decided; null when neither did. */
  check: BorderCheck | null
}

function firstMatch<R extends BorderRule>(rules: readonly R[], q: BorderQuery): R | null {
  for (const rule of rules) {
    const compiled = compileRule(rule)
    if (compiled && ruleMatches(compiled, q)) return rule
  }
  return null
}

/**
 * The original's double check: first only the enabled rules that filter by address alone, by
 * precedence; the first that matches decides when it denies or drops. What passes (that rule
 * allows, or none matches) goes to the second check: every enabled rule by precedence, the first
 * that matches decides. Neither deciding allows the request.
 */
export function decide<R extends BorderRule>(rules: readonly R[], q: BorderQuery): BorderDecision<R> {
  const enabled = rules.filter((r) => r.enabled === 1).sort(byPrecedence)
  const first = firstMatch(enabled.filter(addressOnly), q)
  if (first && first.action !== 'allow') return { rule: first, check: 'address' }
  const second = firstMatch(enabled, q)
  return second ? { rule: second, check: 'all' } : { rule: null, check: null }
}

/** The rule that decides (./decide), or null when none matches. */
export function chooseRule<R extends BorderRule>(rules: readonly R[], q: BorderQuery): R | null {
  return decide(rules, q).rule
}
