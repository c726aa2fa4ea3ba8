import type { Decision } from './rate-limiter.js'
import { bindingWindow, refusingWindow, secondsUntil, type WindowState } from './windows.js'

export type RateLimitHeaders = Record<
  'x-ratelimit-limit' | 'x-ratelimit-remaining' | 'x-ratelimit-reset' | 'ratelimit-policy' | 'ratelimit',
  string
>

/** `"minute";q=60;w=60, "day";q=1000;w=86400`: every window of the subject. */
function rateLimitPolicy(windows: WindowState[]): string {
  return windows.map((window) => `"${window.name}";q=${window.limit};w=${window.seconds}`).join(', ')
}

/**
 * X-RateLimit-* and the IETF RateLimit field describe one window: for an admitted request the one
 * with the fewest requests left; for a refusal the spent window a retry must wait for; for a banned
 * key that window's figures with the reset moved to the end of the ban.
 */
export function rateLimitHeaders(decision: Decision, now: number): RateLimitHeaders {
  const { windows } = decision
  let window: WindowState
  let resetAt: number
  switch (decision.outcome) {
    case 'admitted':
      window = bindingWindow(windows)
      resetAt = window.resetAt
      break
    case 'rate_limited':
      window = { ...refusingWindow(windows), remaining: 0 }
      resetAt = window.resetAt
      break
    case 'key_banned':
      window = { ...bindingWindow(windows), remaining: 0 }
      resetAt = decision.retryAt
      break
  }
  return {
    'x-ratelimit-limit': String(window.limit),
    'x-ratelimit-remaining': String(window.remaining),
    'x-ratelimit-reset': String(Math.ceil(resetAt / 1000)),
    'ratelimit-policy': rateLimitPolicy(windows),
    ratelimit: `"${window.name}";r=${window.remaining};t=${secondsUntil(resetAt, now)}`
  }
}
