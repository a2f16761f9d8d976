// The gateway's per-address connection cap, directly (its use over real sockets is in transport-edges):
// IPv4 by address, IPv6 by /64, trusted proxies never capped, a released slot usable again.
import { expect, test } from 'bun:test'
import { hostKey } from '~/net/cidr'
import { ConnectionCap } from '~/gateway/connection-cap'

test('a host is an IPv4 address (mapped or not) or an IPv6 /64', () => {
  expect(hostKey('203.0.113.7')).toBe('203.0.113.7')
  expect(hostKey('::ffff:203.0.113.7')).toBe('203.0.113.7')
  expect(hostKey('2001:db8:1:2::1')).toBe(hostKey('2001:db8:1:2:ffff:ffff:ffff:ffff'))
  expect(hostKey('2001:db8:1:2::1')).not.toBe(hostKey('2001:db8:1:3::1'))
  expect(hostKey('not an address')).toBe('not an address')
})

test('the cap counts per host, frees on release, and leaves trusted proxies alone', () => {
  const cap = new ConnectionCap(2, ['10.0.0.0/8'])
  const a = [cap.admit('203.0.113.7'), cap.admit('::ffff:203.0.113.7')]
  expect(a).toEqual(['203.0.113.7', '203.0.113.7'])
  expect(cap.admit('203.0.113.7')).toBeNull()
  expect(cap.admit('203.0.113.8')).toBe('203.0.113.8')
  // one IPv6 host cannot get round the cap with a new address from its /64 each time
  expect(cap.admit('2001:db8::1')).not.toBeNull()
  expect(cap.admit('2001:db8::2')).not.toBeNull()
  expect(cap.admit('2001:db8::3')).toBeNull()
  cap.release(a[0]!)
  expect(cap.admit('203.0.113.7')).toBe('203.0.113.7')
  // a proxy carries many clients: never refused, never counted ('' releases nothing)
  for (let i = 0; i < 10; i++) expect(cap.admit('10.1.2.3')).toBe('')
  cap.release('')
  expect(new ConnectionCap(0).admit('203.0.113.7')).toBe('')
})
