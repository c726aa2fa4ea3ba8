import type { Decision } from './rate-limiter.js'
import { bindingWindow, refusingWindow, secondsUntil, type WindowState } from './windows.js'

export type RateLimitHeaders = Record<
  'x-ratelimit-limit' | 'x-ratelimit-remaining' | 'x-ratelimit-reset' | 'ratelimit-policy' | 'ratelimit',
  string
>

const policies = new Map<string, string>()
const MAX_POLICIES = 1_000

/**
 * `"minute";q=60;w=60, "day";q=1000;w=86400`: every window of the subject. A plan's text is the same
 * on each of its responses, so the texts of recent limits are kept, found by their limits.
 */
function rateLimitPolicy(windows: WindowState[]): string {
  // Windows are the minute, then the day if there is one: their limits tell the text apart.
  const key = windows.length === 1 ? `${windows[0]!.limit}` : `${windows[0]!.limit}/${windows[1]!.limit}`
  let policy = policies.get(key)
  if (policy === undefined) {
    policy = windows.map((window) => `"${window.name}";q=${window.limit};w=${window.seconds}`).join(', ')
    if (policies.size >= MAX_POLICIES) policies.clear()
    policies.set(key, policy)
  }
  return policy
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
