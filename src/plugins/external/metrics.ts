import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { RefusalReason } from '../../repositories/rate-limits.js'
import { DURATION_BUCKETS, RequestDurations } from './request-durations.js'

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

/** The plans the seed makes: their series exist at 0 from the start; a plan made later appears when first used. */
const SEED_PLANS = ['free', 'pro', 'business', 'enterprise']
type Outcome = 'admitted' | 'refused'
const OUTCOMES: Outcome[] = ['admitted', 'refused']

export interface Metrics {
  /** This app's own registry, so several apps in one process do not share figures. */
  registry: Registry
  rateLimitRefusals: Counter<'reason'>
  rateLimitBans: Counter
  /** Admitted requests a shadow limit would have refused, by window. */
  rateLimitWouldRefuse: Counter<'window'>
  /** Counts one request made with a valid key, by its plan and the rate limiter's outcome. */
  countKeyRequest(plan: string, outcome: Outcome): void
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

const STATEMENT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
const BATCH_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]

/** A gauge read at each scrape, so a request pays nothing for it. */
const gauge = (registry: Registry, name: string, help: string, read: () => number) =>
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read())
    }
  })

/** Every response, by method, route template and status: its duration, and the count of them. */
function responseFigures(app: FastifyInstance, registry: Registry) {
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
}

/** What the rate limits decided: refusals by reason (shedding included), bans, and keyed requests by plan. */
function rateLimitFigures(registry: Registry) {
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
  for (const reason of ['rate_limited', 'credits_exhausted', 'key_banned'] satisfies RefusalReason[]) {
    rateLimitRefusals.inc({ reason }, 0)
  }
  gauge(
    registry,
    'animal_store_shed_held',
    'Requests shed by UNAUTHENTICATED_PER_SECOND whose 429 waits out SHED_HOLD_MS; at SHED_HOLD_MAX the rest are answered at once',
    () => shedding.held
  )
  const rateLimitBans = new Counter({
    name: 'animal_store_rate_limit_bans_total',
    help: 'API keys banned for sending while refused',
    registers: [registry]
  })
  const rateLimitWouldRefuse = new Counter({
    name: 'animal_store_rate_limit_would_refuse_total',
    help: 'Requests admitted that a shadow limit would have refused, by window',
    labelNames: ['window'] as const,
    registers: [registry]
  })

  // Plain numbers per request, copied into the counter at each scrape: prom-client's inc() hashes its labels.
  const keyRequests = new Map<string, Record<Outcome, number>>(
    SEED_PLANS.map((plan) => [plan, { admitted: 0, refused: 0 }])
  )
  registry.registerMetric(
    new Counter({
      name: 'animal_store_key_requests_total',
      help: 'Requests made with a valid key, by plan and by whether the rate limiter admitted or refused them',
      labelNames: ['plan', 'outcome'] as const,
      registers: [],
      collect() {
        this.reset()
        for (const [plan, counts] of keyRequests) {
          for (const outcome of OUTCOMES) this.inc({ plan, outcome }, counts[outcome])
        }
      }
    })
  )
  return {
    rateLimitRefusals,
    rateLimitBans,
    rateLimitWouldRefuse,
    countKeyRequest(plan: string, outcome: Outcome) {
      let counts = keyRequests.get(plan)
      if (!counts) keyRequests.set(plan, (counts = { admitted: 0, refused: 0 }))
      counts[outcome]++
    },
    watchShedding(source: Shedding) {
      shedding = source
    }
  }
}

/** The rate limiter's counting statements: their duration, subjects and failures, and the queue waiting for the next. */
function countingFigures(registry: Registry) {
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
  let countingQueueDepth = () => 0
  gauge(
    registry,
    'animal_store_counting_queue_subjects',
    "Subjects waiting for the rate limiter's next counting statement; at COUNTING_QUEUE_MAX requests get 503",
    () => countingQueueDepth()
  )
  return {
    observeCountingStatement(subjects: number, seconds: number, failed: boolean) {
      statementDurations.observe(seconds)
      statementSubjects.observe(subjects)
      if (failed) statementFailures.inc()
    },
    watchCountingQueue(depth: () => number) {
      countingQueueDepth = depth
    }
  }
}

/** The connections of the database pool and of the rate limiter's counting pool, for those the app has. */
function poolFigures(registry: Registry, { pool, counting }: { pool?: PoolStats; counting?: PoolStats }) {
  if (pool) {
    gauge(
      registry,
      'animal_store_db_pool_connections',
      'Connections the database pool holds, busy or idle',
      () => pool.totalCount
    )
    gauge(
      registry,
      'animal_store_db_pool_idle_connections',
      'Connections the database pool holds idle',
      () => pool.idleCount
    )
    gauge(
      registry,
      'animal_store_db_pool_waiting_clients',
      'Queries waiting for a database connection',
      () => pool.waitingCount
    )
  }
  if (counting) {
    gauge(
      registry,
      'animal_store_db_counting_connections',
      "Connections the rate limiter's counting pool holds, busy or idle",
      () => counting.totalCount
    )
    gauge(
      registry,
      'animal_store_db_counting_idle_connections',
      "Connections the rate limiter's counting pool holds idle",
      () => counting.idleCount
    )
    gauge(
      registry,
      'animal_store_db_counting_waiting_clients',
      "Counting statements waiting for a connection of the rate limiter's counting pool",
      () => counting.waitingCount
    )
  }
}

/** The listener of its own that serves GET /metrics, closed with the app; `listen` starts it once. */
function metricsListener(app: FastifyInstance, registry: Registry) {
  let server: Server | undefined
  let url: string | undefined
  app.addHook('onClose', async () => {
    if (!server) return
    const closing = server
    await new Promise<void>((resolve) => closing.close(() => resolve()))
  })
  return async function listen(): Promise<string | undefined> {
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
}

/** Prometheus figures for this app, on a listener of their own that the public port never exposes. */
export default fp<{ pool?: PoolStats; counting?: PoolStats }>(
  async (app, options) => {
    const registry = new Registry()
    collectDefaultMetrics({ register: registry })
    responseFigures(app, registry)
    const rateLimits = rateLimitFigures(registry)
    const counting = countingFigures(registry)
    poolFigures(registry, options)
    app.decorate('metrics', {
      registry,
      ...rateLimits,
      ...counting,
      listen: metricsListener(app, registry)
    } satisfies Metrics)
  },
  { name: 'metrics', decorators: { fastify: ['config'] } }
)
