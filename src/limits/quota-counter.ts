import type { Kysely } from 'kysely'
import type { Database } from '../db/schema.js'
import { countRequests, type QuotaRequest, type QuotaState } from '../repositories/rate-limits.js'
import { UsageTally } from './usage-tally.js'

interface Due {
  request: QuotaRequest
  resolve: (state: QuotaState) => void
  reject: (error: unknown) => void
}

/**
 * The limiter's way to Postgres. Counting statements of different subjects that are due in the same
 * event-loop turn go as one (1 round trip for all of them), carrying the usage of their keys that
 * the instance decided alone; the rest of that usage goes every few seconds and at shutdown.
 */
export class QuotaCounter {
  readonly #usage = new UsageTally()
  #due: Due[] = []

  constructor(private readonly db: Kysely<Database>) {}

  /** A request (or a block of them) decided without the database, to report with a later statement. */
  tally(apiKeyId: bigint, dayStart: number, outcome: 'admitted' | 'refused'): void {
    this.#usage.count(apiKeyId, dayStart, outcome)
  }

  /** Counts one subject's request with the others due in this turn. */
  count(request: QuotaRequest): Promise<QuotaState> {
    return new Promise((resolve, reject) => {
      this.#due.push({ request, resolve, reject })
      if (this.#due.length === 1) {
        setImmediate(() => {
          void this.#countDue()
        })
      }
    })
  }

  /** Reports every request decided without the database so far. */
  async reportUsage(): Promise<void> {
    const usage = this.#usage.take()
    if (usage.length === 0) return
    try {
      await countRequests(this.db, [], usage)
    } catch (error) {
      this.#usage.restore(usage)
      throw error
    }
  }

  async #countDue() {
    const due = this.#due
    this.#due = []
    const usage = this.#usage.take(due.flatMap(({ request }) => request.apiKeyId ?? []))
    try {
      const states = await countRequests(
        this.db,
        due.map(({ request }) => request),
        usage
      )
      const bySubject = new Map(states.map((state) => [state.subject, state]))
      for (const { request, resolve } of due) resolve(bySubject.get(request.subject)!)
    } catch (error) {
      this.#usage.restore(usage)
      for (const { reject } of due) reject(error)
    }
  }
}
