import { describe, expect, it, vi } from 'vitest'
import { ConfigError, loadConfig, trustedProxies } from '../../src/config.js'

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

  it('reads the environment it is given alone, process.env only when given none', () => {
    vi.stubEnv('DATABASE_URL', 'postgres://caller@127.0.0.1:5432/theirs')
    try {
      expect(loadConfig({}).DATABASE_URL).toBeUndefined()
      expect(loadConfig({ PORT: '8080' }).DATABASE_URL).toBeUndefined()
      expect(loadConfig().DATABASE_URL).toBe('postgres://caller@127.0.0.1:5432/theirs')
    } finally {
      vi.unstubAllEnvs()
    }
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
      IDEMPOTENCY_WAIT_MS: 1000,
      IDEMPOTENCY_CLEANUP_INTERVAL_MS: 600_000,
      OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: 1000,
      OVERLOAD_MAX_EVENT_LOOP_UTILIZATION: 0,
      OVERLOAD_MAX_HEAP_USED_BYTES: 0,
      MAX_HEADER_BYTES: 16_384
    })
    expect(loadConfig({ OVERLOAD_MAX_EVENT_LOOP_UTILIZATION: '0.95' }).OVERLOAD_MAX_EVENT_LOOP_UTILIZATION).toBe(0.95)
    for (const [name, value] of [
      ['IDEMPOTENCY_WAIT_MS', '0'],
      ['IDEMPOTENCY_CLEANUP_INTERVAL_MS', 'soon'],
      ['OVERLOAD_MAX_EVENT_LOOP_UTILIZATION', '1.5'],
      ['OVERLOAD_MAX_HEAP_USED_BYTES', '-1'],
      ['MAX_HEADER_BYTES', '100']
    ]) {
      expect(() => loadConfig({ [name!]: value! })).toThrowError(new RegExp(name!))
    }
  })

  it('takes TRUST_PROXY as trusted addresses, CIDR ranges and names', () => {
    expect(trustedProxies('false')).toEqual([])
    expect(trustedProxies('')).toEqual([])
    expect(trustedProxies('10.0.0.0/8, 127.0.0.1')).toEqual(['10.0.0.0/8', '127.0.0.1'])
    expect(trustedProxies('loopback,uniquelocal,2001:db8::/32')).toEqual(['loopback', 'uniquelocal', '2001:db8::/32'])
    expect(loadConfig({ TRUST_PROXY: '172.28.0.10' }).TRUST_PROXY).toBe('172.28.0.10')
  })

  it.each([
    ['true', /TRUST_PROXY=true would believe any client; list the load balancer's addresses or CIDR ranges/],
    ['TRUE', /TRUST_PROXY=true would believe any client/],
    ['1', /TRUST_PROXY=1 is a hop count, which believes whoever connects; list the load balancer's addresses/],
    ['2', /TRUST_PROXY=2 is a hop count/],
    ['10.0.0.1, nginx', /TRUST_PROXY has 'nginx', which is not an IP address, a CIDR range or one of loopback/],
    ['10.0.0.0/33', /TRUST_PROXY has '10.0.0.0\/33'/],
    ['0.0.0.0/0', /TRUST_PROXY has '0.0.0.0\/0'/],
    ['10.0.0.1,', /TRUST_PROXY has ''/]
  ])('refuses TRUST_PROXY=%s at start-up, saying what to set instead', (value, message) => {
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrowError(ConfigError)
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrowError(message)
  })
})
