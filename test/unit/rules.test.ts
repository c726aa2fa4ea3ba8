import { describe, expect, it } from 'vitest'
import { printable } from '../../src/cli/common.js'
import {
  auditedMetadata,
  changedFields,
  checkAllowedAddresses,
  checkExpiry,
  checkGraceSeconds,
  checkMetadata,
  checkName,
  checkScopes
} from '../../src/services/rules.js'

const NOW = Date.parse('2027-01-01T12:00:00Z')

describe('the rules of key and account changes', () => {
  it('take an expiry only as a real instant still to come', () => {
    expect(checkExpiry('2027-01-01T12:00:01Z', NOW)).toEqual(new Date('2027-01-01T12:00:01Z'))
    expect(checkExpiry(null, NOW)).toBeNull()
    expect(checkExpiry(undefined, NOW)).toBeUndefined()
    for (const text of ['2027-01-01T12:00:00Z', '2026-01-01T00:00:00Z']) {
      expect(() => checkExpiry(text, NOW)).toThrow('expiresAt must be in the future')
    }
    for (const text of ['2016-12-31T23:59:60Z', '2099-02-30T00:00:00Z', '2099-01-01T24:00:00Z', 'soon']) {
      expect(() => checkExpiry(text, NOW)).toThrow('expiresAt must be a real instant')
    }
  })

  it('take scopes as a non-empty set of known ones, in a fixed order', () => {
    expect(checkScopes(['pets:write', 'pets:read', 'pets:write'])).toEqual(['pets:read', 'pets:write'])
    expect(checkScopes(undefined)).toBeUndefined()
    expect(() => checkScopes([])).toThrow('at least one')
    expect(() => checkScopes(['pets:delete'])).toThrow("unknown scope 'pets:delete'")
  })

  it('refuse names that would drive a terminal, and keep the rest', () => {
    expect(checkName('name', 'Acme 😀')).toBe('Acme 😀')
    expect(checkName('name', null)).toBeNull()
    for (const name of ['\u001b[2J', 'a\u0085b', 'a\u202Eb', 'a\u2067b', '', 'x'.repeat(256)]) {
      expect(() => checkName('name', name)).toThrow('name must')
    }
  })

  it('refuse names with invisible format characters and line or paragraph separators', () => {
    const invisible = ['\u200B', '\u2028', '\u2029', '\uFEFF', '\u00AD', '\u2060', '\u{E0041}', '\u{1D173}']
    for (const character of invisible) {
      expect(() => checkName('name', `Ac${character}me`), JSON.stringify(character)).toThrow('name must')
    }
    expect(checkName('name', 'Zoë & Co. — Ünïcode')).toBe('Zoë & Co. — Ünïcode')
  })

  it('record only the fields that changed, instants as ISO text', () => {
    expect(
      changedFields(
        { name: 'a', expiresAt: null, scopes: ['pets:read'] },
        { name: 'b', expiresAt: new Date(NOW), scopes: ['pets:read'] }
      )
    ).toEqual({
      name: { before: 'a', after: 'b' },
      expiresAt: { before: null, after: '2027-01-01T12:00:00.000Z' }
    })
  })
})

describe('the rules of rotation, allowed addresses and metadata', () => {
  it('take a grace period of 0 to 604800 whole seconds', () => {
    for (const seconds of [0, 1, 604_800]) expect(checkGraceSeconds(seconds)).toBe(seconds)
    for (const seconds of [-1, 604_801, 1.5, Number.NaN]) {
      expect(() => checkGraceSeconds(seconds)).toThrow('graceSeconds must be a whole number from 0 to 604800')
    }
  })

  it('store allowed addresses in canonical form, each once, and no list as none', () => {
    expect(checkAllowedAddresses(['203.0.113.5', '2001:DB8::/32', '203.0.113.5/32'])).toEqual([
      '203.0.113.5/32',
      '2001:db8::/32'
    ])
    expect(checkAllowedAddresses([])).toBeNull()
    expect(checkAllowedAddresses(null)).toBeNull()
    expect(checkAllowedAddresses(undefined)).toBeUndefined()
    const twenty = Array.from({ length: 20 }, (_, index) => `10.0.${index}.0/24`)
    expect(checkAllowedAddresses(twenty)).toHaveLength(20)
    expect(() => checkAllowedAddresses([...twenty, '10.0.20.0/24'])).toThrow(
      'allowedAddresses may hold at most 20 ranges, not 21'
    )
    expect(() => checkAllowedAddresses(['10.0.0.0/8', '10.0.0.1/8'])).toThrow(
      "allowedAddresses[1]: '10.0.0.1/8' has bits set past its /8 prefix: the range is 10.0.0.0/8"
    )
  })

  it('take metadata as a JSON object of at most 2,048 bytes as compact JSON', () => {
    expect(checkMetadata(undefined)).toBeUndefined()
    expect(checkMetadata({})).toEqual({})
    expect(
      checkMetadata({ customer: 'cus_1', tier: 3n, ratio: 0.5, tags: ['a', 1n], nested: { ok: true, none: null } })
    ).toEqual({
      customer: 'cus_1',
      tier: 3,
      ratio: 0.5,
      tags: ['a', 1],
      nested: { ok: true, none: null }
    })
    // {"a":"…"} is 8 bytes around the text; é takes two.
    expect(checkMetadata({ a: 'x'.repeat(2040) })).toBeDefined()
    expect(() => checkMetadata({ a: 'x'.repeat(2041) })).toThrow(
      'metadata must take at most 2048 bytes as JSON, not 2049'
    )
    expect(() => checkMetadata({ a: 'é'.repeat(1021) })).toThrow('not 2050')
    for (const value of [null, [], ['a'], 'text', 5n, true]) {
      expect(() => checkMetadata(value), JSON.stringify(String(value))).toThrow('metadata must be a JSON object')
    }
  })

  it('refuse in metadata what JSON numbers or PostgreSQL would not keep as sent, naming where', () => {
    expect(checkMetadata({ big: 9007199254740991n })).toEqual({ big: 9007199254740991 })
    expect(() => checkMetadata({ big: 9007199254740992n })).toThrow(
      'metadata.big is an integer beyond ±9007199254740991'
    )
    expect(() => checkMetadata({ list: [-9007199254740992n] })).toThrow('metadata.list[0] is an integer beyond')
    expect(() => checkMetadata({ huge: Number.POSITIVE_INFINITY })).toThrow('metadata.huge is not a finite number')
    expect(() => checkMetadata({ a: { b: 'x\u0000y' } })).toThrow('metadata.a.b must not contain a NUL character')
    expect(() => checkMetadata({ a: '\uD800' })).toThrow(
      'metadata.a must not contain a NUL character or an unpaired surrogate'
    )
    expect(() => checkMetadata({ '\uDC00': 1 })).toThrow('metadata must not contain')
    expect(checkMetadata({ emoji: '😀' })).toEqual({ emoji: '😀' })
  })

  it('keep a __proto__ key in metadata as data, never as a prototype', () => {
    const parsed = JSON.parse('{"__proto__":{"polluted":true}}') as unknown
    const metadata = checkMetadata(parsed)!
    expect(Object.getPrototypeOf(metadata)).toBe(Object.prototype)
    expect(JSON.stringify(metadata)).toBe('{"__proto__":{"polluted":true}}')
  })

  it('record empty metadata in the audit trail as none', () => {
    expect(auditedMetadata({})).toBeNull()
    expect(auditedMetadata({ a: 1 })).toEqual({ a: 1 })
  })
})

describe('what the CLI prints', () => {
  it('escapes control and bidirectional characters and keeps the rest', () => {
    expect(printable('\u001b[2Jx\u202Ey\u0007 😀')).toBe('\\u{001b}[2Jx\\u{202e}y\\u{0007} 😀')
  })
})
