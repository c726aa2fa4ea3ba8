import type { DatabaseHandle } from '../db/connect.js'
import { consumeQuota, deleteExpiredCounters, type QuotaState } from '../repositories/rate-limits.js'

const MINUTE_MS = 60_000
const DAY_MS = 86_400_000
// A lease covers about this many seconds of a subject's recent traffic on this instance...
const LEASE_SECONDS = 5
// ...and never more than this share of what the windows have left, nor this many units.
const LEASE_SHARE = 1 / 32
const LEASE_MAX = 1_000
const MAX_SUBJECTS = 100_000

export interface SubjectLimits {
  perMinute: number
  /** null: the subject has only a minute window. */
  perDay: number | null
  /** null: never banned. */
  banAfter: number | null
  banSeconds: number
}

export interface WindowState {
  name: 'minute' | 'day'
  limit: number
  remaining: number
  /** Epoch milliseconds at which the window resets. */
  resetAt: number
  seconds: number
}

export type Decision =
  | { allowed: true; windows: WindowState[]; headers: Record<string, string> }
  | {
      allowed: false
      reason: 'rate_limited' | 'key_banned'
      retryAfterSeconds: number
      /** This request's refusal is the one that set the ban. */
      newlyBanned?: boolean
      windows: WindowState[]
      headers: Record<string, string>
    }

interface Subject {
  minuteStart: number
  dayStart: number
  /** Units counted in the database for this instance and not yet used. */
  leaseLeft: number
  /** Units of a lease whose minute ended unused, to hand back to today's count. */
  unusedToday: number
  /** The windows' counts as the database last reported them, leases included. */
  minuteUsed: number
  dayUsed: number
  /** For subjects that are never banned: refused without asking until then. */
  exhaustedUntil: number
  bannedUntil: number
  refill: Promise<unknown> | undefined
  /** Requests here in the current and the previous second. */
  rateSecond: number
  rateCount: number
  ratePrevious: number
}

const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil((at - now) / 1000))

/** The window with the fewest requests left; a tie goes to the one that resets first. */
export function bindingWindow(windows: WindowState[]): WindowState {
  return windows.reduce((best, window) =>
    window.remaining < best.remaining || (window.remaining === best.remaining && window.resetAt < best.resetAt)
      ? window
      : best
  )
}

/** X-RateLimit-* for the binding window, and the IETF RateLimit-Policy and RateLimit fields. */
export function rateLimitHeaders(
  windows: WindowState[],
  binding: WindowState,
  now: number,
  resetAt = binding.resetAt,
  policy = rateLimitPolicy(windows)
) {
  const remaining = resetAt === binding.resetAt ? binding.remaining : 0
  return {
    'x-ratelimit-limit': String(binding.limit),
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-reset': String(Math.ceil(resetAt / 1000)),
    'ratelimit-policy': policy,
    ratelimit: `"${binding.name}";r=${remaining};t=${secondsUntil(resetAt, now)}`
  }
}

function rateLimitPolicy(windows: WindowState[]): string {
  return windows.map((window) => `"${window.name}";q=${window.limit};w=${window.seconds}`).join(', ')
}

/**
 * Fixed, clock-aligned UTC minute and day windows, exact across instances: every unit admitted was
 * first counted by the one atomic statement in consumeQuota. To spare a round trip per request, an
 * instance may count a small block ahead (a lease) and admit from it locally. The block is five
 * seconds of the subject's recent traffic here, and at most 1/32 of what its windows have left, so a
 * lease is 1 for a slow or nearly spent subject. Units of a lease left unused when its
 * minute ends are handed back to the day window with the next statement.
 */
export class RateLimiter {
  readonly #subjects = new Map<string, Subject>()
  // RateLimit-Policy depends on the limits alone; callers pass the same limits object for a subject
  // from request to request (a new object, after a plan change, gets its own entry).
  readonly #policies = new WeakMap<SubjectLimits, string>()

  constructor(
    private readonly database: Pick<DatabaseHandle, 'db' | 'pool'>,
    private readonly clock: () => number
  ) {}

  /**
   * Decides one request: at once, with 0 round trips, when a lease covers it or a ban or an
   * exhausted window is known; otherwise through the database, 1 round trip.
   */
  consume(subjectKey: string, limits: SubjectLimits): Decision | Promise<Decision> {
    const subject = this.#subject(subjectKey)
    const now = this.clock()
    this.#countRate(subject, now)
    return this.#decideLocally(subject, limits, now) ?? this.#consumeRemotely(subjectKey, subject, limits)
  }

  /** The decision this instance can make without the database, if any. */
  #decideLocally(subject: Subject, limits: SubjectLimits, now: number): Decision | undefined {
    if (subject.bannedUntil > now) return this.#banned(subject, limits, now)
    const minuteStart = now - (now % MINUTE_MS)
    const dayStart = now - (now % DAY_MS)
    if (subject.minuteStart !== minuteStart || subject.dayStart !== dayStart) {
      const unusedToday = subject.dayStart === dayStart ? subject.unusedToday + subject.leaseLeft : 0
      Object.assign(subject, { minuteStart, dayStart, leaseLeft: 0, unusedToday, minuteUsed: 0, dayUsed: 0, exhaustedUntil: 0 })
    }
    if (subject.leaseLeft > 0) {
      subject.leaseLeft--
      return this.#admitted(subject, limits, now)
    }
    if (subject.exhaustedUntil > now) return this.#refused(subject, limits, now)
    return undefined
  }

  async #consumeRemotely(subjectKey: string, subject: Subject, limits: SubjectLimits): Promise<Decision> {
    for (;;) {
      // Requests that arrive while a refill runs wait for it, then take from what it leased.
      const pending = subject.refill
      if (pending) {
        await pending.catch(() => {})
        const decision = this.#decideLocally(subject, limits, this.clock())
        if (decision) return decision
        continue
      }
      const now = this.clock()
      const refill = this.#refill(subjectKey, subject, limits, now)
      subject.refill = refill
      try {
        const state = await refill
        if (state.granted > 0) {
          subject.leaseLeft = state.granted - 1
          return this.#admitted(subject, limits, now)
        }
        if (subject.bannedUntil > now) return this.#banned(subject, limits, now, state.newlyBanned)
        return this.#refused(subject, limits, now)
      } finally {
        subject.refill = undefined
      }
    }
  }

  /** Deletes counters of past days; run now and then by every instance. */
  async deleteExpired(): Promise<number> {
    const now = this.clock()
    return deleteExpiredCounters(this.database.db, new Date(now), new Date(now - (now % DAY_MS)))
  }

  async #refill(key: string, subject: Subject, limits: SubjectLimits, now: number): Promise<QuotaState> {
    const state = await consumeQuota(this.database.pool, {
      subject: key,
      minuteStart: new Date(subject.minuteStart),
      dayStart: new Date(subject.dayStart),
      now: new Date(now),
      want: this.#leaseSize(subject, limits, now),
      returned: subject.unusedToday,
      perMinute: limits.perMinute,
      perDay: limits.perDay,
      banAfter: limits.banAfter,
      banSeconds: limits.banSeconds
    })
    subject.unusedToday = 0
    // A row whose window is ahead of this instance's clock counts for the window this instance is in.
    subject.minuteUsed = state.minuteUsed
    subject.dayUsed = state.dayUsed
    subject.bannedUntil = state.bannedUntil?.getTime() ?? 0
    if (state.granted === 0 && limits.banAfter === null) {
      subject.exhaustedUntil = this.#refusingWindow(this.#windows(subject, limits, 0)).resetAt
    }
    return state
  }

  #leaseSize(subject: Subject, limits: SubjectLimits, now: number): number {
    const rate = Math.max(subject.rateCount, subject.ratePrevious)
    const msLeftInMinute = subject.minuteStart + MINUTE_MS - now
    const left = Math.min(
      limits.perMinute - subject.minuteUsed,
      limits.perDay === null ? Infinity : limits.perDay - subject.dayUsed
    )
    const size = Math.min(
      Math.ceil(rate * Math.min(LEASE_SECONDS, msLeftInMinute / 1000)),
      Math.floor(left * LEASE_SHARE),
      LEASE_MAX
    )
    return Math.max(1, size)
  }

  #countRate(subject: Subject, now: number) {
    const second = Math.floor(now / 1000)
    if (second !== subject.rateSecond) {
      subject.ratePrevious = second === subject.rateSecond + 1 ? subject.rateCount : 0
      subject.rateSecond = second
      subject.rateCount = 0
    }
    subject.rateCount++
  }

  #windows(subject: Subject, limits: SubjectLimits, usedOffset: number): WindowState[] {
    const windows: WindowState[] = [
      {
        name: 'minute',
        limit: limits.perMinute,
        remaining: Math.max(0, limits.perMinute - subject.minuteUsed + usedOffset),
        resetAt: subject.minuteStart + MINUTE_MS,
        seconds: 60
      }
    ]
    if (limits.perDay !== null) {
      windows.push({
        name: 'day',
        limit: limits.perDay,
        remaining: Math.max(0, limits.perDay - subject.dayUsed + usedOffset),
        resetAt: subject.dayStart + DAY_MS,
        seconds: 86_400
      })
    }
    return windows
  }

  #admitted(subject: Subject, limits: SubjectLimits, now: number): Decision {
    // Units still leased here are counted in the database but not yet used.
    const windows = this.#windows(subject, limits, subject.leaseLeft)
    return { allowed: true, windows, headers: rateLimitHeaders(windows, bindingWindow(windows), now, undefined, this.#policy(limits, windows)) }
  }

  // Among the windows with nothing left, the one that resets last decides when a retry can succeed.
  #refusingWindow(windows: WindowState[]): WindowState {
    const spent = windows.filter((window) => window.remaining === 0)
    return spent.length ? spent.reduce((a, b) => (b.resetAt > a.resetAt ? b : a)) : bindingWindow(windows)
  }

  #refused(subject: Subject, limits: SubjectLimits, now: number): Decision {
    const windows = this.#windows(subject, limits, 0)
    const binding = this.#refusingWindow(windows)
    return {
      allowed: false,
      reason: 'rate_limited',
      retryAfterSeconds: secondsUntil(binding.resetAt, now),
      windows,
      headers: rateLimitHeaders(windows, { ...binding, remaining: 0 }, now, undefined, this.#policy(limits, windows))
    }
  }

  #banned(subject: Subject, limits: SubjectLimits, now: number, newlyBanned = false): Decision {
    const windows = this.#windows(subject, limits, 0)
    return {
      allowed: false,
      reason: 'key_banned',
      newlyBanned,
      retryAfterSeconds: secondsUntil(subject.bannedUntil, now),
      windows,
      headers: rateLimitHeaders(windows, { ...bindingWindow(windows), remaining: 0 }, now, subject.bannedUntil, this.#policy(limits, windows))
    }
  }

  #policy(limits: SubjectLimits, windows: WindowState[]): string {
    let policy = this.#policies.get(limits)
    if (policy === undefined) {
      policy = rateLimitPolicy(windows)
      this.#policies.set(limits, policy)
    }
    return policy
  }

  #subject(key: string): Subject {
    let subject = this.#subjects.get(key)
    if (!subject) {
      if (this.#subjects.size >= MAX_SUBJECTS) this.#subjects.delete(this.#subjects.keys().next().value!)
      subject = {
        minuteStart: 0,
        dayStart: 0,
        leaseLeft: 0,
        unusedToday: 0,
        minuteUsed: 0,
        dayUsed: 0,
        exhaustedUntil: 0,
        bannedUntil: 0,
        refill: undefined,
        rateSecond: 0,
        rateCount: 0,
        ratePrevious: 0
      }
      this.#subjects.set(key, subject)
    }
    return subject
  }
}
