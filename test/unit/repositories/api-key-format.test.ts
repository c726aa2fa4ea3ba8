import * as zlib from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { apiKeyChecksum, apiKeyFormat, newApiKeySecret } from '../../../src/repositories/api-keys.js'

/** The regular expression docs/keys.md publishes for secret scanners. */
const SCANNER = /(?<![0-9A-Za-z_])ask_[0-9A-Za-z]{8}_[0-9A-Za-z]{32}_[0-9A-Za-z]{6}(?![0-9A-Za-z_])/g
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** The checksum computed apart from the service: CRC-32 as written out in docs/keys.md. */
function referenceChecksum(body: string): string {
  let crc = 0xffffffff
  for (const byte of Buffer.from(body, 'ascii')) {
    crc ^= byte
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1
  }
  return base62((crc ^ 0xffffffff) >>> 0)
}

function base62(value: number): string {
  let out = ''
  for (let i = 0; i < 6; i++) {
    out = BASE62[value % 62]! + out
    value = Math.floor(value / 62)
  }
  return out
}

describe('the checksum of a key', () => {
  it('is the CRC-32 of everything before its last underscore, in 6 base62 digits', () => {
    expect(apiKeyChecksum('')).toBe('000000')
    // CRC-32 of "123456789" is 0xCBF43926, the check value of the IEEE polynomial.
    expect(apiKeyChecksum('123456789')).toBe(base62(0xcbf43926))
    expect(referenceChecksum('123456789')).toBe(base62(0xcbf43926))
    for (let i = 0; i < 200; i++) {
      const { key } = newApiKeySecret()
      const body = key.slice(0, -7)
      expect(key.slice(-6)).toBe(referenceChecksum(body))
      expect(apiKeyChecksum(body)).toBe(referenceChecksum(body))
    }
  })

  it('agrees with zlib where Node has it', () => {
    // node:zlib has crc32 from Node 22 on; the service runs on Node 20 too.
    const crc32 = (zlib as { crc32?: (data: string) => number }).crc32
    if (crc32 === undefined) return
    const { key } = newApiKeySecret()
    const body = key.slice(0, -7)
    expect(apiKeyChecksum(body)).toBe(base62(crc32(body)))
  })
})

describe('new keys', () => {
  it('read ask_<8>_<32>_<6>, the published regular expression finds them in text, and their prefix is the first 12 characters', () => {
    for (let i = 0; i < 100; i++) {
      const { key, prefix } = newApiKeySecret()
      expect(key).toMatch(/^ask_[0-9A-Za-z]{8}_[0-9A-Za-z]{32}_[0-9A-Za-z]{6}$/)
      expect(key.startsWith(`${prefix}_`)).toBe(true)
      expect(prefix).toHaveLength(12)
      expect(apiKeyFormat(key)).toBe('current')
      expect([...`token=${key}\n"${key}",x`.matchAll(SCANNER)].map((match) => match[0])).toEqual([key, key])
      expect(`x${key}`.match(SCANNER)).toBeNull()
    }
  })

  it('with any one character changed, or two swapped, fail the checksum', () => {
    const { key } = newApiKeySecret()
    let tried = 0
    for (let at = 4; at < key.length; at++) {
      if (key[at] === '_') continue
      for (const replacement of BASE62) {
        if (replacement === key[at]) continue
        const changed = key.slice(0, at) + replacement + key.slice(at + 1)
        expect(apiKeyFormat(changed), changed).toBeUndefined()
        tried++
      }
      const next = key[at + 1]
      if (next !== undefined && next !== '_' && next !== key[at]) {
        expect(apiKeyFormat(key.slice(0, at) + next + key[at] + key.slice(at + 2))).toBeUndefined()
      }
    }
    expect(tried).toBe(46 * 61)
  })
})

describe('the format of a token', () => {
  it('takes keys issued before checksums as legacy, and nothing else shaped otherwise', () => {
    const legacy = `ask_${'A'.repeat(8)}_${'b'.repeat(32)}`
    expect(apiKeyFormat(legacy)).toBe('legacy')
    const { key } = newApiKeySecret()
    for (const token of [
      '',
      'ask_',
      `${legacy}_`,
      `${legacy}x`,
      `${key}0`,
      key.slice(0, -1),
      `aso_${'A'.repeat(8)}_${'b'.repeat(32)}`,
      key.replace('ask_', 'ASK_'),
      `${key.slice(0, -6)}${'!'.repeat(6)}`
    ]) {
      expect(apiKeyFormat(token), token).toBeUndefined()
    }
  })
})
