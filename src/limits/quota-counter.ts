import type { Queryable } from '../db/statements.js'
import { ApiError } from '../errors.js'
import type { DatabaseClock } from '../db/clock.js'
import { countUnits, type QuotaRequest, type QuotaState } from '../repositories/rate-limits.js'
import { UsageTally } from './usage-tally.js'

/** Told of each counting statement that requests wait on: how many subjects, how long, whether it failed. */
export type StatementObserver = (subjects: number, seconds: number, failed: boolean) => void

/** Subjects that may wait for the next counting statement unless the constructor says otherwise. */
const DEFAULT_MAX_DUE = 10_000

/** The answer to a request that finds the queue full: the statement under way drains it within a second or fails. */
const backlogFull = () =>
  new ApiError(503, 'service_unavailable', 'Too many requests are waiting to be counted; retry later', {
    'retry-after': '1'
  })

interface Due {
  request: QuotaRequest
  resolve: (state: QuotaState) => void
  reject: (error: unknown) => void
}

/**
 * The limiter's way to Postgres. One counting statement is under way at a time: the subjects that
 * fall due while it runs go together in the next (1 round trip for all of them), carrying the usage
 * of their keys that the instance decided alone; the rest of that usage goes every few seconds and
 * at shutdown. A statement's first subject costs Postgres far more than each further one, so
 * waiting for the one under way buys larger, cheaper batches (docs/benchmark.md#measurements-behind-the-code).
 */
export class QuotaCounter {
  readonly #usage = new UsageTally()
  #due: Due[] = []
  #counting = false

  constructor(
    private readonly db: Queryable,
    private readonly clock: DatabaseClock,
    private readonly observe: StatementObserver = () => {},
    private readonly maxDue = DEFAULT_MAX_DUE
  ) {}

  /** Subjects waiting for the next counting statement. */
  get depth(): number {
    return this.#due.length
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
    if (this.#due.length >= this.maxDue) return Promise.reject(backlogFull())
    return new Promise((resolve, reject) => {
      this.#due.push({ request, resolve, reject })
      if (this.#due.length === 1 && !this.#counting) this.#countSoon()
    })
  }

  /** Counts what is due once the current event-loop turn has queued all it will. */
  #countSoon() {
    setImmediate(() => {
      void this.#countDue()
    })
  }

  /** Reports every request decided without the database so far. */
  async reportUsage(): Promise<void> {
    const usage = this.#usage.take()
    if (usage.length === 0) return
    try {
      await countUnits(this.db, [], usage)
    } catch (error) {
      this.#usage.restore(usage)
      throw error
    }
  }

  async #countDue() {
    const due = this.#due
    this.#due = []
    this.#counting = true
    const usage = this.#usage.take(due.map(({ request }) => request.apiKeyId))
    const started = performance.now()
    const sentAt = this.clock.localNow()
    try {
      const states = await countUnits(
        this.db,
        due.map(({ request }) => request),
        usage
      )
      this.observe(due.length, (performance.now() - started) / 1000, false)
      if (states[0]) this.clock.observe(states[0].now, sentAt, this.clock.localNow())
      // The statement answers in account order; the due requests are matched to theirs by key, in turn.
      const byKey = new Map<bigint, QuotaState[]>()
      for (const state of states) byKey.set(state.apiKeyId, [...(byKey.get(state.apiKeyId) ?? []), state])
      for (const { request, resolve } of due) resolve(byKey.get(request.apiKeyId)!.shift()!)
    } catch (error) {
      this.observe(due.length, (performance.now() - started) / 1000, true)
      this.#usage.restore(usage)
      // Those that queued behind a failed statement fail with it, rather than wait out the database
      // timeout once more in the next one.
      const queued = this.#due
      this.#due = []
      for (const { reject } of [...due, ...queued]) reject(error)
    } finally {
      this.#counting = false
      if (this.#due.length > 0) this.#countSoon()
    }
  }
}
