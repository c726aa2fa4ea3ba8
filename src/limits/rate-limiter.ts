import { LRUCache } from 'lru-cache'
import type { DatabaseClock } from '../db/clock.js'
import type { Queryable } from '../db/statements.js'
import { NO_SHADOWS, type QuotaState, type RefusalReason, type UnitReturn } from '../repositories/rate-limits.js'
import { ApiError } from '../errors.js'
import { leaseSize, RequestRate } from './lease-policy.js'
import { QuotaCounter } from './quota-counter.js'
import { hourStart, lessRemaining, type WindowState } from './windows.js'

/** Accounts kept in memory, least recently used first out. */
const MAX_ACCOUNTS = 100_000
/**
 * An account unused this long is let go once it holds nothing and no ban of one of its keys is known:
 * its lease has ended (a second at most) and its units are handed back, its rate reads 0, and one
 * statement learns the rest again (docs/benchmark.md#memory).
 */
const IDLE_MS = 10_000

/** The limiter's way to Postgres: QuotaCounter, or a fake in unit tests. */
export type Counter = Pick<QuotaCounter, 'count' | 'tally' | 'reportUsage' | 'confirmBan' | 'handBack'>

/** What one request asks of its account. */
export interface Ask {
  accountId: bigint
  apiKeyId: bigint
  /** The route's units on the account's plan. */
  cost: number
  /** Refusals past the first that ban the key; null: never banned. */
  banAfter: number | null
  banSeconds: number
}

/**
 * What the limiter decided for one request, with the account's windows as they stand after it: the
 * enforced ones, and the shadow ones (none when absent), which never refuse.
 */
export type Decision =
  | { outcome: 'admitted'; windows: WindowState[]; shadows?: readonly WindowState[]; credits: number | null }
  | {
      outcome: RefusalReason
      windows: WindowState[]
      shadows?: readonly WindowState[]
      credits: number | null
      /** When a retry can succeed (the database's clock); null: not by waiting (credits without a refill). */
      retryAt: number | null
      /** This request set the key's ban. */
      newlyBanned: boolean
    }

interface AccountState {
  /** The windows and credits as the last statement reported them, leased units counted as used. */
  windows: WindowState[]
  shadows: readonly WindowState[]
  credits: number | null
  /** The database's instant the last statement counted at. */
  countedAt: number
  /** This process's monotonic instant (performance.now()) the last statement's answer was taken in. */
  settledAt: number
  /** Units counted for this instance and not used yet, usable while the database's clock is before leaseUntil. */
  leaseLeft: number
  leaseUntil: number
  /** The database's instant the lease was counted at: its unused units go back to that window only. */
  leaseAt: number
  /** Units of an ended lease to hand back with the next statement, and the instant they were counted at. */
  returned: number
  returnedAt: number
  /** Units a hand-back under way carries, taken out of `returned` so that no count carries them too. */
  handingBack: number
  /** For keys that are never banned: refused without asking until then. */
  exhaustedUntil: number
  /** The end of the latest ban known here of one of its keys: kept until then, so that the ban's refusals carry its windows. */
  bannedUntil: number
  /** The database's instant of the account's last request here. */
  usedAt: number
  /** The statement under way for this account; requests that arrive meanwhile wait for it. */
  refill: Promise<void> | undefined
  rate: RequestRate
}

/**
 * Limits exact across instances, decided on the database's clock: every unit admitted was first
 * counted by the one statement of count_units (db/schema.sql), which locks the account's counters.
 * To spare a round trip per request, an instance counts a block of units ahead for a busy account
 * whose limits are all fixed windows (a lease, sized by lease-policy.ts) and admits from it while the
 * database's clock, as measured here, is surely before the lease's end: the end of the shortest
 * window, and at most a second, so a plan change reaches every instance within a second.
 *
 * Database round trips per request: 0 while a lease covers it or a ban is known (beside the account's
 * windows: a ban known here before them has its first request counted); otherwise a share of one
 * statement with the other accounts due by the time it goes (quota-counter.ts).
 */
export class RateLimiter {
  readonly #cached: LRUCache<string, AccountState>
  /** Accounts the cache let go while they held units or awaited a statement, kept until they hold nothing. */
  readonly #holding = new Map<string, AccountState>()
  /**
   * Bans this instance knows of, by key, each held by the synchronous standby: set by its statements
   * and confirmed when read or announced (confirmBan).
   */
  readonly #bans = new Map<bigint, number>()
  /** Confirmations under way, by key, shared by the requests that wait for one. */
  readonly #confirming = new Map<bigint, Promise<number | undefined>>()
  /** The hand-back under way, if any: one at a time. */
  #handingBack: Promise<void> | undefined
  readonly #counter: Counter

  /** `db` is where the counting statements go: connections of their own, so they never queue behind requests' queries. */
  constructor(
    db: Queryable,
    private readonly clock: DatabaseClock,
    options: { counter?: Counter; maxAccounts?: number } = {}
  ) {
    this.#counter = options.counter ?? new QuotaCounter(db, clock)
    this.#cached = new LRUCache({
      max: options.maxAccounts ?? MAX_ACCOUNTS,
      dispose: (state, account, reason) => {
        if (reason === 'evict' && holdsSomething(state)) this.#holding.set(account, state)
      }
    })
  }

  /** Accounts in memory: cached, and let go while holding units or a statement. */
  get subjects(): { cached: number; holding: number } {
    return { cached: this.#cached.size, holding: this.#holding.size }
  }

  /**
   * Decides one request. No database round trip when a lease covers it, a spent window is known, or the
   * key's ban beside the account's windows; otherwise after the statement under way for the account,
   * or with one of its own.
   */
  async consume(ask: Ask): Promise<Decision> {
    const account = String(ask.accountId)
    const state = this.#state(account)
    for (;;) {
      const decision = this.#decideLocally(state, ask)
      if (decision) return decision
      if (!state.refill) return this.#decideRemotely(account, state, ask)
      // Requests that arrive while a statement runs wait for it, then take from what it leased.
      await state.refill
    }
  }

  /**
   * Decides a request counted with its key's lookup (findUsableApiKeysAndCount): without a round trip
   * more unless it is refused for a ban this instance has not confirmed yet.
   */
  async decideCounted(ask: Ask, counted: QuotaState): Promise<Decision> {
    const state = this.#state(String(ask.accountId))
    await this.#restOnDurableBan(ask, counted)
    return this.#settle(state, ask, counted)
  }

  /** A ban the database announced: once confirmed, the key is refused here until then without asking. */
  async announcedBan(apiKeyId: bigint): Promise<void> {
    await this.#confirmBan(apiKeyId)
  }

  /** A ban known to be held by the synchronous standby: the key is refused here until then without asking. */
  noteBan(apiKeyId: bigint, bannedUntil: number): void {
    if (bannedUntil > (this.#bans.get(apiKeyId) ?? 0)) this.#bans.set(apiKeyId, bannedUntil)
  }

  async #confirmBan(apiKeyId: bigint): Promise<number | undefined> {
    let confirming = this.#confirming.get(apiKeyId)
    if (!confirming) {
      confirming = this.#counter.confirmBan(apiKeyId).finally(() => this.#confirming.delete(apiKeyId))
      this.#confirming.set(apiKeyId, confirming)
    }
    const bannedUntil = await confirming
    if (bannedUntil !== undefined) this.noteBan(apiKeyId, bannedUntil)
    return bannedUntil
  }

  /**
   * A refusal for a ban that the statement read rather than set waits until the synchronous standby
   * is known to hold the ban: a client is told of a ban only when a failover cannot lose it. A ban
   * this statement set committed as the session does, so it is already there.
   */
  async #restOnDurableBan(ask: Ask, counted: QuotaState): Promise<void> {
    if (counted.bannedUntil === null || counted.newlyBanned || this.knownBan(ask.apiKeyId) >= counted.bannedUntil) {
      return
    }
    if ((await this.#confirmBan(ask.apiKeyId)) === undefined) {
      throw new ApiError('service_unavailable', 'The key changed while it was being counted; retry', {
        'retry-after': '1'
      })
    }
  }

  /** The end of the key's ban as this instance knows it; 0 when none is known. */
  knownBan(apiKeyId: bigint): number {
    const until = this.#bans.get(apiKeyId) ?? 0
    return until > this.clock.now() ? until : 0
  }

  /** Whether this instance holds units of the account (leased, or to hand back) or awaits a statement for it. */
  holds(accountId: bigint): boolean {
    const state = this.#peek(String(accountId))
    return state !== undefined && holdsSomething(state)
  }

  /** Units this instance holds leased for the account and may still use. */
  unusedLease(accountId: bigint): number {
    const state = this.#peek(String(accountId))
    return state && this.clock.surelyBefore(state.leaseUntil) ? state.leaseLeft : 0
  }

  /**
   * The account's windows and credits as this instance's last statement counted them, less what it
   * has served from its lease since, and this process's monotonic instant its answer was taken in;
   * undefined when it has counted nothing for the account.
   */
  lastCounted(
    accountId: bigint
  ):
    { settledAt: number; windows: WindowState[]; shadows: readonly WindowState[]; credits: number | null } | undefined {
    const state = this.#peek(String(accountId))
    if (!state || (state.windows.length === 0 && state.shadows.length === 0)) return undefined
    return {
      settledAt: state.settledAt,
      windows: lessRemaining(state.windows, -this.unusedLease(accountId)),
      shadows: state.shadows,
      credits: state.credits
    }
  }

  /**
   * Hands back in one statement the units of the accounts idle for IDLE_MS and of those the cache let
   * go, then reports the requests decided without the database; run every few seconds and at
   * shutdown. Lets go of the bans that have ended and of the idle accounts that hold nothing.
   */
  async reportUsage(): Promise<void> {
    const now = this.clock.now()
    for (const [key, until] of this.#bans) if (until <= now) this.#bans.delete(key)
    // One statement after the other: the counting statement keeps a connection of its own.
    try {
      await this.#handBack(this.#forgetIdle(now))
    } finally {
      await this.#counter.reportUsage()
    }
  }

  /**
   * Hands back every unit this instance holds, leases still running included: at shutdown, when it
   * uses none of them any more. After a hand-back under way, 1 statement.
   */
  async handBackAll(): Promise<void> {
    await this.#handingBack?.catch(() => {})
    const returning: [string, AccountState][] = []
    for (const [account, state] of [...this.#cached.entries(), ...this.#holding]) {
      if (state.leaseLeft > 0) this.#endLease(state)
      if (state.returned > 0) returning.push([account, state])
    }
    await this.#handBack(returning)
  }

  /**
   * From the least recently used on, up to the first account used within IDLE_MS: ends the idle
   * accounts' leases and lets go of those that hold nothing. Returns the accounts with units to hand
   * back: those idle, and those the cache let go.
   */
  #forgetIdle(now: number): [string, AccountState][] {
    const idle: string[] = []
    const returning: [string, AccountState][] = []
    for (const account of this.#cached.rkeys()) {
      const state = this.#cached.peek(account)!
      if (now - state.usedAt < IDLE_MS) break
      if (state.leaseLeft > 0 && !this.clock.surelyBefore(state.leaseUntil)) this.#endLease(state)
      if (!holdsSomething(state) && state.bannedUntil <= now) idle.push(account)
      else if (state.returned > 0) returning.push([account, state])
    }
    for (const account of idle) this.#cached.delete(account)
    for (const [account, state] of this.#holding) {
      if (state.leaseLeft > 0 && !this.clock.surelyBefore(state.leaseUntil)) this.#endLease(state)
      if (state.returned > 0) returning.push([account, state])
    }
    return returning
  }

  /**
   * Hands back the units the accounts hold to hand back, in one statement, then lets go of those
   * that hold nothing and are still idle. Their units are out of `returned` meanwhile, so that a
   * request's statement does not carry them too; if the hand-back fails, they are held again.
   */
  #handBack(accounts: [string, AccountState][]): Promise<void> {
    if (accounts.length === 0 || this.#handingBack) return Promise.resolve()
    const returns: UnitReturn[] = accounts.map(([account, state]) => {
      state.handingBack = state.returned
      state.returned = 0
      return { accountId: BigInt(account), units: state.handingBack, countedAt: state.returnedAt }
    })
    const handing = this.#counter.handBack(returns).then(
      () => {
        const now = this.clock.now()
        for (const [account, state] of accounts) {
          state.handingBack = 0
          if (holdsSomething(state)) continue
          if (this.#holding.get(account) === state) this.#holding.delete(account)
          else if (this.#cached.peek(account) === state && now - state.usedAt >= IDLE_MS && state.bannedUntil <= now) {
            this.#cached.delete(account)
          }
        }
      },
      (error: unknown) => {
        accounts.forEach(([, state], i) => {
          state.handingBack = 0
          this.#toHandBack(state, returns[i]!.units, returns[i]!.countedAt)
        })
        throw error
      }
    )
    this.#handingBack = handing.finally(() => {
      this.#handingBack = undefined
    })
    return this.#handingBack
  }

  #decideLocally(state: AccountState, ask: Ask): Decision | undefined {
    const bannedUntil = this.knownBan(ask.apiKeyId)
    if (bannedUntil > 0) {
      // Without the account's windows the refusal would have no headers: the statement counts it and gives them.
      if (state.countedAt === 0) return undefined
      state.bannedUntil = Math.max(state.bannedUntil, bannedUntil)
      this.#counter.tally(ask.apiKeyId, hourStart(this.clock.now()), 'refused')
      return this.#refusal(state, 'key_banned', bannedUntil, false)
    }
    if (state.leaseLeft > 0 && !this.clock.surelyBefore(state.leaseUntil)) this.#endLease(state)
    if (state.leaseLeft >= ask.cost && state.leaseLeft > 0) {
      state.leaseLeft -= ask.cost
      this.#counter.tally(ask.apiKeyId, hourStart(this.clock.now()), 'admitted', ask.cost)
      return this.#admitted(state)
    }
    if (state.exhaustedUntil > this.clock.now()) {
      return this.#refusal(state, 'rate_limited', state.exhaustedUntil, false)
    }
    return undefined
  }

  async #decideRemotely(account: string, state: AccountState, ask: Ask): Promise<Decision> {
    const { returned, returnedAt } = state
    // A lease only beside fixed windows, no credits (one pool a lease here would strand) and no shadow
    // limits (whose would-be refusals are counted to the request), in whole requests.
    const leasable =
      state.credits === null &&
      state.shadows.length === 0 &&
      state.windows.length > 0 &&
      state.windows.every((window) => window.algorithm === 'fixed')
    const requests = leasable
      ? leaseSize({
          requestsPerSecond: state.rate.perSecond(),
          msLeftInMinute: 1_000,
          left: Math.floor(Math.min(...state.windows.map((window) => window.remaining)) / Math.max(1, ask.cost))
        })
      : 1
    // A statement that fails fails the requests waiting for it too, rather than each waiting out the
    // database timeout in turn; caught here so that a failure nobody waited for is not unhandled.
    let settle!: (failure?: unknown) => void
    state.refill = new Promise<void>((resolve, reject) => {
      settle = (failure) => (failure === undefined ? resolve() : reject(failure))
    })
    state.refill.catch(() => {})
    state.returned = 0
    try {
      let counted: QuotaState
      try {
        counted = await this.#counter.count({
          apiKeyId: ask.apiKeyId,
          accountId: ask.accountId,
          cost: ask.cost,
          want: ask.cost * requests,
          returned,
          returnedAt,
          banAfter: ask.banAfter,
          banSeconds: ask.banSeconds
        })
      } catch (error) {
        // Not counted: the units go back with the next statement.
        this.#toHandBack(state, returned, returnedAt)
        throw error
      }
      await this.#restOnDurableBan(ask, counted)
      return this.#settle(state, ask, counted)
    } catch (error) {
      settle(error)
      throw error
    } finally {
      state.refill = undefined
      settle()
      if (!holdsSomething(state)) this.#holding.delete(account)
    }
  }

  /** Takes in what the statement counted for the request. */
  #settle(state: AccountState, ask: Ask, counted: QuotaState): Decision {
    if (counted.bannedUntil !== null) {
      this.noteBan(ask.apiKeyId, counted.bannedUntil)
      state.bannedUntil = Math.max(state.bannedUntil, counted.bannedUntil)
    }
    // A lease held from before is older than these figures, which count it as used.
    state.windows = counted.windows
    state.shadows = counted.shadows
    state.credits = counted.credits
    state.countedAt = counted.now
    state.settledAt = performance.now()
    if (counted.admitted) {
      const lease = Math.max(0, counted.granted - ask.cost)
      if (lease > 0) {
        if (state.leaseLeft > 0) this.#endLease(state)
        state.leaseLeft = lease
        state.leaseUntil = counted.leaseUntil
        state.leaseAt = counted.now
      }
      state.exhaustedUntil = 0
      return this.#admitted(state)
    }
    const reason = counted.reason ?? 'rate_limited'
    if (reason === 'rate_limited' && ask.banAfter === null && counted.retryAt !== null) {
      state.exhaustedUntil = counted.retryAt
    }
    return this.#refusal(state, reason, counted.retryAt, counted.newlyBanned)
  }

  /** A lease whose time is up: its units go back with the next statement, to the window they were counted in. */
  #endLease(state: AccountState) {
    this.#toHandBack(state, state.leaseLeft, state.leaseAt)
    state.leaseLeft = 0
  }

  /**
   * Units counted at `at` to hand back. Beside units of another instant, all go back to the windows
   * that hold the earlier one: each of those counted them all, so none is given back a unit it did
   * not count (a window that started between the two keeps the later ones).
   */
  #toHandBack(state: AccountState, units: number, at: number) {
    if (units === 0) return
    state.returnedAt = state.returned > 0 ? Math.min(state.returnedAt, at) : at
    state.returned += units
  }

  #admitted(state: AccountState): Decision {
    // Units still leased here are counted in the database but not yet used.
    const windows = lessRemaining(state.windows, -state.leaseLeft)
    return { outcome: 'admitted', windows, shadows: state.shadows, credits: state.credits }
  }

  #refusal(state: AccountState, outcome: RefusalReason, retryAt: number | null, newlyBanned: boolean): Decision {
    return { outcome, windows: state.windows, shadows: state.shadows, credits: state.credits, retryAt, newlyBanned }
  }

  /** The account's state without making it recently used. */
  #peek(account: string): AccountState | undefined {
    return this.#cached.peek(account) ?? this.#holding.get(account)
  }

  /** The account's state, counted as used now. */
  #state(account: string): AccountState {
    const now = this.clock.now()
    let state = this.#cached.get(account)
    if (state) return used(state, now)
    state = this.#holding.get(account)
    if (state) {
      this.#holding.delete(account)
    } else {
      state = {
        windows: [],
        shadows: NO_SHADOWS,
        credits: null,
        countedAt: 0,
        settledAt: 0,
        leaseLeft: 0,
        leaseUntil: 0,
        leaseAt: 0,
        returned: 0,
        returnedAt: 0,
        handingBack: 0,
        exhaustedUntil: 0,
        bannedUntil: 0,
        usedAt: now,
        refill: undefined,
        rate: new RequestRate()
      }
    }
    this.#cached.set(account, state)
    return used(state, now)
  }
}

function used(state: AccountState, now: number): AccountState {
  state.usedAt = now
  state.rate.count(now)
  return state
}

/** Units counted for this instance and not yet used or handed back, or a statement under way. */
const holdsSomething = (state: AccountState) =>
  state.leaseLeft > 0 || state.returned > 0 || state.handingBack > 0 || state.refill !== undefined
