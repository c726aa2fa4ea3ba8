import type { Counter } from '../../../src/limits/rate-limiter.js'
import type { QuotaRequest, QuotaState } from '../../../src/repositories/rate-limits.js'

interface Row {
  minuteStart: number
  minuteUsed: number
  dayStart: number
  dayUsed: number
}

interface Pending {
  request: QuotaRequest
  resolve: (state: QuotaState) => void
  reject: (error: unknown) => void
}

/**
 * The counting statement in memory: grants what the windows have left, as count_requests does, with
 * the bans the test sets. With `hold`, statements wait until the test releases or fails them.
 */
export class FakeCounter implements Counter {
  readonly requests: QuotaRequest[] = []
  readonly tallied: { apiKeyId: bigint; hourStart: number; outcome: 'admitted' | 'refused' }[] = []
  readonly rows = new Map<string, Row>()
  readonly bans = new Map<string, number>()
  readonly pending: Pending[] = []
  hold = false
  reports = 0

  count(request: QuotaRequest): Promise<QuotaState> {
    this.requests.push(request)
    return new Promise((resolve, reject) => {
      if (this.hold) this.pending.push({ request, resolve, reject })
      else resolve(this.#decide(request))
    })
  }

  tally(apiKeyId: bigint, hourStart: number, outcome: 'admitted' | 'refused'): void {
    this.tallied.push({ apiKeyId, hourStart, outcome })
  }

  async reportUsage(): Promise<void> {
    this.reports++
  }

  /** Answers every held statement as the database would. */
  release(): void {
    for (const { request, resolve } of this.pending.splice(0)) resolve(this.#decide(request))
  }

  fail(error: Error): void {
    for (const { reject } of this.pending.splice(0)) reject(error)
  }

  #decide(request: QuotaRequest): QuotaState {
    const stored = this.rows.get(request.subject)
    const row: Row = {
      minuteStart: request.minuteStart,
      minuteUsed: stored && stored.minuteStart === request.minuteStart ? stored.minuteUsed : 0,
      dayStart: request.dayStart,
      dayUsed: stored && stored.dayStart === request.dayStart ? Math.max(0, stored.dayUsed - request.returned) : 0
    }
    const bannedUntil = this.bans.get(request.subject) ?? null
    const banned = bannedUntil !== null && bannedUntil > request.now
    const granted = banned
      ? 0
      : Math.max(
          0,
          Math.min(request.want, request.perMinute - row.minuteUsed, (request.perDay ?? Infinity) - row.dayUsed)
        )
    row.minuteUsed += granted
    row.dayUsed += granted
    this.rows.set(request.subject, row)
    return { subject: request.subject, granted, ...row, bannedUntil, newlyBanned: false }
  }
}
