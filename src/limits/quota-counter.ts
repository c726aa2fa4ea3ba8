import { Batches } from '../db/batches.js'
import type { Queryable } from '../db/statements.js'
import { ApiError } from '../errors.js'
import type { DatabaseClock } from '../db/clock.js'
import {
  confirmBan,
  countUnits,
  handBackUnits,
  type QuotaRequest,
  type QuotaState,
  type UnitReturn
} from '../repositories/rate-limits.js'
import { UsageTally } from './usage-tally.js'

/** Told of each counting statement that requests wait on: how many subjects, how long, whether it failed. */
export type StatementObserver = (subjects: number, seconds: number, failed: boolean) => void

/** Subjects that may wait for the next counting statement unless the constructor says otherwise. */
const DEFAULT_MAX_DUE = 10_000

export interface QuotaCounterOptions {
  /** Told of each counting statement. */
  observe?: StatementObserver
  /** Subjects that may wait for the next statement; the next is refused with a 503. */
  maxDue?: number
  /** The counting statement; the unit tests answer it themselves. */
  countUnits?: typeof countUnits
}

/** The answer to a request that finds the queue full: the statement under way drains it within a second or fails. */
export const countingBacklogFull = () =>
  new ApiError('service_unavailable', 'Too many requests are waiting to be counted; retry later', {
    'retry-after': '1'
  })

/**
 * The limiter's way to Postgres: one counting statement under way at a time (Batches), the subjects
 * that fall due while it runs going together in the next, carrying the usage of their keys that the
 * instance decided alone; the rest of that usage goes every few seconds and at shutdown.
 */
export class QuotaCounter {
  readonly #usage = new UsageTally()
  readonly #batches: Batches<QuotaRequest, QuotaState>
  readonly #observe: StatementObserver
  readonly #countUnits: typeof countUnits

  constructor(
    private readonly db: Queryable,
    private readonly clock: DatabaseClock,
    { observe = () => {}, maxDue = DEFAULT_MAX_DUE, countUnits: count = countUnits }: QuotaCounterOptions = {}
  ) {
    this.#observe = observe
    this.#countUnits = count
    this.#batches = new Batches((requests) => this.#countAll(requests), maxDue, countingBacklogFull)
  }

  /** Subjects waiting for the next counting statement. */
  get depth(): number {
    return this.#batches.depth
  }

  /** A request (or a block of them) decided without the database, to report with a later statement. */
  tally(apiKeyId: bigint, hourStart: number, outcome: 'admitted' | 'refused', units = 0): void {
    this.#usage.count(apiKeyId, hourStart, outcome, units)
  }

  /**
   * Counts one account's request with the others due by the time the statement goes; when `maxDue`
   * requests already wait, fails at once with a 503 rather than queue without end.
   */
  count(request: QuotaRequest): Promise<QuotaState> {
    return this.#batches.add(request)
  }

  /** The end of the key's ban once the synchronous standby holds it; undefined when none holds (confirmBan). */
  confirmBan(apiKeyId: bigint): Promise<number | undefined> {
    return confirmBan(this.db, apiKeyId)
  }

  /** Hands back leased units this instance will not use, of many accounts in one statement (handBackUnits). */
  handBack(returns: readonly UnitReturn[]): Promise<void> {
    return handBackUnits(this.db, returns)
  }

  /** Reports every request decided without the database so far. */
  async reportUsage(): Promise<void> {
    const usage = this.#usage.take()
    if (usage.length === 0) return
    try {
      await this.#countUnits(this.db, [], usage)
    } catch (error) {
      this.#usage.restore(usage)
      throw error
    }
  }

  async #countAll(requests: QuotaRequest[]): Promise<QuotaState[]> {
    const usage = this.#usage.take(requests.map((request) => request.apiKeyId))
    const started = performance.now()
    const sentAt = this.clock.localNow()
    let states: QuotaState[]
    try {
      states = await this.#countUnits(this.db, requests, usage)
    } catch (error) {
      this.#observe(requests.length, (performance.now() - started) / 1000, true)
      this.#usage.restore(usage)
      throw error
    }
    this.#observe(requests.length, (performance.now() - started) / 1000, false)
    if (states[0]) this.clock.observe(states[0].now, sentAt, this.clock.localNow())
    // The statement answers in account order; the requests are matched to theirs by key, in turn.
    const byKey = new Map<bigint, QuotaState[]>()
    for (const state of states) byKey.set(state.apiKeyId, [...(byKey.get(state.apiKeyId) ?? []), state])
    return requests.map((request) => byKey.get(request.apiKeyId)!.shift()!)
  }
}
