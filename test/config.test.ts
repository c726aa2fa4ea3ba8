import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig, trustProxySetting } from '../src/config.js'

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      HOST: '127.0.0.1',
      PORT: 3000,
      LOG_LEVEL: 'info',
      PUBLIC_BASE_URL: 'http://127.0.0.1:3000/v1',
      STAGING_BASE_URL: 'http://127.0.0.1:3000/v1',
      SUNSET_DATE: '2030-12-05T00:00:00Z'
    })
    expect(config.DATABASE_URL).toBeUndefined()
  })

  it('reads typed values', () => {
    const config = loadConfig({ PORT: '8080', HOST: '0.0.0.0', STAGING_BASE_URL: 'https://staging.example.com/v1' })
    expect(config.PORT).toBe(8080)
    expect(config.PUBLIC_BASE_URL).toBe('http://127.0.0.1:8080/v1')
    expect(config.STAGING_BASE_URL).toBe('https://staging.example.com/v1')
  })

  it('names the variable in the error', () => {
    expect(() => loadConfig({ PORT: 'x' })).toThrowError(ConfigError)
    expect(() => loadConfig({ PORT: 'x' })).toThrowError(/PORT/)
    expect(() => loadConfig({ SUNSET_DATE: 'tomorrow' })).toThrowError(/SUNSET_DATE/)
  })

  it('has the reliability defaults and refuses bad values by name', () => {
    expect(loadConfig({})).toMatchObject({
      IDEMPOTENCY_CLAIM_MS: 10_000,
      IDEMPOTENCY_CLEANUP_INTERVAL_MS: 600_000,
      OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: 1000,
      OVERLOAD_MAX_EVENT_LOOP_UTILIZATION: 0,
      OVERLOAD_MAX_HEAP_USED_BYTES: 0,
      MAX_HEADER_BYTES: 16_384
    })
    expect(loadConfig({ OVERLOAD_MAX_EVENT_LOOP_UTILIZATION: '0.95' }).OVERLOAD_MAX_EVENT_LOOP_UTILIZATION).toBe(0.95)
    for (const [name, value] of [
      ['IDEMPOTENCY_CLAIM_MS', '10'],
      ['IDEMPOTENCY_CLEANUP_INTERVAL_MS', 'soon'],
      ['OVERLOAD_MAX_EVENT_LOOP_UTILIZATION', '1.5'],
      ['OVERLOAD_MAX_HEAP_USED_BYTES', '-1'],
      ['MAX_HEADER_BYTES', '100']
    ]) {
      expect(() => loadConfig({ [name!]: value! })).toThrowError(new RegExp(name!))
    }
  })

  it('turns TRUST_PROXY into the trustProxy option', () => {
    expect(trustProxySetting('false')).toBe(false)
    expect(trustProxySetting('true')).toBe(true)
    expect(trustProxySetting('10.0.0.0/8, 127.0.0.1')).toEqual(['10.0.0.0/8', '127.0.0.1'])
    const hops = trustProxySetting('1') as (address: string, hop: number) => boolean
    expect([hops('a', 0), hops('a', 1)]).toEqual([true, false])
  })
})
