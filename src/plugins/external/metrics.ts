import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'

/** The pg Pool counters read at each scrape. */
export interface PoolStats {
  readonly totalCount: number
  readonly idleCount: number
  readonly waitingCount: number
}

export type RateLimitRefusal = 'rate_limited' | 'key_banned'
type Plan = 'free' | 'pro' | 'business' | 'enterprise'
const PLANS: Plan[] = ['free', 'pro', 'business', 'enterprise']

export interface Metrics {
  /** This app's own registry, so several apps in one process do not share figures. */
  registry: Registry
  rateLimitRefusals: Counter<'reason'>
  rateLimitBans: Counter
  /** Requests with a valid key by plan: counted per request, bound to each plan at start-up. */
  keyRequests: Record<'admitted' | 'refused', Record<Plan, { inc(amount?: number): void }>>
  /** Serves GET /metrics on METRICS_HOST:METRICS_PORT; returns its URL, or undefined when METRICS_PORT is 0. */
  listen(): Promise<string | undefined>
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics
  }
}

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** Prometheus figures for this app, on a listener of their own that the public port never exposes. */
export default fp<{ pool?: PoolStats }>(
  async (app, options) => {
    const registry = new Registry()
    collectDefaultMetrics({ register: registry })

    const labelNames = ['method', 'route', 'status'] as const
    const durationName = 'animal_store_http_request_duration_seconds'
    const durations = new Histogram({
      name: durationName,
      help: 'Time from receiving a request to sending its response, by method, route template and status',
      labelNames,
      buckets: DURATION_BUCKETS,
      registers: [registry]
    })
    // The request count is the histogram's own count, copied at each scrape rather than kept twice.
    const countSeries = `${durationName}_count`
    const requestCount = new Counter({
      name: 'animal_store_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status',
      labelNames,
      registers: [],
      async collect() {
        this.reset()
        for (const { metricName, labels, value } of (await durations.get()).values) {
          if (metricName === countSeries) this.inc(labels, value)
        }
      }
    })
    registry.registerMetric(requestCount)
    // No database round trip: one in-memory update per response.
    app.addHook('onResponse', (request, reply, done) => {
      // Unmatched paths share one label so that scanners cannot grow the series without bound.
      const labels = {
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status: reply.statusCode
      }
      durations.observe(labels, reply.elapsedTime / 1000)
      done()
    })

    const rateLimitRefusals = new Counter({
      name: 'animal_store_rate_limit_refusals_total',
      help: 'Requests refused by the rate limiter, by reason',
      labelNames: ['reason'] as const,
      registers: [registry]
    })
    for (const reason of ['rate_limited', 'key_banned'] satisfies RateLimitRefusal[]) {
      rateLimitRefusals.inc({ reason }, 0)
    }
    const rateLimitBans = new Counter({
      name: 'animal_store_rate_limit_bans_total',
      help: 'API keys banned for sending while refused',
      registers: [registry]
    })

    const keyRequestsCounter = new Counter({
      name: 'animal_store_key_requests_total',
      help: 'Requests made with a valid key, by plan and by whether the rate limiter admitted or refused them',
      labelNames: ['plan', 'outcome'] as const,
      registers: [registry]
    })
    const byPlan = (outcome: 'admitted' | 'refused') =>
      Object.fromEntries(PLANS.map((plan) => [plan, keyRequestsCounter.labels({ plan, outcome })])) as Record<
        Plan,
        { inc(amount?: number): void }
      >
    const keyRequests = { admitted: byPlan('admitted'), refused: byPlan('refused') }
    for (const plan of PLANS) for (const outcome of ['admitted', 'refused'] as const) keyRequests[outcome][plan].inc(0)

    const pool = options.pool
    if (pool) {
      const poolGauge = (name: string, help: string, read: (stats: PoolStats) => number) =>
        new Gauge({
          name,
          help,
          registers: [registry],
          collect() {
            this.set(read(pool))
          }
        })
      poolGauge(
        'animal_store_db_pool_connections',
        'Connections the database pool holds, busy or idle',
        (s) => s.totalCount
      )
      poolGauge('animal_store_db_pool_idle_connections', 'Connections the database pool holds idle', (s) => s.idleCount)
      poolGauge(
        'animal_store_db_pool_waiting_clients',
        'Queries waiting for a database connection',
        (s) => s.waitingCount
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

    app.decorate('metrics', { registry, rateLimitRefusals, rateLimitBans, keyRequests, listen } satisfies Metrics)
  },
  { name: 'metrics', decorators: { fastify: ['config'] } }
)
