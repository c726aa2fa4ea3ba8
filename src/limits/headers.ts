import type { Decision } from './rate-limiter.js'
import { bindingWindow, refusingWindow, secondsUntil, WINDOW_SECONDS, type WindowState } from './windows.js'

type EnforcedHeaders = Record<
  'x-ratelimit-limit' | 'x-ratelimit-remaining' | 'x-ratelimit-reset' | 'ratelimit-policy' | 'ratelimit',
  string
>

/** The enforced windows' fields, and the shadow windows' beside them when the account has any. */
export type RateLimitHeaders = Partial<EnforcedHeaders> & {
  'ratelimit-shadow-policy'?: string
  'ratelimit-shadow'?: string
}

const policies = new Map<string, string>()
const MAX_POLICIES = 1_000

/**
 * `"minute";q=60;w=60, "day";q=1000;w=86400`: every limit of the account, shortest window first. A
 * plan's text is the same on each of its responses, so the texts of recent limits are kept.
 */
function rateLimitPolicy(windows: readonly WindowState[]): string {
  const key = windows
    .map((window) => `${window.name}${window.algorithm === 'bucket' ? '~' : ':'}${window.limit}`)
    .join()
  let policy = policies.get(key)
  if (policy === undefined) {
    policy = windows.map((window) => `"${window.name}";q=${window.limit};w=${WINDOW_SECONDS[window.name]}`).join(', ')
    if (policies.size >= MAX_POLICIES) policies.clear()
    policies.set(key, policy)
  }
  return policy
}

/**
 * X-RateLimit-* and the IETF RateLimit field describe one window: for an admitted request the one
 * with the fewest units left; for a refusal the window a retry must wait for; for a banned key or
 * spent credits the tightest window's figures with the reset moved to when a retry can succeed.
 * `now` is the database's clock as this instance reads it.
 */
export function rateLimitHeaders(decision: Decision, now: number): RateLimitHeaders | undefined {
  const enforced = enforcedHeaders(decision, now)
  const { shadows } = decision
  if (shadows === undefined || shadows.length === 0) return enforced
  return { ...enforced, ...shadowHeaders(shadows, now) }
}

/**
 * RateLimit-Shadow-Policy and RateLimit-Shadow: the shadow windows in the syntax of RateLimit-Policy
 * and RateLimit, the second for the one with the fewest units left. A shadow window past its limit
 * shows 0 left.
 */
function shadowHeaders(shadows: readonly WindowState[], now: number): RateLimitHeaders {
  const window = bindingWindow(shadows)
  return {
    'ratelimit-shadow-policy': rateLimitPolicy(shadows),
    'ratelimit-shadow': `"${window.name}";r=${Math.max(0, window.remaining)};t=${secondsUntil(window.resetAt, now)}`
  }
}

function enforcedHeaders(decision: Decision, now: number): EnforcedHeaders | undefined {
  const { windows } = decision
  if (windows.length === 0) return undefined
  let window: WindowState
  let resetAt: number
  switch (decision.outcome) {
    case 'admitted':
      window = bindingWindow(windows)
      resetAt = window.resetAt
      break
    case 'rate_limited':
      window = { ...refusingWindow(windows), remaining: 0 }
      resetAt = decision.retryAt ?? window.resetAt
      break
    case 'credits_exhausted':
    case 'key_banned':
      window = { ...bindingWindow(windows), remaining: 0 }
      resetAt = decision.retryAt ?? window.resetAt
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
