import { describe, expect, it } from 'vitest'
import { printable } from '../../src/cli/common.js'
import { changedFields, checkExpiry, checkName, checkScopes } from '../../src/services/rules.js'

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

describe('what the CLI prints', () => {
  it('escapes control and bidirectional characters and keeps the rest', () => {
    expect(printable('\u001b[2Jx\u202Ey\u0007 😀')).toBe('\\u{001b}[2Jx\\u{202e}y\\u{0007} 😀')
  })
})
