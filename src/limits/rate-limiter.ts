import { LRUCache } from 'lru-cache'
import type { Queryable } from '../db/statements.js'
import type { QuotaState } from '../repositories/rate-limits.js'
import { leaseSize, RequestRate } from './lease-policy.js'
import { QuotaCounter, type StatementObserver } from './quota-counter.js'
import {
  hourStart,
  MINUTE_MS,
  refusingWindow,
  sameWindows,
  windowStarts,
  windowStates,
  type Limits,
  type WindowStarts,
  type WindowState
} from './windows.js'

/** Subjects (accounts) kept in memory, least recently used first out. */
const MAX_SUBJECTS = 100_000

/** The limiter's way to Postgres: QuotaCounter, or a fake in unit tests. */
export type Counter = Pick<QuotaCounter, 'count' | 'tally' | 'reportUsage'>

export interface SubjectLimits extends Limits {
  /** Refusals past the first that lead to a ban; null: never banned. */
  banAfter: number | null
  banSeconds: number
}

/** What the limiter decided for one request, with the subject's windows as they stand after it. */
export type Decision =
  | { outcome: 'admitted'; windows: WindowState[] }
  | { outcome: 'rate_limited'; windows: WindowState[]; /** When a retry can succeed. */ retryAt: number }
  | {
      outcome: 'key_banned'
      windows: WindowState[]
      retryAt: number
      /** This request set the ban. */ newlyBanned: boolean
    }

interface SubjectState {
  /** The windows its counts and lease belong to. */
  windows: WindowStarts
  /** The limits its lease was counted under. */
  limits: Limits
  /** Units counted in the database for this instance and not yet used. */
  leaseLeft: number
  /** The windows' counts as the database last reported them, leases included. */
  minuteUsed: number
  dayUsed: number
  /** Units leased in an earlier minute of the day and never used, handed back with the next statement. */
  returned: number
  /** Each banned key's ban end: a ban is its key's, since an account's keys share the windows. */
  keyBans: Map<bigint, number> | undefined
  /** For subjects that are never banned: refused without asking until then. */
  exhaustedUntil: number
  /** The statement under way for this subject; requests that arrive meanwhile wait for it. */
  refill: Promise<void> | undefined
  rate: RequestRate
}

/**
 * Fixed, clock-aligned UTC minute and day windows, exact across instances: every unit admitted was
 * first counted by the one atomic statement in countRequests. To spare a round trip per request, an
 * instance counts a block ahead (a lease, sized by lease-policy.ts) and admits from it locally; a
 * lease belongs to the minute it was counted in and never crosses into the next.
 *
 * Database round trips per request: 0 while a lease covers it or a ban is known; otherwise a share
 * of one statement with the other subjects due by the time it goes (quota-counter.ts).
 */
export class RateLimiter {
  readonly #cached: LRUCache<string, SubjectState>
  /**
   * Subjects the cache let go while they held units or awaited a statement: kept until used again
   * (then back in the cache) or until they hold nothing, so eviction never loses a leased unit nor
   * starts a second statement for a subject whose first is under way.
   */
  readonly #holding = new Map<string, SubjectState>()
  readonly #counter: Counter

  /** `db` is where the counting statements go: connections of their own, so they never queue behind requests' queries. */
  constructor(
    db: Queryable,
    private readonly clock: () => number,
    options: { counter?: Counter; observe?: StatementObserver; maxSubjects?: number } = {}
  ) {
    this.#counter = options.counter ?? new QuotaCounter(db, options.observe)
    this.#cached = new LRUCache({
      max: options.maxSubjects ?? MAX_SUBJECTS,
      dispose: (state, subject, reason) => {
        if (reason === 'evict' && holdsSomething(state)) this.#holding.set(subject, state)
      }
    })
  }

  /** Subjects in memory: cached, and let go while holding units or a statement. */
  get subjects(): { cached: number; holding: number } {
    return { cached: this.#cached.size, holding: this.#holding.size }
  }

  /**
   * Decides one request of `subject` sent with the key `apiKeyId`, whose usage it counts in and whose
   * ban refuses it. No database round trip when a lease covers the request or a ban or a spent
   * window is known; otherwise after the statement under way for the subject, or with one of its own.
   */
  async consume(subject: string, limits: SubjectLimits, apiKeyId: bigint): Promise<Decision> {
    const state = this.#state(subject)
    let now = this.clock()
    state.rate.count(now)
    this.#takeLimits(state, limits)
    for (;;) {
      this.#enterWindows(state, now)
      const decision = this.#decideLocally(state, limits, apiKeyId, now)
      if (decision) return decision
      if (!state.refill) return this.#decideRemotely(subject, state, limits, apiKeyId, now)
      // Requests that arrive while a statement runs wait for it, then take from what it leased.
      await state.refill
      now = this.clock()
    }
  }

  /** Units this instance holds leased for the subject's current windows and has not used yet. */
  unusedLease(subject: string, now: number): number {
    const state = this.#peek(subject)
    return state && sameWindows(state.windows, windowStarts(now)) ? state.leaseLeft : 0
  }

  /**
   * The subject's counts in its current windows as this instance last learned them from the database,
   * leases included; undefined when it knows nothing of these windows.
   */
  lastCounted(subject: string, now: number): { minute: number; day: number } | undefined {
    const state = this.#peek(subject)
    if (!state || !sameWindows(state.windows, windowStarts(now))) return undefined
    return { minute: state.minuteUsed, day: state.dayUsed }
  }

  /** The end of the key's ban as this instance's counting statements last reported it; 0 when none is known. */
  knownBan(subject: string, apiKeyId: bigint): number {
    return this.#peek(subject)?.keyBans?.get(apiKeyId) ?? 0
  }

  /** Reports the requests decided without the database; run every few seconds and at shutdown. */
  reportUsage(): Promise<void> {
    // Units leased on an earlier day count for nothing now: a subject holding only those is let go.
    const { dayStart } = windowStarts(this.clock())
    for (const [subject, state] of this.#holding) {
      if (state.refill === undefined && state.windows.dayStart < dayStart) this.#holding.delete(subject)
    }
    return this.#counter.reportUsage()
  }

  #decideLocally(state: SubjectState, limits: SubjectLimits, apiKeyId: bigint, now: number) {
    const bannedUntil = state.keyBans?.get(apiKeyId) ?? 0
    if (bannedUntil > now) {
      this.#counter.tally(apiKeyId, hourStart(now), 'refused')
      return this.#banned(state, limits, bannedUntil, false)
    }
    if (state.leaseLeft > 0) {
      state.leaseLeft--
      this.#counter.tally(apiKeyId, hourStart(now), 'admitted')
      return this.#admitted(state, limits)
    }
    if (state.exhaustedUntil > now) return this.#refused(state, limits)
    return undefined
  }

  async #decideRemotely(
    subject: string,
    state: SubjectState,
    limits: SubjectLimits,
    apiKeyId: bigint,
    now: number
  ): Promise<Decision> {
    const windows = state.windows
    const returned = state.returned
    const want = leaseSize({
      requestsPerSecond: state.rate.perSecond(),
      msLeftInMinute: windows.minuteStart + MINUTE_MS - now,
      left: Math.min(limits.perMinute - state.minuteUsed, (limits.perDay ?? Infinity) - state.dayUsed)
    })
    // A statement that fails fails the requests waiting for it too, rather than each waiting out the
    // database timeout in turn; caught here so that a failure nobody waited for is not unhandled.
    let settle!: (failure?: unknown) => void
    state.refill = new Promise<void>((resolve, reject) => {
      settle = (failure) => (failure === undefined ? resolve() : reject(failure))
    })
    state.refill.catch(() => {})
    state.returned = 0
    try {
      const counted = await this.#counter.count({
        subject,
        apiKeyId,
        minuteStart: windows.minuteStart,
        dayStart: windows.dayStart,
        now,
        want,
        returned,
        ...limits
      })
      return this.#settle(state, limits, windows, counted, apiKeyId)
    } catch (error) {
      state.returned += returned
      settle(error)
      throw error
    } finally {
      state.refill = undefined
      settle()
      if (!holdsSomething(state)) this.#holding.delete(subject)
    }
  }

  /** Takes in what the statement counted for a request made in `windows`. */
  #settle(
    state: SubjectState,
    limits: SubjectLimits,
    windows: WindowStarts,
    counted: QuotaState,
    apiKeyId: bigint
  ): Decision {
    const current = sameWindows(state.windows, windows)
    const bannedUntil = counted.bannedUntil ?? 0
    if (bannedUntil > this.clock()) (state.keyBans ??= new Map()).set(apiKeyId, bannedUntil)
    else state.keyBans?.delete(apiKeyId)
    if (current) {
      // A row whose window is ahead of this instance's clock counts for the window this instance is in.
      state.minuteUsed = counted.minuteUsed
      state.dayUsed = counted.dayUsed
    }
    if (counted.granted > 0) {
      // The request takes one unit; the rest is a lease of the window it was counted in. If that
      // minute ended while the statement ran, the units go back to the day rather than into the next.
      const lease = counted.granted - 1
      if (current) state.leaseLeft += lease
      else if (state.windows.dayStart === windows.dayStart) state.returned += lease
      return this.#admitted(state, limits)
    }
    if (bannedUntil > this.clock()) return this.#banned(state, limits, bannedUntil, counted.newlyBanned)
    const refused = this.#refused(state, limits)
    if (limits.banAfter === null && current) state.exhaustedUntil = refused.retryAt
    return refused
  }

  /** A plan change hands the units leased under the old limits back, so none is admitted under the new ones. */
  #takeLimits(state: SubjectState, limits: Limits) {
    if (state.limits.perMinute === limits.perMinute && state.limits.perDay === limits.perDay) return
    state.limits = { perMinute: limits.perMinute, perDay: limits.perDay }
    state.returned += state.leaseLeft
    state.dayUsed -= state.leaseLeft
    state.leaseLeft = 0
    state.exhaustedUntil = 0
  }

  /** Moves the subject into the windows of `now`: units leased for an earlier minute are handed back. */
  #enterWindows(state: SubjectState, now: number) {
    // The same minute is the same day: the usual case allocates nothing.
    if (now >= state.windows.minuteStart && now < state.windows.minuteStart + MINUTE_MS) return
    const starts = windowStarts(now)
    const sameDay = state.windows.dayStart === starts.dayStart
    state.returned = sameDay ? state.returned + state.leaseLeft : 0
    state.dayUsed = sameDay ? state.dayUsed - state.leaseLeft : 0
    state.minuteUsed = 0
    state.leaseLeft = 0
    state.exhaustedUntil = 0
    state.windows = starts
  }

  #windowStates(state: SubjectState, limits: SubjectLimits): WindowState[] {
    // Units still leased here are counted in the database but not yet used.
    return windowStates(limits, state.windows, {
      minute: state.minuteUsed - state.leaseLeft,
      day: state.dayUsed - state.leaseLeft
    })
  }

  #admitted(state: SubjectState, limits: SubjectLimits): Decision {
    return { outcome: 'admitted', windows: this.#windowStates(state, limits) }
  }

  #refused(state: SubjectState, limits: SubjectLimits): Decision & { outcome: 'rate_limited' } {
    const windows = windowStates(limits, state.windows, { minute: state.minuteUsed, day: state.dayUsed })
    return { outcome: 'rate_limited', windows, retryAt: refusingWindow(windows).resetAt }
  }

  #banned(state: SubjectState, limits: SubjectLimits, bannedUntil: number, newlyBanned: boolean): Decision {
    const windows = windowStates(limits, state.windows, { minute: state.minuteUsed, day: state.dayUsed })
    return { outcome: 'key_banned', windows, retryAt: bannedUntil, newlyBanned }
  }

  /** The subject's state without making it recently used. */
  #peek(subject: string): SubjectState | undefined {
    return this.#cached.peek(subject) ?? this.#holding.get(subject)
  }

  #state(subject: string): SubjectState {
    let state = this.#cached.get(subject)
    if (state) return state
    state = this.#holding.get(subject)
    if (state) {
      this.#holding.delete(subject)
    } else {
      state = {
        windows: { minuteStart: 0, dayStart: 0 },
        limits: { perMinute: 0, perDay: null },
        leaseLeft: 0,
        minuteUsed: 0,
        dayUsed: 0,
        returned: 0,
        keyBans: undefined,
        exhaustedUntil: 0,
        refill: undefined,
        rate: new RequestRate()
      }
    }
    this.#cached.set(subject, state)
    return state
  }
}

/** Units counted for this instance and not yet used or handed back, or a statement under way. */
const holdsSomething = (state: SubjectState) => state.leaseLeft > 0 || state.returned > 0 || state.refill !== undefined
