import type { Counter } from '../../../src/limits/rate-limiter.js'
import type { LimitWindow } from '../../../src/db/schema.js'
import type { QuotaRequest, QuotaState, UnitReturn } from '../../../src/repositories/rate-limits.js'

const WINDOW_MS: Partial<Record<LimitWindow, number>> = {
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000
}

interface Pending {
  request: QuotaRequest
  resolve: (state: QuotaState) => void
  reject: (error: unknown) => void
}

/**
 * The counting statement in memory, on the clock the test gives it (the database's): fixed windows
 * that grant what they have left, as count_units does for them, with the bans the test sets. With
 * `hold`, statements wait until the test releases or fails them; with `holdHandBacks`, hand-backs.
 */
export class FakeCounter implements Counter {
  readonly requests: QuotaRequest[] = []
  readonly tallied: { apiKeyId: bigint; hourStart: number; outcome: 'admitted' | 'refused'; units: number }[] = []
  /** Each account's limits; accounts not named have 5 a minute and 100 a day. */
  readonly limits = new Map<bigint, { window: LimitWindow; limit: number }[]>()
  /** Units used per account and window start. */
  readonly used = new Map<string, number>()
  readonly bans = new Map<bigint, number>()
  readonly pending: Pending[] = []
  hold = false
  reports = 0
  /** What each hand-back carried, in turn. */
  readonly handedBack: UnitReturn[][] = []
  readonly pendingHandBacks: { settle: () => void; reject: (error: unknown) => void }[] = []
  holdHandBacks = false

  constructor(private readonly now: () => number) {}

  count(request: QuotaRequest): Promise<QuotaState> {
    this.requests.push(request)
    return new Promise((resolve, reject) => {
      if (this.hold) this.pending.push({ request, resolve, reject })
      else resolve(this.#decide(request))
    })
  }

  tally(apiKeyId: bigint, hourStart: number, outcome: 'admitted' | 'refused', units = 0): void {
    this.tallied.push({ apiKeyId, hourStart, outcome, units })
  }

  /** Keys whose bans were confirmed, in turn. */
  readonly confirmed: bigint[] = []

  async confirmBan(apiKeyId: bigint): Promise<number | undefined> {
    this.confirmed.push(apiKeyId)
    const until = this.bans.get(apiKeyId)
    return until !== undefined && until > this.now() ? until : undefined
  }

  async reportUsage(): Promise<void> {
    this.reports++
  }

  /** Takes the units off the windows that hold the instant they were counted at, as hand_back_units does. */
  handBack(returns: readonly UnitReturn[]): Promise<void> {
    this.handedBack.push([...returns])
    return new Promise((resolve, reject) => {
      const settle = () => {
        for (const { accountId, units, countedAt } of returns) this.#giveBack(accountId, units, countedAt)
        resolve()
      }
      if (this.holdHandBacks) this.pendingHandBacks.push({ settle, reject })
      else settle()
    })
  }

  /** Answers every held statement as the database would. */
  release(): void {
    for (const { request, resolve } of this.pending.splice(0)) resolve(this.#decide(request))
  }

  fail(error: Error): void {
    for (const { reject } of this.pending.splice(0)) reject(error)
  }

  /** Answers every held hand-back, or fails it with `error`. */
  settleHandBacks(error?: Error): void {
    for (const { settle, reject } of this.pendingHandBacks.splice(0)) {
      if (error) reject(error)
      else settle()
    }
  }

  /** Units counted in the account's window that holds `at`. */
  usedIn(accountId: bigint, window: LimitWindow, at = this.now()): number {
    return this.used.get(this.#slot(accountId, window, at)) ?? 0
  }

  #slot(accountId: bigint, window: LimitWindow, at: number) {
    const ms = WINDOW_MS[window]!
    return `${accountId}/${window}/${at - (at % ms)}`
  }

  #limitsOf(accountId: bigint): { window: LimitWindow; limit: number }[] {
    return (
      this.limits.get(accountId) ?? [
        { window: 'minute', limit: 5 },
        { window: 'day', limit: 100 }
      ]
    )
  }

  /** Units counted at `at` back to the account's current windows that started at or before it. */
  #giveBack(accountId: bigint, units: number, at: number) {
    const now = this.now()
    for (const { window } of this.#limitsOf(accountId)) {
      const start = now - (now % WINDOW_MS[window]!)
      if (units > 0 && at >= start) {
        const slot = this.#slot(accountId, window, now)
        this.used.set(slot, Math.max(0, (this.used.get(slot) ?? 0) - units))
      }
    }
  }

  #decide(request: QuotaRequest): QuotaState {
    const now = this.now()
    const limits = this.#limitsOf(request.accountId)
    this.#giveBack(request.accountId, request.returned, request.returnedAt)
    const bannedUntil = this.bans.get(request.apiKeyId) ?? null
    const banned = bannedUntil !== null && bannedUntil > now
    const available = Math.min(
      ...limits.map(({ window, limit }) => limit - this.usedIn(request.accountId, window, now))
    )
    const admitted = !banned && (request.cost === 0 || available >= request.cost)
    const granted = admitted && request.cost > 0 ? Math.min(request.want, available) : 0
    for (const { window } of limits) {
      const slot = this.#slot(request.accountId, window, now)
      this.used.set(slot, (this.used.get(slot) ?? 0) + granted)
    }
    const windows = limits.map(({ window, limit }) => {
      const ms = WINDOW_MS[window]!
      return {
        name: window,
        algorithm: 'fixed' as const,
        limit,
        remaining: Math.max(0, limit - this.usedIn(request.accountId, window, now)),
        resetAt: now - (now % ms) + ms
      }
    })
    const shortest = Math.min(...windows.map((window) => window.resetAt))
    const spent = windows.filter((window) => window.remaining < Math.max(1, request.cost))
    return {
      apiKeyId: request.apiKeyId,
      admitted,
      granted,
      now,
      leaseUntil: Math.min(now + 1_000, shortest),
      reason: admitted ? null : banned ? 'key_banned' : 'rate_limited',
      retryAt: admitted ? null : banned ? bannedUntil : Math.max(...spent.map((window) => window.resetAt)),
      bannedUntil: banned ? bannedUntil : null,
      newlyBanned: false,
      windows,
      shadows: [],
      credits: null
    }
  }
}
