import { describe, expect, it } from 'vitest'
import type { LimitWindow } from '../../../src/db/schema.js'
import { rateLimitHeaders } from '../../../src/limits/headers.js'
import type { Decision } from '../../../src/limits/rate-limiter.js'
import type { WindowState } from '../../../src/limits/windows.js'

const NOW = Date.UTC(2027, 0, 1, 12, 0, 15)
const MINUTE_END = Date.UTC(2027, 0, 1, 12, 1)
const HOUR_END = Date.UTC(2027, 0, 1, 13)
const DAY_END = Date.UTC(2027, 0, 2)
const MONTH_END = Date.UTC(2027, 1, 1)

const fixed = (name: LimitWindow, limit: number, remaining: number, resetAt: number): WindowState => ({
  name,
  algorithm: 'fixed',
  limit,
  remaining,
  resetAt
})
const minute = (limit: number, remaining: number) => fixed('minute', limit, remaining, MINUTE_END)
const day = (limit: number, remaining: number) => fixed('day', limit, remaining, DAY_END)

const admitted = (windows: WindowState[]): Decision => ({ outcome: 'admitted', windows, credits: null })
const refused = (
  outcome: 'rate_limited' | 'credits_exhausted' | 'key_banned',
  windows: WindowState[],
  retryAt: number | null
): Decision => ({ outcome, windows, credits: outcome === 'credits_exhausted' ? 0 : null, retryAt, newlyBanned: false })
const policyOf = (windows: WindowState[]) => rateLimitHeaders(admitted(windows), NOW)!['ratelimit-policy']

describe('rateLimitHeaders', () => {
  it('describes the window with the fewest units left for an admitted request', () => {
    expect(rateLimitHeaders(admitted([minute(60, 50), day(1000, 10)]), NOW)).toEqual({
      'x-ratelimit-limit': '1000',
      'x-ratelimit-remaining': '10',
      'x-ratelimit-reset': String(DAY_END / 1000),
      'ratelimit-policy': '"minute";q=60;w=60, "day";q=1000;w=86400',
      ratelimit: `"day";r=10;t=${(DAY_END - NOW) / 1000}`
    })
  })

  it('describes the spent window a retry waits for, with none left, reset when the retry can succeed', () => {
    const retryAt = MINUTE_END
    expect(rateLimitHeaders(refused('rate_limited', [minute(60, 0), day(1000, 930)], retryAt), NOW)).toEqual({
      'x-ratelimit-limit': '60',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(MINUTE_END / 1000),
      'ratelimit-policy': '"minute";q=60;w=60, "day";q=1000;w=86400',
      ratelimit: '"minute";r=0;t=45'
    })
  })

  it('takes the reset of a refusal from its retryAt, and from the window when it has none', () => {
    // A request of several units refused with a unit left: the window it waits for reads 0 left.
    const windows = [minute(60, 1), day(1000, 930)]
    const later = MINUTE_END + 60_000
    expect(rateLimitHeaders(refused('rate_limited', windows, later), NOW)).toMatchObject({
      'x-ratelimit-limit': '60',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(later / 1000),
      ratelimit: '"minute";r=0;t=105'
    })
    expect(rateLimitHeaders(refused('rate_limited', windows, null), NOW)).toMatchObject({
      'x-ratelimit-reset': String(MINUTE_END / 1000),
      ratelimit: '"minute";r=0;t=45'
    })
  })

  it('moves the reset of a banned key to the end of the ban, on the tightest window with none left', () => {
    const retryAt = NOW + 300_000
    expect(rateLimitHeaders(refused('key_banned', [minute(5, 2)], retryAt), NOW)).toEqual({
      'x-ratelimit-limit': '5',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(retryAt / 1000),
      'ratelimit-policy': '"minute";q=5;w=60',
      ratelimit: '"minute";r=0;t=300'
    })
  })

  it('gives spent credits without a refill the tightest window, none left, reset with that window', () => {
    expect(rateLimitHeaders(refused('credits_exhausted', [minute(60, 58), day(1000, 900)], null), NOW)).toEqual({
      'x-ratelimit-limit': '60',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(MINUTE_END / 1000),
      'ratelimit-policy': '"minute";q=60;w=60, "day";q=1000;w=86400',
      ratelimit: '"minute";r=0;t=45'
    })
    // Credits that refill at an instant: the reset is that instant.
    const refill = NOW + 7_200_000
    expect(rateLimitHeaders(refused('credits_exhausted', [minute(60, 58)], refill), NOW)).toMatchObject({
      'x-ratelimit-reset': String(refill / 1000),
      ratelimit: '"minute";r=0;t=7200'
    })
  })

  it('describes a bucket by when it is full again, rounded up to whole seconds', () => {
    const bucket: WindowState = { name: 'second', algorithm: 'bucket', limit: 10, remaining: 7, resetAt: NOW + 300 }
    expect(rateLimitHeaders(admitted([bucket, minute(600, 500)]), NOW)).toEqual({
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '7',
      'x-ratelimit-reset': String(Math.ceil((NOW + 300) / 1000)),
      'ratelimit-policy': '"second";q=10;w=1, "minute";q=600;w=60',
      ratelimit: '"second";r=7;t=1'
    })
  })

  it('lists every window of the account in its policy, shortest first, each with its length in seconds', () => {
    const windows = [
      fixed('second', 5, 5, NOW + 1_000),
      minute(100, 100),
      fixed('hour', 2_000, 2_000, HOUR_END),
      day(20_000, 20_000),
      fixed('month', 300_000, 300_000, MONTH_END)
    ]
    expect(policyOf(windows)).toBe(
      '"second";q=5;w=1, "minute";q=100;w=60, "hour";q=2000;w=3600, "day";q=20000;w=86400, "month";q=300000;w=2592000'
    )
  })

  it('gives no headers for an account without limits, whatever the outcome', () => {
    expect(rateLimitHeaders(admitted([]), NOW)).toBeUndefined()
    expect(rateLimitHeaders(refused('credits_exhausted', [], null), NOW)).toBeUndefined()
    expect(rateLimitHeaders(refused('key_banned', [], NOW + 60_000), NOW)).toBeUndefined()
  })

  it('tells plans apart whose shorter limits are the same', () => {
    expect(policyOf([minute(60, 0), day(100, 0)])).toBe('"minute";q=60;w=60, "day";q=100;w=86400')
    expect(policyOf([minute(60, 0), day(200, 0)])).toBe('"minute";q=60;w=60, "day";q=200;w=86400')
    expect(policyOf([minute(60, 0)])).toBe('"minute";q=60;w=60')
    // The same figure in another window is another plan.
    expect(policyOf([fixed('hour', 60, 0, HOUR_END)])).toBe('"hour";q=60;w=3600')
    expect(policyOf([minute(60, 0), fixed('hour', 100, 0, HOUR_END)])).toBe('"minute";q=60;w=60, "hour";q=100;w=3600')
  })

  it('still gives each plan its own policy after many plans', () => {
    for (let limit = 1; limit <= 1_100; limit++) {
      expect(policyOf([minute(limit, 0)])).toBe(`"minute";q=${limit};w=60`)
    }
    expect(policyOf([minute(1, 0)])).toBe('"minute";q=1;w=60')
  })
})

describe('shadow windows', () => {
  const withShadows = (windows: WindowState[], shadows: WindowState[]): Decision => ({
    outcome: 'admitted',
    windows,
    shadows,
    credits: null
  })

  it('go in headers of their own, the enforced fields unchanged', () => {
    const enforced = rateLimitHeaders(admitted([minute(10, 5)]), NOW)
    expect(rateLimitHeaders(withShadows([minute(10, 5)], [minute(3, 1), day(100, 40)]), NOW)).toEqual({
      ...enforced,
      'ratelimit-shadow-policy': '"minute";q=3;w=60, "day";q=100;w=86400',
      'ratelimit-shadow': '"minute";r=1;t=45'
    })
  })

  it('show a shadow window past its limit with none left', () => {
    const headers = rateLimitHeaders(withShadows([minute(10, 5)], [minute(3, -2)]), NOW)!
    expect(headers['ratelimit-shadow']).toBe('"minute";r=0;t=45')
    expect(headers['x-ratelimit-remaining']).toBe('5')
  })

  it('are sent alone when every limit is a shadow', () => {
    expect(rateLimitHeaders(withShadows([], [minute(3, 2)]), NOW)).toEqual({
      'ratelimit-shadow-policy': '"minute";q=3;w=60',
      'ratelimit-shadow': '"minute";r=2;t=45'
    })
  })

  it('are left out for an account without any', () => {
    expect(Object.keys(rateLimitHeaders(withShadows([minute(10, 5)], []), NOW)!)).not.toContain('ratelimit-shadow')
  })
})
