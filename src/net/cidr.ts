/** IPv4 and IPv6 addresses and CIDR blocks, for TRUST_PROXY, border rules and the webhook address policy. */

/** The address as a 128-bit number (IPv4 as IPv4-mapped IPv6), or null when it is not an address. */
export function parseAddress(text: string): bigint | null {
  const s = text.trim()
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s)
  if (v4) {
    const parts = v4.slice(1).map(Number)
    if (parts.some((p) => p > 255)) return null
    return (0xffffn << 32n) | BigInt(((parts[0]! << 24) >>> 0) + (parts[1]! << 16) + (parts[2]! << 8) + parts[3]!)
  }
  if (!s.includes(':') || !/^[0-9a-fA-F:.]+$/.test(s)) return null
  let head = s
  let tail4: bigint | null = null
  const lastColon = s.lastIndexOf(':')
  if (s.slice(lastColon + 1).includes('.')) {
    const mapped = parseAddress(s.slice(lastColon + 1))
    if (mapped === null) return null
    tail4 = mapped & 0xffffffffn
    head = `${s.slice(0, lastColon + 1)}0:0`
  }
  const halves = head.split('::')
  if (halves.length > 2) return null
  const groups = (h: string) => (h === '' ? [] : h.split(':'))
  const left = groups(halves[0]!)
  const right = halves.length === 2 ? groups(halves[1]!) : []
  const missing = 8 - left.length - right.length
  if ((halves.length === 1 && missing !== 0) || missing < 0) return null
  const all = [...left, ...Array(halves.length === 2 ? missing : 0).fill('0'), ...right]
  let n = 0n
  for (const g of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null
    n = (n << 16n) | BigInt(parseInt(g, 16))
  }
  if (tail4 !== null) n = (n & ~0xffffffffn) | tail4
  return n
}

export interface Cidr {
  base: bigint
  mask: bigint
}

/** `10.0.0.0/8`, `::1`, `fd00::/8`; an IPv4 prefix counts within the IPv4-mapped range. */
export function parseCidr(text: string): Cidr | null {
  const slash = text.indexOf('/')
  const addr = slash < 0 ? text : text.slice(0, slash)
  const bits = slash < 0 ? undefined : text.slice(slash + 1)
  const base = parseAddress(addr)
  if (base === null) return null
  const isV4 = !addr.includes(':')
  const max = isV4 ? 32 : 128
  // digits only: Number('') is 0 and Number(' 8') is 8, which made '10.0.0.0/' a /0
  if (bits !== undefined && !/^\d{1,3}$/.test(bits)) return null
  const len = bits === undefined ? max : Number(bits)
  if (len > max) return null
  const prefix = BigInt(isV4 ? 96 + len : len)
  const mask = prefix === 0n ? 0n : ((1n << 128n) - 1n) ^ ((1n << (128n - prefix)) - 1n)
  return { base: base & mask, mask }
}

export function inCidrs(address: string, cidrs: readonly Cidr[]): boolean {
  const a = parseAddress(address)
  return a !== null && cidrs.some((c) => (a & c.mask) === c.base)
}

/**
 * Addresses outside the public unicast ones (IANA's special-purpose registries): private, shared,
 * loopback, link-local, unspecified, documentation, benchmarking, multicast, reserved, dummy and
 * SRv6, and the IPv6 ranges that carry an IPv4 address or reach one through a translator
 * (IPv4-compatible, IPv4-translated, NAT64, 6to4, Teredo), which could lead back to any of the former. IPv4-mapped addresses are parsed as
 * IPv4, so the IPv4 blocks hold them. Outgoing calls reach these only where allowed.
 */
export const NON_PUBLIC_BLOCKS: readonly Cidr[] = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '::/96',
  '::ffff:0:0:0/96',
  '64:ff9b::/96',
  '64:ff9b:1::/48',
  '100::/64',
  '100:0:0:1::/64',
  '2001::/32',
  '2001:2::/48',
  '2001:db8::/32',
  '2002::/16',
  '3fff::/20',
  '5f00::/16',
  'fc00::/7',
  'fe80::/10',
  'fec0::/10',
  'ff00::/8',
].map((c) => parseCidr(c)!)

/** The blocks that lie inside a non-public block: only those open such addresses (0.0.0.0/0 opens nothing). */
export const privateBlocksOf = (blocks: readonly Cidr[]): Cidr[] =>
  blocks.filter((b) => NON_PUBLIC_BLOCKS.some((p) => b.mask >= p.mask && (b.base & p.mask) === p.base))

/**
 * Who a connection counts against for a per-client cap: an IPv4 address (also IPv4-mapped), or the
 * /64 of an IPv6 address, since one host usually holds a whole /64 and could otherwise pick a new
 * address for every connection.
 */
export function hostKey(address: string): string {
  const n = parseAddress(address)
  if (n === null) return address
  if (n >> 32n === 0xffffn) return address.slice(address.lastIndexOf(':') + 1)
  return `${(n >> 64n).toString(16)}::/64`
}
