import { describe, expect, it } from 'vitest'
import { rateLimitHeaders } from '../../../src/limits/headers.js'
import { windowStates } from '../../../src/limits/windows.js'

const NOW = Date.UTC(2027, 0, 1, 12, 0, 15)
const starts = { minuteStart: Date.UTC(2027, 0, 1, 12), dayStart: Date.UTC(2027, 0, 1) }
const MINUTE_END = Date.UTC(2027, 0, 1, 12, 1) / 1000
const DAY_END = Date.UTC(2027, 0, 2) / 1000

describe('rateLimitHeaders', () => {
  it('describes the window with the fewest requests left for an admitted request', () => {
    const windows = windowStates({ perMinute: 60, perDay: 1000 }, starts, { minute: 10, day: 990 })
    expect(rateLimitHeaders({ outcome: 'admitted', windows }, NOW)).toEqual({
      'x-ratelimit-limit': '1000',
      'x-ratelimit-remaining': '10',
      'x-ratelimit-reset': String(DAY_END),
      'ratelimit-policy': '"minute";q=60;w=60, "day";q=1000;w=86400',
      ratelimit: `"day";r=10;t=${DAY_END - NOW / 1000}`
    })
  })

  it('describes the spent window a retry waits for, with none left', () => {
    const windows = windowStates({ perMinute: 60, perDay: 1000 }, starts, { minute: 60, day: 70 })
    const retryAt = Date.UTC(2027, 0, 1, 12, 1)
    expect(rateLimitHeaders({ outcome: 'rate_limited', windows, retryAt }, NOW)).toEqual({
      'x-ratelimit-limit': '60',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(MINUTE_END),
      'ratelimit-policy': '"minute";q=60;w=60, "day";q=1000;w=86400',
      ratelimit: '"minute";r=0;t=45'
    })
  })

  it('moves the reset of a banned key to the end of the ban', () => {
    const windows = windowStates({ perMinute: 5, perDay: null }, starts, { minute: 2, day: 2 })
    const retryAt = NOW + 300_000
    expect(rateLimitHeaders({ outcome: 'key_banned', windows, retryAt, newlyBanned: true }, NOW)).toEqual({
      'x-ratelimit-limit': '5',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(retryAt / 1000),
      'ratelimit-policy': '"minute";q=5;w=60',
      ratelimit: '"minute";r=0;t=300'
    })
  })

  it('tells plans apart whose minute limits are the same', () => {
    const small = windowStates({ perMinute: 60, perDay: 100 }, starts, { minute: 0, day: 0 })
    const large = windowStates({ perMinute: 60, perDay: 200 }, starts, { minute: 0, day: 0 })
    const minuteOnly = windowStates({ perMinute: 60, perDay: null }, starts, { minute: 0, day: 0 })
    expect(rateLimitHeaders({ outcome: 'admitted', windows: small }, NOW)['ratelimit-policy']).toContain('q=100;')
    expect(rateLimitHeaders({ outcome: 'admitted', windows: large }, NOW)['ratelimit-policy']).toContain('q=200;')
    expect(rateLimitHeaders({ outcome: 'admitted', windows: minuteOnly }, NOW)['ratelimit-policy']).toBe(
      '"minute";q=60;w=60'
    )
  })

  it('still gives each plan its own policy after many plans', () => {
    for (let limit = 1; limit <= 1_100; limit++) {
      const windows = windowStates({ perMinute: limit, perDay: null }, starts, { minute: 0, day: 0 })
      expect(rateLimitHeaders({ outcome: 'admitted', windows }, NOW)['ratelimit-policy']).toBe(
        `"minute";q=${limit};w=60`
      )
    }
  })
})
