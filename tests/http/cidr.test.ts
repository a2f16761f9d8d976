import { expect, test } from 'bun:test'
import { inCidrs, parseAddress, parseCidr } from '~/http/cidr'

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
