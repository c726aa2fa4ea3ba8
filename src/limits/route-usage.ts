// Requests per key, UTC hour and route, as an instance counts them between two reports.

/** One key's requests on one route in one UTC hour: those admitted, those refused, the units the admitted spent. */
export interface RouteUsage {
  apiKeyId: bigint
  /** Epoch milliseconds at which the UTC hour began. */
  hour: number
  route: string
  admitted: number
  refused: number
  units: number
}

/**
 * Every request this instance charged, by key, hour and route, until it is reported (usage.ts's
 * addRouteUsage); what a report could not write is put back for the next.
 */
export class RouteUsageTally {
  #byRoute = new Map<string, RouteUsage>()

  #entry(apiKeyId: bigint, hour: number, route: string): RouteUsage {
    const id = `${apiKeyId} ${hour} ${route}`
    let usage = this.#byRoute.get(id)
    if (usage === undefined) {
      usage = { apiKeyId, hour, route, admitted: 0, refused: 0, units: 0 }
      this.#byRoute.set(id, usage)
    }
    return usage
  }

  count(apiKeyId: bigint, hour: number, route: string, outcome: 'admitted' | 'refused', units: number): void {
    const usage = this.#entry(apiKeyId, hour, route)
    usage[outcome]++
    usage.units += units
  }

  /** Takes every count out, to report them. */
  take(): RouteUsage[] {
    const taken = [...this.#byRoute.values()]
    this.#byRoute = new Map()
    return taken
  }

  /** Puts back counts whose report did not reach Postgres. */
  restore(reports: readonly RouteUsage[]): void {
    for (const report of reports) {
      const usage = this.#entry(report.apiKeyId, report.hour, report.route)
      usage.admitted += report.admitted
      usage.refused += report.refused
      usage.units += report.units
    }
  }

  get size(): number {
    return this.#byRoute.size
  }
}
