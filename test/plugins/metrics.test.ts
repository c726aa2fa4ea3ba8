import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { DatabaseClock } from '../../src/db/clock.js'
import { freePort } from '../../src/db/embedded.js'
import { QuotaCounter } from '../../src/limits/quota-counter.js'
import type { QuotaRequest } from '../../src/repositories/rate-limits.js'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { createTestApp, issueTestKey } from '../helpers/app.js'
import { holdDatabaseClock } from '../helpers/traffic.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

let database: TestDatabase
let app: FastifyInstance
let metricsUrl: string
let key: string

beforeAll(async () => {
  database = await createTestDatabase()
  app = await createTestApp(database, { env: { METRICS_PORT: String(await freePort()) } })
  metricsUrl = (await app.metrics.listen())!
  key = await issueTestKey(database)
})
afterAll(async () => {
  await app.close()
  await database.drop()
})

async function scrape(url = metricsUrl) {
  const response = await fetch(url)
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
  return response.text()
}

/** The value of one sample, found by its name and exact label set as Prometheus prints them. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((entry) => entry.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe('/metrics', () => {
  it('is served on METRICS_HOST:METRICS_PORT and never on the public port', async () => {
    expect(metricsUrl).toBe(`http://127.0.0.1:${app.config.METRICS_PORT}/metrics`)
    const publicScrape = await app.inject({ method: 'GET', url: '/metrics' })
    expect(publicScrape.statusCode).toBe(404)
    expect(publicScrape.json()).toMatchObject({ code: 'not_found' })
    expect((await fetch(metricsUrl.replace('/metrics', '/v1/pets'))).status).toBe(404)
  })

  it('counts requests and their latency by method, route template and status', async () => {
    const before = await scrape()
    for (let i = 0; i < 3; i++) {
      expect(
        (await app.inject({ method: 'GET', url: '/v1/pets?limit=5', headers: { authorization: `Bearer ${key}` } }))
          .statusCode
      ).toBe(200)
    }
    expect(
      (await app.inject({ method: 'GET', url: '/v1/pets/123', headers: { authorization: `Bearer ${key}` } })).statusCode
    ).toBe(404)
    expect(
      (await app.inject({ method: 'GET', url: '/v1/pets?limit=0', headers: { authorization: `Bearer ${key}` } }))
        .statusCode
    ).toBe(400)
    expect((await app.inject({ method: 'GET', url: '/wp-admin/setup.php' })).statusCode).toBe(404)
    const after = await scrape()

    const delta = (series: string) => (sample(after, series) ?? 0) - (sample(before, series) ?? 0)
    expect(delta('animal_store_http_requests_total{method="GET",route="/v1/pets",status="200"}')).toBe(3)
    expect(delta('animal_store_http_requests_total{method="GET",route="/v1/pets/:petId",status="404"}')).toBe(1)
    expect(delta('animal_store_http_requests_total{method="GET",route="/v1/pets",status="400"}')).toBe(1)
    expect(delta('animal_store_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1)
    expect(after).not.toContain('wp-admin')
    expect(delta('animal_store_http_request_duration_seconds_count{method="GET",route="/v1/pets",status="200"}')).toBe(
      3
    )
    expect(
      sample(
        after,
        'animal_store_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/v1/pets",status="200"}'
      )
    ).toBeGreaterThanOrEqual(3)
    expect(after).toMatch(/^# TYPE animal_store_http_request_duration_seconds histogram$/m)
    expect(after).toMatch(/^process_cpu_user_seconds_total /m)
  })

  it('counts rate-limit refusals by reason, and bans, as the limiter decides them', async () => {
    const limited = await createTestApp(database, { env: { METRICS_PORT: String(await freePort()), BAN_AFTER: '1' } })
    try {
      const url = (await limited.metrics.listen())!
      const fresh = await scrape(url)
      expect(sample(fresh, 'animal_store_rate_limit_refusals_total{reason="rate_limited"}')).toBe(0)
      expect(sample(fresh, 'animal_store_rate_limit_refusals_total{reason="key_banned"}')).toBe(0)
      expect(sample(fresh, 'animal_store_rate_limit_bans_total')).toBe(0)

      const { key } = await issueApiKey(database.db, { plan: 'enterprise', limits: { perMinute: 2, perDay: 100 } })
      await holdDatabaseClock(database)
      const codes: string[] = []
      for (let i = 0; i < 6; i++) {
        const response = await limited.inject({
          method: 'GET',
          url: '/v1/pets',
          headers: { authorization: `Bearer ${key}` }
        })
        codes.push(response.statusCode === 200 ? 'ok' : response.json().code)
      }
      // Two admitted; the first 429 and BAN_AFTER (1) more are rate_limited; the next one bans.
      expect(codes).toEqual(['ok', 'ok', 'rate_limited', 'rate_limited', 'key_banned', 'key_banned'])
      const counted = await scrape(url)
      expect(sample(counted, 'animal_store_rate_limit_refusals_total{reason="rate_limited"}')).toBe(2)
      expect(sample(counted, 'animal_store_rate_limit_refusals_total{reason="key_banned"}')).toBe(2)
      expect(sample(counted, 'animal_store_rate_limit_bans_total')).toBe(1)
    } finally {
      await limited.close()
    }
  })

  it('reads the counting pool’s gauges at scrape time', async () => {
    const text = await scrape()
    expect(sample(text, 'animal_store_db_counting_connections')).toBe(app.database.counting.totalCount)
    expect(sample(text, 'animal_store_db_counting_idle_connections')).toBe(app.database.counting.idleCount)
    expect(sample(text, 'animal_store_db_counting_waiting_clients')).toBe(0)
  })

  it('reads the database pool’s gauges at scrape time', async () => {
    const held: pg.PoolClient[] = []
    for (let i = 0; i < 3; i++) held.push(await app.database.pool.connect())
    // A fourth query waits while the pool is full.
    const waiting = Promise.all(Array.from({ length: 8 }, () => app.database.pool.query('SELECT 1')))
    // The pool as the scrape's gauges find it: they are read before the scrape's own readiness probe queues.
    const { totalCount, idleCount, waitingCount } = app.database.pool
    try {
      const busy = await scrape()
      expect(sample(busy, 'animal_store_db_pool_connections')).toBe(totalCount)
      expect(sample(busy, 'animal_store_db_pool_connections')).toBeGreaterThanOrEqual(3)
      expect(sample(busy, 'animal_store_db_pool_idle_connections')).toBe(idleCount)
      expect(sample(busy, 'animal_store_db_pool_waiting_clients')).toBe(waitingCount)
      expect(waitingCount).toBeGreaterThan(0)
    } finally {
      for (const client of held) client.release()
      await waiting
    }
    // Joins the busy scrape's readiness probe, if still under way, so that it holds no connection.
    expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200)
    const idle = app.database.pool.idleCount
    const quiet = await scrape()
    expect(sample(quiet, 'animal_store_db_pool_waiting_clients')).toBe(0)
    expect(sample(quiet, 'animal_store_db_pool_idle_connections')).toBe(idle)
    expect(sample(quiet, 'animal_store_db_pool_idle_connections')).toBeGreaterThanOrEqual(3)
  })

  it('keeps a registry per app, so two apps in one process count apart', async () => {
    const other = await createTestApp(database, { env: { METRICS_PORT: String(await freePort()) } })
    try {
      const otherUrl = (await other.metrics.listen())!
      other.metrics.rateLimitBans.inc(5)
      await other.inject({ method: 'GET', url: '/health/live' })
      const mine = await scrape()
      const theirs = await scrape(otherUrl)
      expect(sample(theirs, 'animal_store_rate_limit_bans_total')).toBe(5)
      expect(sample(mine, 'animal_store_rate_limit_bans_total')).toBe(0)
      expect(sample(theirs, 'animal_store_http_requests_total{method="GET",route="/health/live",status="200"}')).toBe(1)
      expect(
        sample(mine, 'animal_store_http_requests_total{method="GET",route="/health/live",status="200"}')
      ).toBeUndefined()
    } finally {
      await other.close()
    }
  })

  it('has no listener when METRICS_PORT is 0, and closes its listener with the app', async () => {
    const silent = await createTestApp(database, { env: { METRICS_PORT: '0' } })
    expect(await silent.metrics.listen()).toBeUndefined()
    await silent.close()

    const port = await freePort()
    const closing = await createTestApp(database, { env: { METRICS_PORT: String(port) } })
    const url = (await closing.metrics.listen())!
    await scrape(url)
    await closing.close()
    await expect(fetch(url)).rejects.toThrow()
  })
})

describe('requests with a valid key by plan', () => {
  it('are counted as admitted or refused', async () => {
    // The window is the database's minute: held, it cannot end between the requests the test counts.
    await holdDatabaseClock(database)
    const { key: free } = await issueApiKey(database.db, { plan: 'enterprise', limits: { perMinute: 2, perDay: 100 } })
    const series = (outcome: string) => `animal_store_key_requests_total{plan="enterprise",outcome="${outcome}"}`
    const before = await scrape()
    for (let i = 0; i < 4; i++) {
      await app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${free}` } })
    }
    const after = await scrape()
    expect(sample(after, series('admitted'))! - sample(before, series('admitted'))!).toBe(2)
    expect(sample(after, series('refused'))! - sample(before, series('refused'))!).toBe(2)
    expect(sample(after, 'animal_store_key_requests_total{plan="free",outcome="refused"}')).toBe(0)
  })
})

/** One key's request, as the limiter asks for it. */
async function keyRequest(): Promise<QuotaRequest> {
  const { id, accountId } = await issueApiKey(database.db, { plan: 'free' })
  return { apiKeyId: id, accountId, cost: 1, want: 1, returned: 0, returnedAt: 0, banAfter: null, banSeconds: 900 }
}

describe('the counting statements', () => {
  const statement = 'animal_store_counting_statement'

  it('are counted as the limiter sends them', async () => {
    const before = await scrape()
    const { key } = await issueApiKey(database.db, { plan: 'enterprise', limits: { perMinute: 1000, perDay: 10_000 } })
    const count = `${statement}_duration_seconds_count`
    // The first request is counted with its key's lookup; the next, its key cached, by the limiter. A
    // key is looked up (and counted with it) on every request while the cache's change channel is
    // not trusted, so requests go on until one is cached.
    let after = ''
    await vi.waitFor(
      async () => {
        const response = await app.inject({
          method: 'GET',
          url: '/v1/pets',
          headers: { authorization: `Bearer ${key}` }
        })
        expect(response.statusCode).toBe(200)
        after = await scrape()
        expect(sample(after, count)! - (sample(before, count) ?? 0)).toBeGreaterThanOrEqual(1)
      },
      { timeout: 10_000, interval: 100 }
    )
    expect(after).toMatch(new RegExp(`^# TYPE ${statement}_subjects histogram$`, 'm'))
  })

  it('record how many subjects each one counted and how long it took', async () => {
    const counter = new QuotaCounter(app.database.counting, new DatabaseClock(), {
      observe: app.metrics.observeCountingStatement
    })
    const requests = await Promise.all([keyRequest(), keyRequest(), keyRequest()])
    const before = await scrape()
    // Requests due in the same event-loop turn go in one statement.
    await Promise.all(requests.map((request) => counter.count(request)))
    const after = await scrape()
    const delta = (series: string) => (sample(after, series) ?? 0) - (sample(before, series) ?? 0)
    expect(delta(`${statement}_subjects_count`)).toBe(1)
    expect(delta(`${statement}_subjects_sum`)).toBe(3)
    expect(delta(`${statement}_subjects_bucket{le="2"}`)).toBe(0)
    expect(delta(`${statement}_subjects_bucket{le="5"}`)).toBe(1)
    expect(delta(`${statement}_duration_seconds_count`)).toBe(1)
    expect(delta(`${statement}_duration_seconds_sum`)).toBeGreaterThan(0)
    expect(delta(`${statement}_failures_total`)).toBe(0)
  })

  it('count the statements that fail', async () => {
    const unreachable = new pg.Pool({
      connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/postgres`,
      connectionTimeoutMillis: 2000
    })
    try {
      const counter = new QuotaCounter(unreachable, new DatabaseClock(), {
        observe: app.metrics.observeCountingStatement
      })
      const request = await keyRequest()
      const before = await scrape()
      await expect(counter.count(request)).rejects.toThrow()
      const after = await scrape()
      const delta = (series: string) => (sample(after, series) ?? 0) - (sample(before, series) ?? 0)
      expect(delta(`${statement}_failures_total`)).toBe(1)
      expect(delta(`${statement}_duration_seconds_count`)).toBe(1)
    } finally {
      await unreachable.end()
    }
  })
})

describe('readiness and the database', () => {
  it('are what the last probe found, and the first scrape waits for one', async () => {
    const text = await scrape()
    expect(sample(text, 'animal_store_ready')).toBe(1)
    expect(sample(text, 'animal_store_db_up')).toBe(1)
  })
})

describe('the event loop', () => {
  it('has its delay measured: a stall shows in the next scrape', async () => {
    await scrape()
    // The monitor's timer (every 10 ms) measures the gap since its last tick; a scrape resets it, so
    // a tick must come before the stall and another after it, as it does between real scrapes.
    const tick = () => new Promise((resolve) => setTimeout(resolve, 50))
    await tick()
    // Nothing else runs while the loop is held.
    const until = performance.now() + 300
    while (performance.now() < until);
    await tick()
    const text = await scrape()
    expect(sample(text, 'nodejs_eventloop_lag_max_seconds')).toBeGreaterThanOrEqual(0.25)
    expect(sample(text, 'nodejs_eventloop_lag_p99_seconds')).toBeGreaterThan(0)
  })
})
