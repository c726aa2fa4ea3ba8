// Fixed, clock-aligned UTC windows: pure arithmetic, no I/O.

export const MINUTE_MS = 60_000
const HOUR_MS = 3_600_000
export const DAY_MS = 86_400_000

/** Epoch milliseconds at which the UTC hour of `now` began: the unit of usage. */
export const hourStart = (now: number) => now - (now % HOUR_MS)

/** Epoch milliseconds at which the current UTC minute and UTC day began. */
export interface WindowStarts {
  minuteStart: number
  dayStart: number
}

export function windowStarts(now: number): WindowStarts {
  return { minuteStart: now - (now % MINUTE_MS), dayStart: now - (now % DAY_MS) }
}

export const sameWindows = (a: WindowStarts, b: WindowStarts) =>
  a.minuteStart === b.minuteStart && a.dayStart === b.dayStart

export interface Limits {
  perMinute: number
  /** null: the subject has only a minute window. */
  perDay: number | null
}

export interface WindowState {
  name: 'minute' | 'day'
  limit: number
  remaining: number
  /** Epoch milliseconds at which the window resets. */
  resetAt: number
  seconds: number
}

/** The windows of `limits` in `starts`, with `used` units counted in each. */
export function windowStates(
  limits: Limits,
  starts: WindowStarts,
  used: { minute: number; day: number }
): WindowState[] {
  const windows: WindowState[] = [
    {
      name: 'minute',
      limit: limits.perMinute,
      remaining: Math.max(0, limits.perMinute - used.minute),
      resetAt: starts.minuteStart + MINUTE_MS,
      seconds: MINUTE_MS / 1000
    }
  ]
  if (limits.perDay !== null) {
    windows.push({
      name: 'day',
      limit: limits.perDay,
      remaining: Math.max(0, limits.perDay - used.day),
      resetAt: starts.dayStart + DAY_MS,
      seconds: DAY_MS / 1000
    })
  }
  return windows
}

/** A subject's counts as stored (leases that instances hold included), each window with the instant it began. */
export interface StoredCounts {
  minuteStart: number
  minuteUsed: number
  dayStart: number
  dayUsed: number
}

/** Units used in each window of `starts` as stored: a stored window that began before the current one has been used 0 times in it. */
export function usedIn(starts: WindowStarts, stored: StoredCounts | undefined) {
  return {
    minute: stored && stored.minuteStart >= starts.minuteStart ? stored.minuteUsed : 0,
    day: stored && stored.dayStart >= starts.dayStart ? stored.dayUsed : 0
  }
}

/** A window as `GET /v1/rate_limit` and the admin API report it: its reset in whole Unix seconds. */
export function reportWindow(window: WindowState) {
  return {
    name: window.name,
    limit: window.limit,
    used: window.limit - window.remaining,
    remaining: window.remaining,
    reset: Math.ceil(window.resetAt / 1000)
  }
}

/** The window with the fewest requests left; a tie goes to the one that resets first. */
export function bindingWindow(windows: WindowState[]): WindowState {
  return windows.reduce((best, window) =>
    window.remaining < best.remaining || (window.remaining === best.remaining && window.resetAt < best.resetAt)
      ? window
      : best
  )
}

/** Among the spent windows, the one that resets last: no retry succeeds before it resets. */
export function refusingWindow(windows: WindowState[]): WindowState {
  const spent = windows.filter((window) => window.remaining === 0)
  return spent.length ? spent.reduce((a, b) => (b.resetAt > a.resetAt ? b : a)) : bindingWindow(windows)
}

/** Whole seconds from `now` until `at`, at least 1: the unit of Retry-After. */
export const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil((at - now) / 1000))
