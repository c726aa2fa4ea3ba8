// A limit's windows as the counting statement reports them: pure arithmetic, no I/O.

import type { LimitAlgorithm, LimitWindow } from '../db/schema.js'

const HOUR_MS = 3_600_000

/** Epoch milliseconds at which the UTC hour of `now` began: the unit of usage. */
export const hourStart = (now: number) => now - (now % HOUR_MS)

/** Seconds a window lasts, as the RateLimit-Policy field names it; a month is taken as 30 days. */
export const WINDOW_SECONDS: Record<LimitWindow, number> = {
  second: 1,
  minute: 60,
  hour: 3_600,
  day: 86_400,
  month: 2_592_000
}

/** One limit of an account at an instant, as the database counted it (leases included). */
export interface WindowState {
  name: LimitWindow
  algorithm: LimitAlgorithm
  limit: number
  remaining: number
  /** Epoch milliseconds (the database's clock) at which a fixed window resets, or a bucket is full again. */
  resetAt: number
}

/**
 * A window as `GET /v1/rate_limit` and the admin API report it: its reset in whole Unix seconds. A
 * shadow window past its limit (below 0 of remaining) shows what it counted and 0 left.
 */
export function reportWindow(window: WindowState, shadow: boolean) {
  return {
    name: window.name,
    algorithm: window.algorithm,
    shadow,
    limit: window.limit,
    used: window.limit - window.remaining,
    remaining: Math.max(0, window.remaining),
    reset: Math.ceil(window.resetAt / 1000)
  }
}

/** The enforced windows then the shadow ones, each shortest first, as reportWindow reports them. */
export const reportWindows = (windows: readonly WindowState[], shadows: readonly WindowState[] = []) => [
  ...windows.map((window) => reportWindow(window, false)),
  ...shadows.map((window) => reportWindow(window, true))
]

/** The window with the fewest units left; a tie goes to the one that resets first. */
export function bindingWindow(windows: readonly WindowState[]): WindowState {
  return windows.reduce((best, window) =>
    window.remaining < best.remaining || (window.remaining === best.remaining && window.resetAt < best.resetAt)
      ? window
      : best
  )
}

/** Among the windows without room for `cost`, the one that resets last: no retry succeeds before it resets. */
export function refusingWindow(windows: readonly WindowState[], cost = 1): WindowState {
  const short = windows.filter((window) => window.remaining < Math.max(1, cost))
  return short.length ? short.reduce((a, b) => (b.resetAt > a.resetAt ? b : a)) : bindingWindow(windows)
}

/** The windows with `used` more units taken from each (a lease's units used locally). */
export const lessRemaining = (windows: readonly WindowState[], used: number): WindowState[] =>
  used === 0 ? [...windows] : windows.map((window) => ({ ...window, remaining: Math.max(0, window.remaining - used) }))

/** Whole seconds from `now` until `at`, at least 1: the unit of Retry-After. */
export const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil((at - now) / 1000))
