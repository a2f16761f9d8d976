import { expect, test } from 'bun:test'
import { inCidrs, parseAddress, parseCidr } from '~/net/cidr'

test('addresses parse, including IPv4-mapped IPv6 and compressed forms', () => {
  expect(parseAddress('127.0.0.1')).toBe(parseAddress('::ffff:127.0.0.1'))
  expect(parseAddress('::1')).toBe(1n)
  expect(parseAddress('2001:db8::1')).toBe(parseAddress('2001:0db8:0:0:0:0:0:1'))
  for (const bad of ['256.1.1.1', '1.2.3', 'abc', '1::2::3', '', '12345::1']) expect(parseAddress(bad)).toBeNull()
})

test('CIDR membership', () => {
  const trusted = ['10.0.0.0/8', '192.168.1.7', '::1', 'fd00::/8'].map((c) => parseCidr(c)!)
  const cases: [string, boolean][] = [
    ['10.1.2.3', true],
    ['11.0.0.1', false],
    ['192.168.1.7', true],
    ['192.168.1.8', false],
    ['::1', true],
    ['::ffff:10.9.9.9', true],
    ['fd12::5', true],
    ['fe80::1', false],
    ['garbage', false],
  ]
  for (const [addr, expected] of cases) expect([addr, inCidrs(addr, trusted)]).toEqual([addr, expected])
  expect(parseCidr('10.0.0.0/33')).toBeNull()
  expect(inCidrs('1.2.3.4', [parseCidr('0.0.0.0/0')!])).toBe(true)
})

test('a CIDR prefix is 0 to 32 (IPv4) or 0 to 128 (IPv6) written in digits, after exactly one slash', () => {
  for (const bad of [
    '10.0.0.0/',
    '10.0.0.0/ 8',
    '10.0.0.0/8 ',
    '10.0.0.0/+8',
    '10.0.0.0/-1',
    '10.0.0.0/8/9',
    '10.0.0.0/0x8',
  ])
    expect([bad, parseCidr(bad)]).toEqual([bad, null])
  for (const bad of ['::/129', '::/', '::/1e2']) expect([bad, parseCidr(bad)]).toEqual([bad, null])
  expect(parseCidr('10.0.0.0/8')).toEqual(parseCidr('10.0.0.0/08'))
  expect(parseCidr('::/0')).toEqual({ base: 0n, mask: 0n })
  expect(parseCidr('10.1.2.3/32')).toEqual(parseCidr('10.1.2.3'))
})
