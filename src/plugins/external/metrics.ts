import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import fp from 'fastify-plugin'
import {
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type Aggregator,
  type MetricType,
  type MetricValueWithName
} from 'prom-client'

/** The pg Pool counters read at each scrape. */
export interface PoolStats {
  readonly totalCount: number
  readonly idleCount: number
  readonly waitingCount: number
}

/** The unkeyed ceiling's figures: requests shed since start, and those whose answer is held now. */
export interface Shedding {
  readonly shed: number
  readonly held: number
}

export type RateLimitRefusal = 'rate_limited' | 'key_banned'
type Plan = 'free' | 'pro' | 'business' | 'enterprise'
const PLANS: Plan[] = ['free', 'pro', 'business', 'enterprise']
type Outcome = 'admitted' | 'refused'
const OUTCOMES: Outcome[] = ['admitted', 'refused']

export interface Metrics {
  /** This app's own registry, so several apps in one process do not share figures. */
  registry: Registry
  rateLimitRefusals: Counter<'reason'>
  rateLimitBans: Counter
  /** Counts one request made with a valid key, by its plan and the rate limiter's outcome. */
  countKeyRequest(plan: Plan, outcome: Outcome): void
  /** Records one counting statement: the subjects it counted, its duration, and whether it failed. */
  observeCountingStatement(subjects: number, seconds: number, failed: boolean): void
  /** Names where the counting queue's depth is read at each scrape. */
  watchCountingQueue(depth: () => number): void
  /** Names where the requests shed by the unkeyed ceiling, and those whose answer is held, are read at each scrape. */
  watchShedding(shedding: Shedding): void
  /** Serves GET /metrics on METRICS_HOST:METRICS_PORT; returns its URL, or undefined when METRICS_PORT is 0. */
  listen(): Promise<string | undefined>
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics
  }
}

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const STATEMENT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
const BATCH_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]

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
class RequestDurations extends Histogram<DurationLabel> {
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

/** Prometheus figures for this app, on a listener of their own that the public port never exposes. */
export default fp<{ pool?: PoolStats; counting?: PoolStats }>(
  async (app, options) => {
    const registry = new Registry()
    collectDefaultMetrics({ register: registry })

    const durations = new RequestDurations({
      name: 'animal_store_http_request_duration_seconds',
      help: 'Time from receiving a request to sending its response, by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: DURATION_BUCKETS,
      registers: [registry]
    })
    // The request count is the histogram's own count, copied at each scrape rather than kept twice.
    const requestCount = new Counter({
      name: 'animal_store_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [],
      collect() {
        this.reset()
        for (const [labels, count] of durations.counts()) this.inc(labels, count)
      }
    })
    registry.registerMetric(requestCount)
    // No database round trip: one in-memory update per response.
    app.addHook('onResponse', (request, reply, done) => {
      // Unmatched paths share one label so that scanners cannot grow the series without bound.
      durations.record(
        request.method,
        request.routeOptions.url ?? 'unmatched',
        reply.statusCode,
        reply.elapsedTime / 1000
      )
      done()
    })

    // Shed requests are counted where they are shed, most before Fastify sees them: copied in at each scrape.
    let shedding: Shedding = { shed: 0, held: 0 }
    let shedReported = 0
    const rateLimitRefusals = new Counter({
      name: 'animal_store_rate_limit_refusals_total',
      help: 'Requests refused by the rate limiter, by reason',
      labelNames: ['reason'] as const,
      registers: [registry],
      collect() {
        const { shed } = shedding
        this.inc({ reason: 'shed' }, shed - shedReported)
        shedReported = shed
      }
    })
    for (const reason of ['rate_limited', 'key_banned'] satisfies RateLimitRefusal[]) {
      rateLimitRefusals.inc({ reason }, 0)
    }
    const rateLimitBans = new Counter({
      name: 'animal_store_rate_limit_bans_total',
      help: 'API keys banned for sending while refused',
      registers: [registry]
    })

    // Plain numbers per request, copied into the counter at each scrape: prom-client's inc() hashes its labels.
    const keyRequests = Object.fromEntries(PLANS.map((plan) => [plan, { admitted: 0, refused: 0 }])) as Record<
      Plan,
      Record<Outcome, number>
    >
    const keyRequestsCounter = new Counter({
      name: 'animal_store_key_requests_total',
      help: 'Requests made with a valid key, by plan and by whether the rate limiter admitted or refused them',
      labelNames: ['plan', 'outcome'] as const,
      registers: [],
      collect() {
        this.reset()
        for (const plan of PLANS) {
          for (const outcome of OUTCOMES) this.inc({ plan, outcome }, keyRequests[plan][outcome])
        }
      }
    })
    registry.registerMetric(keyRequestsCounter)
    const countKeyRequest = (plan: Plan, outcome: Outcome) => {
      keyRequests[plan][outcome]++
    }

    // Observed once per statement, which counts many requests: no labels, so nothing is hashed.
    const statementDurations = new Histogram({
      name: 'animal_store_counting_statement_duration_seconds',
      help: "Time the rate limiter's counting statements took, failed ones included",
      buckets: STATEMENT_BUCKETS,
      registers: [registry]
    })
    const statementSubjects = new Histogram({
      name: 'animal_store_counting_statement_subjects',
      help: 'Subjects (accounts) each counting statement counted at once',
      buckets: BATCH_BUCKETS,
      registers: [registry]
    })
    const statementFailures = new Counter({
      name: 'animal_store_counting_statement_failures_total',
      help: 'Counting statements that failed, the database unreachable or too slow',
      registers: [registry]
    })
    const observeCountingStatement = (subjects: number, seconds: number, failed: boolean) => {
      statementDurations.observe(seconds)
      statementSubjects.observe(subjects)
      if (failed) statementFailures.inc()
    }

    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read())
        }
      })
    // Read at each scrape, so a request pays nothing for it.
    let countingQueueDepth = () => 0
    gauge(
      'animal_store_counting_queue_subjects',
      "Subjects waiting for the rate limiter's next counting statement; at COUNTING_QUEUE_MAX requests get 503",
      () => countingQueueDepth()
    )
    const watchCountingQueue = (depth: () => number) => {
      countingQueueDepth = depth
    }
    gauge(
      'animal_store_shed_held',
      'Requests shed by UNAUTHENTICATED_PER_SECOND whose 429 waits out SHED_HOLD_MS; at SHED_HOLD_MAX the rest are answered at once',
      () => shedding.held
    )
    const watchShedding = (source: Shedding) => {
      shedding = source
    }

    const { pool, counting } = options
    if (pool) {
      gauge(
        'animal_store_db_pool_connections',
        'Connections the database pool holds, busy or idle',
        () => pool.totalCount
      )
      gauge('animal_store_db_pool_idle_connections', 'Connections the database pool holds idle', () => pool.idleCount)
      gauge(
        'animal_store_db_pool_waiting_clients',
        'Queries waiting for a database connection',
        () => pool.waitingCount
      )
    }
    if (counting) {
      gauge(
        'animal_store_db_counting_connections',
        "Connections the rate limiter's counting pool holds, busy or idle",
        () => counting.totalCount
      )
      gauge(
        'animal_store_db_counting_idle_connections',
        "Connections the rate limiter's counting pool holds idle",
        () => counting.idleCount
      )
      gauge(
        'animal_store_db_counting_waiting_clients',
        "Counting statements waiting for a connection of the rate limiter's counting pool",
        () => counting.waitingCount
      )
    }

    let server: Server | undefined
    let url: string | undefined
    async function listen(): Promise<string | undefined> {
      const { METRICS_HOST: host, METRICS_PORT: port } = app.config
      if (port === 0 || server) return url
      server = createServer((request, response) => {
        const path = request.url?.split('?')[0]
        if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
          response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found\n')
          return
        }
        registry.metrics().then(
          (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
          (err: unknown) => {
            app.log.error({ err }, 'metrics collection failed')
            response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('Metrics collection failed\n')
          }
        )
      })
      const listening = server
      await new Promise<void>((resolve, reject) => {
        listening.once('error', reject)
        listening.listen({ host, port }, () => resolve())
      })
      const address = listening.address() as AddressInfo
      url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}/metrics`
      app.log.info(`metrics on ${url}`)
      return url
    }

    app.addHook('onClose', async () => {
      if (!server) return
      const closing = server
      await new Promise<void>((resolve) => closing.close(() => resolve()))
    })

    app.decorate('metrics', {
      registry,
      rateLimitRefusals,
      rateLimitBans,
      countKeyRequest,
      observeCountingStatement,
      watchCountingQueue,
      watchShedding,
      listen
    } satisfies Metrics)
  },
  { name: 'metrics', decorators: { fastify: ['config'] } }
)
