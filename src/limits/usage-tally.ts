import type { UsageReport } from '../repositories/rate-limits.js'

interface Counts {
  admitted: number
  refused: number
}

/**
 * Requests this instance admitted or refused without asking Postgres (from a lease, or knowing the
 * key is banned), per key and UTC day, until they are reported with a counting statement.
 */
export class UsageTally {
  readonly #byKey = new Map<bigint, Map<number, Counts>>()

  count(apiKeyId: bigint, dayStart: number, outcome: keyof Counts): void {
    let days = this.#byKey.get(apiKeyId)
    if (!days) this.#byKey.set(apiKeyId, (days = new Map()))
    let counts = days.get(dayStart)
    if (!counts) days.set(dayStart, (counts = { admitted: 0, refused: 0 }))
    counts[outcome]++
  }

  /** Takes the counts of these keys (of every key when omitted) out, to report them. */
  take(apiKeyIds?: Iterable<bigint>): UsageReport[] {
    const reports: UsageReport[] = []
    for (const apiKeyId of apiKeyIds ?? [...this.#byKey.keys()]) {
      const days = this.#byKey.get(apiKeyId)
      if (!days) continue
      this.#byKey.delete(apiKeyId)
      for (const [dayStart, counts] of days) reports.push({ apiKeyId, day: dayStart, ...counts })
    }
    return reports
  }

  /** Puts back counts whose report did not reach Postgres. */
  restore(reports: UsageReport[]): void {
    for (const report of reports) {
      const dayStart = report.day
      let days = this.#byKey.get(report.apiKeyId)
      if (!days) this.#byKey.set(report.apiKeyId, (days = new Map()))
      const counts = days.get(dayStart) ?? { admitted: 0, refused: 0 }
      days.set(dayStart, { admitted: counts.admitted + report.admitted, refused: counts.refused + report.refused })
    }
  }

  get keys(): number {
    return this.#byKey.size
  }
}
