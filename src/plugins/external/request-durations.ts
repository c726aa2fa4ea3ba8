import { Histogram, type Aggregator, type MetricType, type MetricValueWithName } from 'prom-client'

export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

type DurationLabel = 'method' | 'route' | 'status'

interface DurationSeries {
  /** Observations per bucket, not cumulative; the last one counts those above every bound. */
  counts: number[]
  sum: number
  count: number
}

/**
 * The request-duration histogram, exposed as prom-client exposes its own. prom-client's observe()
 * validates and hashes the label object on every call (about 440 ns a call in a loop here); each
 * series is found here through maps keyed by route, method and status (about 25 ns).
 */
export class RequestDurations extends Histogram<DurationLabel> {
  // Not a #private field: prom-client's constructor calls reset() before this class's fields exist.
  private readonly series = new Map<string, Map<string, Map<number, DurationSeries>>>()

  record(method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.series.get(route)
    if (!byMethod) this.series.set(route, (byMethod = new Map()))
    let byStatus = byMethod.get(method)
    if (!byStatus) byMethod.set(method, (byStatus = new Map()))
    let series = byStatus.get(status)
    if (!series) {
      series = { counts: new Array<number>(DURATION_BUCKETS.length + 1).fill(0), sum: 0, count: 0 }
      byStatus.set(status, series)
    }
    let bucket = 0
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]!) bucket++
    series.counts[bucket]!++
    series.sum += seconds
    series.count++
  }

  /** Each series's request count, for the requests counter. */
  *counts(): Generator<[Record<DurationLabel, string | number>, number]> {
    for (const [route, byMethod] of this.series) {
      for (const [method, byStatus] of byMethod) {
        for (const [status, series] of byStatus) yield [{ method, route, status }, series.count]
      }
    }
  }

  // Set by prom-client's constructor; its typings do not list them.
  declare readonly name: string
  declare readonly help: string
  declare readonly type: MetricType
  declare readonly aggregator: Aggregator

  // The registry writes out what getForPromString() returns (get() serves JSON), in prom-client's
  // own shape, `le` first on a bucket. prom-client's own store stays empty: observe() is never called.
  override async get() {
    const values: MetricValueWithName<DurationLabel | 'le'>[] = []
    const bucket = `${this.name}_bucket`
    for (const [route, byMethod] of this.series) {
      for (const [method, byStatus] of byMethod) {
        for (const [status, { counts, sum, count }] of byStatus) {
          const labels = { method, route, status }
          let cumulative = 0
          DURATION_BUCKETS.forEach((bound, index) => {
            cumulative += counts[index]!
            values.push({ metricName: bucket, labels: { le: bound, ...labels }, value: cumulative })
          })
          values.push(
            { metricName: bucket, labels: { le: '+Inf', ...labels }, value: count },
            { metricName: `${this.name}_sum`, labels, value: sum },
            { metricName: `${this.name}_count`, labels, value: count }
          )
        }
      }
    }
    const { name, help, type, aggregator } = this
    return { name, help, type, aggregator, values, collect: () => {} }
  }

  getForPromString() {
    return this.get()
  }

  override reset(): void {
    this.series?.clear()
  }
}
