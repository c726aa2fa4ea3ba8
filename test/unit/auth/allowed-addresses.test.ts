import { describe, expect, it } from 'vitest'
import { AllowedAddresses, canonicalRange } from '../../../src/auth/allowed-addresses.js'

describe('canonicalRange', () => {
  it.each([
    ['203.0.113.5', '203.0.113.5/32'],
    ['203.0.113.0/24', '203.0.113.0/24'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['10.0.0.0/8', '10.0.0.0/8'],
    ['2001:DB8::/32', '2001:db8::/32'],
    ['2001:db8:0:0:0:0:0:1', '2001:db8::1/128'],
    ['::/0', '::/0'],
    ['::1', '::1/128'],
    ['::ffff:10.0.0.0/104', '10.0.0.0/8'],
    ['::ffff:192.0.2.1', '192.0.2.1/32'],
    ['::ffff:0:0/96', '0.0.0.0/0'],
    ['::fffe:0:0/95', '::fffe:0:0/95']
  ])('stores %s as %s', (entry, stored) => {
    expect(canonicalRange(entry)).toBe(stored)
  })

  it.each([
    ['010.0.0.1', "'010.0.0.1' is not an IPv4 or IPv6 address or CIDR range"],
    ['10.1', "'10.1' is not an IPv4 or IPv6 address or CIDR range"],
    ['1.2.3.256', "'1.2.3.256' is not an IPv4 or IPv6 address or CIDR range"],
    ['fe80::1%eth0', "'fe80::1%eth0' is not an IPv4 or IPv6 address or CIDR range"],
    ['example.com', "'example.com' is not an IPv4 or IPv6 address or CIDR range"],
    ['', "'' is not an IPv4 or IPv6 address or CIDR range"],
    ['2001:db8:::1', "'2001:db8:::1' is not an IPv4 or IPv6 address or CIDR range"],
    ['10.0.0.0/33', "'10.0.0.0/33' needs a prefix length from 0 to 32"],
    ['2001:db8::/129', "'2001:db8::/129' needs a prefix length from 0 to 128"],
    ['10.0.0.0/', "'10.0.0.0/' needs a prefix length from 0 to 32"],
    ['10.0.0.0/08', "'10.0.0.0/08' needs a prefix length from 0 to 32"],
    ['10.0.0.0/-1', "'10.0.0.0/-1' needs a prefix length from 0 to 32"],
    ['10.0.0.0/8/8', "'10.0.0.0/8/8' needs a prefix length from 0 to 32"],
    ['203.0.113.1/24', "'203.0.113.1/24' has bits set past its /24 prefix: the range is 203.0.113.0/24"],
    ['10.128.0.0/1', "'10.128.0.0/1' has bits set past its /1 prefix: the range is 0.0.0.0/1"],
    ['203.0.113.129/25', "'203.0.113.129/25' has bits set past its /25 prefix: the range is 203.0.113.128/25"],
    ['2001:db8::1/64', "'2001:db8::1/64' has bits set past its /64 prefix: the range is 2001:db8::/64"],
    ['::ffff:10.0.0.1/104', "'::ffff:10.0.0.1/104' has bits set past its /104 prefix: the range is 10.0.0.0/8"],
    ['::ffff:0:0/95', "'::ffff:0:0/95' has bits set past its /95 prefix: the range is ::fffe:0:0/95"]
  ])('refuses %j: %s', (entry, message) => {
    expect(() => canonicalRange(entry)).toThrow(new RangeError(message))
  })
})

describe('AllowedAddresses', () => {
  const list = AllowedAddresses.of(['203.0.113.0/24', '198.51.100.7/32', '2001:db8::/32'])!

  it('is none for no list or an empty one: every address is allowed', () => {
    expect(AllowedAddresses.of(null)).toBeNull()
    expect(AllowedAddresses.of([])).toBeNull()
  })

  it.each([
    ['203.0.113.0', true],
    ['203.0.113.255', true],
    ['203.0.112.255', false],
    ['203.0.114.0', false],
    ['198.51.100.7', true],
    ['198.51.100.8', false],
    ['::ffff:203.0.113.9', true],
    ['::ffff:203.0.114.9', false],
    ['2001:db8::1', true],
    ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', true],
    ['2001:db9::', false],
    ['::1', false],
    ['127.0.0.1', false],
    ['', false],
    ['not an address', false]
  ])('takes %j as allowed: %s', (address, allowed) => {
    expect(list.includes(address)).toBe(allowed)
  })

  it('holds IPv4 clients to IPv4 ranges and IPv6 clients to IPv6 ranges', () => {
    expect(AllowedAddresses.of(['0.0.0.0/0'])!.includes('2001:db8::1')).toBe(false)
    expect(AllowedAddresses.of(['0.0.0.0/0'])!.includes('::ffff:192.0.2.1')).toBe(true)
    expect(AllowedAddresses.of(['::/0'])!.includes('192.0.2.1')).toBe(false)
    expect(AllowedAddresses.of(['::/0'])!.includes('::ffff:192.0.2.1')).toBe(false)
    expect(AllowedAddresses.of(['::/0'])!.includes('2001:db8::1')).toBe(true)
  })
})
