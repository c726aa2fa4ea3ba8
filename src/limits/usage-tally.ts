import type { UsageReport } from '../repositories/rate-limits.js'

interface Counts {
  admitted: number
  refused: number
  /** Units the admitted requests spent. */
  units: number
}

/**
 * Requests this instance admitted or refused without asking Postgres (from a lease, or knowing the
 * key is banned), per key and UTC hour, until they are reported with a counting statement.
 */
export class UsageTally {
  readonly #byKey = new Map<bigint, Map<number, Counts>>()

  count(apiKeyId: bigint, hourStart: number, outcome: 'admitted' | 'refused', units = 0): void {
    let hours = this.#byKey.get(apiKeyId)
    if (!hours) this.#byKey.set(apiKeyId, (hours = new Map()))
    let counts = hours.get(hourStart)
    if (!counts) hours.set(hourStart, (counts = { admitted: 0, refused: 0, units: 0 }))
    counts[outcome]++
    counts.units += units
  }

  /** Takes the counts of these keys (of every key when omitted) out, to report them. */
  take(apiKeyIds?: Iterable<bigint>): UsageReport[] {
    const reports: UsageReport[] = []
    for (const apiKeyId of apiKeyIds ?? [...this.#byKey.keys()]) {
      const hours = this.#byKey.get(apiKeyId)
      if (!hours) continue
      this.#byKey.delete(apiKeyId)
      for (const [hourStart, counts] of hours) reports.push({ apiKeyId, hour: hourStart, ...counts })
    }
    return reports
  }

  /** Puts back counts whose report did not reach Postgres. */
  restore(reports: UsageReport[]): void {
    for (const report of reports) {
      let hours = this.#byKey.get(report.apiKeyId)
      if (!hours) this.#byKey.set(report.apiKeyId, (hours = new Map()))
      const counts = hours.get(report.hour) ?? { admitted: 0, refused: 0, units: 0 }
      hours.set(report.hour, {
        admitted: counts.admitted + report.admitted,
        refused: counts.refused + report.refused,
        units: counts.units + report.units
      })
    }
  }

  get keys(): number {
    return this.#byKey.size
  }
}
