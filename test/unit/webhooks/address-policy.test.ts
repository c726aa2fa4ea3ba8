import type { LookupAddress } from 'node:dns'
import { describe, expect, it } from 'vitest'
import {
  addressRefusal,
  checkedLookup,
  checkEndpointUrl,
  parseAllowedCidrs,
  type AddressPolicy
} from '../../../src/webhooks/address-policy.js'

const strict: AddressPolicy = { allowHttp: false, allowedCidrs: [] }
const local: AddressPolicy = { allowHttp: true, allowedCidrs: [] }

describe('addressRefusal', () => {
  it('allows public addresses and refuses every other kind, IPv4-mapped ones as their IPv4', () => {
    expect(addressRefusal('93.184.215.14', strict)).toBeUndefined()
    expect(addressRefusal('2606:4700::1', strict)).toBeUndefined()
    const refused = {
      '127.0.0.1': 'loopback',
      '::1': 'loopback',
      '10.0.0.1': 'private',
      '172.16.5.4': 'private',
      '192.168.1.1': 'private',
      '::ffff:192.168.1.1': 'private',
      '169.254.169.254': 'linkLocal',
      'fe80::1': 'linkLocal',
      'fd12::1': 'uniqueLocal',
      '100.64.0.1': 'carrierGradeNat',
      '0.0.0.0': 'unspecified',
      '224.0.0.1': 'multicast',
      '255.255.255.255': 'broadcast',
      '2001:db8::1': 'reserved',
      '64:ff9b::a00:1': 'rfc6052'
    }
    for (const [address, kind] of Object.entries(refused)) {
      expect(addressRefusal(address, strict), address).toContain(`a ${kind} address`)
    }
    for (const address of ['::7f00:1', '::808:808', '::a00:1']) {
      expect(addressRefusal(address, strict), address).toContain('an IPv4-compatible address')
      expect(addressRefusal(address, local), address).toContain('an IPv4-compatible address')
    }
  })

  it('allows loopback with WEBHOOKS_ALLOW_HTTP, and nothing else private', () => {
    expect(addressRefusal('127.0.0.1', local)).toBeUndefined()
    expect(addressRefusal('::1', local)).toBeUndefined()
    expect(addressRefusal('10.0.0.1', local)).toContain('private')
    expect(addressRefusal('169.254.169.254', local)).toContain('linkLocal')
  })

  it('allows the ranges WEBHOOKS_ALLOWED_CIDRS names, of either family, and only those', () => {
    const policy = { allowHttp: false, allowedCidrs: parseAllowedCidrs('10.20.0.0/16, fd00::/8') }
    expect(addressRefusal('10.20.255.1', policy)).toBeUndefined()
    expect(addressRefusal('::ffff:10.20.0.9', policy)).toBeUndefined()
    expect(addressRefusal('fd00::5', policy)).toBeUndefined()
    expect(addressRefusal('10.21.0.1', policy)).toContain('private')
    expect(addressRefusal('127.0.0.1', policy)).toContain('loopback')
  })

  it('reads WEBHOOKS_ALLOWED_CIDRS, refusing an entry that is no range', () => {
    expect(parseAllowedCidrs('')).toEqual([])
    expect(parseAllowedCidrs(' 10.0.0.0/8 ,')).toHaveLength(1)
    expect(() => parseAllowedCidrs('10.0.0.0/8,intranet')).toThrow("'intranet' is not a CIDR range")
    expect(() => parseAllowedCidrs('10.0.0.1')).toThrow('is not a CIDR range')
  })
})

describe('checkEndpointUrl', () => {
  it('takes https to a name or a public address', () => {
    expect(checkEndpointUrl('https://hooks.example.com/in?x=1', strict).toString()).toBe(
      'https://hooks.example.com/in?x=1'
    )
    expect(checkEndpointUrl('https://93.184.215.14:8443/in', strict).port).toBe('8443')
  })

  it('refuses http unless allowed, other schemes, credentials, fragments and literal addresses refused', () => {
    expect(() => checkEndpointUrl('http://hooks.example.com', strict)).toThrow(/https.*WEBHOOKS_ALLOW_HTTP/)
    expect(() => checkEndpointUrl('file:///etc/passwd', local)).toThrow(/https/)
    expect(() => checkEndpointUrl('https://a:b@hooks.example.com', strict)).toThrow(/credentials/)
    expect(() => checkEndpointUrl('https://hooks.example.com/#x', strict)).toThrow(/fragment/)
    expect(() => checkEndpointUrl('https://[::1]/', strict)).toThrow(/loopback/)
    // IPv4-compatible IPv6 (::/96, deprecated): the URL parser writes it [::7f00:1].
    expect(() => checkEndpointUrl('https://[::127.0.0.1]/', strict)).toThrow(/IPv4-compatible/)
    expect(() => checkEndpointUrl('https://[::127.0.0.1]/', local)).toThrow(/IPv4-compatible/)
    expect(() => checkEndpointUrl('https://[::10.0.0.1]/', strict)).toThrow(/IPv4-compatible/)
    expect(() => checkEndpointUrl('https://0x7f000001/', strict)).toThrow(/loopback/) // WHATWG URL reads it as 127.0.0.1
    expect(checkEndpointUrl('http://127.0.0.1:9000/', local).hostname).toBe('127.0.0.1')
  })
})

describe('checkedLookup', () => {
  const resolving =
    (addresses: LookupAddress[]) =>
    (_name: string, _options: object, callback: (error: Error | null, addresses: LookupAddress[]) => void) =>
      callback(null, addresses)
  const lookUp = (policy: AddressPolicy, addresses: LookupAddress[], all: boolean) =>
    new Promise<{ error: Error | null; result: unknown }>((resolve) =>
      checkedLookup(policy, resolving(addresses) as never)('hooks.example.com', { all }, (error, result) =>
        resolve({ error, result })
      )
    )

  it('refuses a name when any of its addresses is refused: private, link-local, loopback', async () => {
    for (const address of ['10.0.0.7', '169.254.169.254', '127.0.0.1']) {
      const { error } = await lookUp(
        strict,
        [
          { address: '93.184.215.14', family: 4 },
          { address, family: 4 }
        ],
        true
      )
      expect(error?.message).toContain(`hooks.example.com resolves to ${address} is a`)
    }
  })

  it('hands the connection exactly the addresses it checked, in either form of the callback', async () => {
    const addresses = [
      { address: '93.184.215.14', family: 4 },
      { address: '2606:4700::1', family: 6 }
    ]
    expect(await lookUp(strict, addresses, true)).toEqual({ error: null, result: addresses })
    expect(await lookUp(strict, addresses, false)).toEqual({ error: null, result: '93.184.215.14' })
  })
})
