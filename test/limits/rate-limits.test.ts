import type { FastifyInstance, InjectOptions } from 'fastify'
import { sql } from 'kysely'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { connectDatabase } from '../../src/db/connect.js'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { consumeQuota, deleteExpiredCounters, type QuotaRequest } from '../../src/repositories/rate-limits.js'
import { createTestApp, manualClock } from '../helpers/app.js'
import { startStoppableCluster } from '../helpers/cluster.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

let database: TestDatabase
const NOON = Date.parse('2027-01-01T12:00:15.200Z')
const clock = manualClock(NOON)
const apps: FastifyInstance[] = []

beforeAll(async () => {
  database = await createTestDatabase()
})
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()))
})
afterAll(async () => {
  await database.drop()
})
beforeEach(async () => {
  clock.set(NOON)
  await sql`TRUNCATE rate_limit_counters`.execute(database.db)
})

async function instance(env: Record<string, string> = {}) {
  const app = await createTestApp(database, { clock, env })
  apps.push(app)
  return app
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` })

/** Sends `count` requests, `concurrency` at a time, and returns them in order. */
async function fire(app: FastifyInstance, count: number, options: InjectOptions, concurrency = 25) {
  const responses: Awaited<ReturnType<FastifyInstance['inject']>>[] = []
  for (let start = 0; start < count; start += concurrency) {
    const batch = Array.from({ length: Math.min(concurrency, count - start) }, () => app.inject(options))
    responses.push(...(await Promise.all(batch)))
  }
  return responses
}

/** Keeps `concurrency` requests in flight until one is refused, then lets those in flight finish. */
async function fireUntilRefused(app: FastifyInstance, options: InjectOptions, concurrency: number, cap = 5_000) {
  const responses: Awaited<ReturnType<FastifyInstance['inject']>>[] = []
  let refused = false
  const worker = async () => {
    while (!refused && responses.length < cap) {
      const response = await app.inject(options)
      responses.push(response)
      if (response.statusCode === 429) refused = true
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return responses
}

const statuses = (responses: { statusCode: number }[]) =>
  responses.reduce<Record<number, number>>((tally, { statusCode }) => ({ ...tally, [statusCode]: (tally[statusCode] ?? 0) + 1 }), {})

describe('plan windows', () => {
  it.each([
    ['free', 60, 1000],
    ['pro', 300, 10000],
    ['business', 1000, 100000]
  ] as const)('admits exactly %s\'s %i requests in a minute, then refuses', async (plan, perMinute, perDay) => {
    const app = await instance()
    const { key } = await issueApiKey(database.db, { plan })
    const responses = await fire(app, perMinute + 15, { method: 'GET', url: '/v1/pets?limit=1', headers: bearer(key) })
    expect(statuses(responses)).toEqual({ 200: perMinute, 429: 15 })
    expect(responses.slice(0, perMinute).every((response) => response.statusCode === 200)).toBe(true)
    const refused = responses[perMinute]!
    expect(refused.json()).toEqual({ code: 'rate_limited', message: 'Rate limit exceeded; retry in 45 s', status: 429 })
    expect(refused.headers['ratelimit-policy']).toBe(`"minute";q=${perMinute};w=60, "day";q=${perDay};w=86400`)
  })

  it('enforces the day window of an enterprise key across minutes, until the UTC day ends', async () => {
    const app = await instance()
    const { key } = await issueApiKey(database.db, { plan: 'enterprise', limits: { perMinute: 100, perDay: 25 } })
    const request = { method: 'GET' as const, url: '/v1/pets', headers: bearer(key) }
    const tally: Record<number, number>[] = []
    for (let minute = 0; minute < 3; minute++) {
      clock.set(NOON + minute * 60_000)
      tally.push(statuses(await fire(app, 10, request)))
    }
    expect(tally).toEqual([{ 200: 10 }, { 200: 10 }, { 200: 5, 429: 5 }])
    const counted = await sql<{ day_used: number }>`SELECT day_used FROM rate_limit_counters`.execute(database.db)
    expect(counted.rows[0]!.day_used).toBe(25)

    clock.set(Date.parse('2027-01-01T23:59:59.500Z'))
    const refused = await app.inject(request)
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBe('1')
    expect(refused.headers['x-ratelimit-limit']).toBe('25')
    expect(refused.headers['x-ratelimit-remaining']).toBe('0')
    expect(refused.headers['x-ratelimit-reset']).toBe(String(Date.parse('2027-01-02T00:00:00Z') / 1000))
    expect(refused.headers.ratelimit).toBe('"day";r=0;t=1')

    clock.set(Date.parse('2027-01-02T00:00:00Z'))
    const nextDay = await app.inject(request)
    expect(nextDay.statusCode).toBe(200)
    expect(nextDay.headers['x-ratelimit-remaining']).toBe('24')
  })
})

describe('headers', () => {
  it('are on 200, 400, 404, 401 and 429 responses and count every outcome', async () => {
    const app = await instance({ UNAUTHENTICATED_PER_MINUTE: '3' })
    const { key } = await issueApiKey(database.db, { plan: 'free' })
    const ok = await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key) })
    const invalid = await app.inject({ method: 'GET', url: '/v1/pets?limit=0', headers: bearer(key) })
    const missing = await app.inject({ method: 'GET', url: '/v1/pets/999', headers: bearer(key) })
    const noRoute = await app.inject({ method: 'GET', url: '/v1/owners', headers: bearer(key) })
    expect([ok, invalid, missing, noRoute].map((response) => response.statusCode)).toEqual([200, 400, 404, 404])
    expect([ok, invalid, missing, noRoute].map((response) => response.headers['x-ratelimit-remaining'])).toEqual(['59', '58', '57', '56'])
    for (const response of [ok, invalid, missing, noRoute]) {
      expect(response.headers['x-ratelimit-limit']).toBe('60')
      expect(response.headers['x-ratelimit-reset']).toBe(String(Date.parse('2027-01-01T12:01:00Z') / 1000))
      expect(response.headers['ratelimit-policy']).toBe('"minute";q=60;w=60, "day";q=1000;w=86400')
    }
    expect(noRoute.headers.ratelimit).toBe('"minute";r=56;t=45')

    const unauthorized = await app.inject({ method: 'GET', url: '/v1/pets' })
    expect(unauthorized.statusCode).toBe(401)
    expect(unauthorized.headers['x-ratelimit-limit']).toBe('3')
    expect(unauthorized.headers['x-ratelimit-remaining']).toBe('2')
    expect(unauthorized.headers['ratelimit-policy']).toBe('"minute";q=3;w=60')

    await fire(app, 59, { method: 'GET', url: '/v1/pets', headers: bearer(key) })
    const limited = await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key) })
    expect(limited.statusCode).toBe(429)
    expect(limited.headers['x-ratelimit-remaining']).toBe('0')
    expect(limited.headers['x-ratelimit-limit']).toBe('60')
  })

  it('describe the window with the fewest requests left', async () => {
    const app = await instance()
    const { key } = await issueApiKey(database.db, { plan: 'enterprise', limits: { perMinute: 10, perDay: 3 } })
    const response = await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key) })
    expect(response.headers['x-ratelimit-limit']).toBe('3')
    expect(response.headers['x-ratelimit-remaining']).toBe('2')
    expect(response.headers['x-ratelimit-reset']).toBe(String(Date.parse('2027-01-02T00:00:00Z') / 1000))
    expect(response.headers.ratelimit).toBe(`"day";r=2;t=${Math.ceil((Date.parse('2027-01-02T00:00:00Z') - NOON) / 1000)}`)
  })

  it('on a tie, describe the window that resets first', async () => {
    const app = await instance()
    const { key } = await issueApiKey(database.db, { plan: 'enterprise', limits: { perMinute: 5, perDay: 5 } })
    const response = await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key) })
    expect(response.headers['x-ratelimit-remaining']).toBe('4')
    expect(response.headers.ratelimit).toBe('"minute";r=4;t=45')
    expect(response.headers['x-ratelimit-reset']).toBe(String(Date.parse('2027-01-01T12:01:00Z') / 1000))
  })

  it('give Retry-After in whole seconds until the minute resets, and admit again at the reset instant', async () => {
    const app = await instance()
    const { key } = await issueApiKey(database.db, { plan: 'free' })
    const request = { method: 'GET' as const, url: '/v1/pets', headers: bearer(key) }
    await fire(app, 60, request)
    const refused = await app.inject(request)
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBe('45')
    expect(refused.headers['x-ratelimit-reset']).toBe(String(Date.parse('2027-01-01T12:01:00Z') / 1000))
    expect(refused.headers.ratelimit).toBe('"minute";r=0;t=45')

    clock.set(Date.parse('2027-01-01T12:00:59.999Z'))
    const lastMoment = await app.inject(request)
    expect(lastMoment.statusCode).toBe(429)
    expect(lastMoment.headers['retry-after']).toBe('1')

    clock.set(Date.parse('2027-01-01T12:01:00.000Z'))
    const reset = await app.inject(request)
    expect(reset.statusCode).toBe(200)
    expect(reset.headers['x-ratelimit-remaining']).toBe('59')
    expect(reset.headers['x-ratelimit-reset']).toBe(String(Date.parse('2027-01-01T12:02:00Z') / 1000))
  })
})

describe('bans', () => {
  it('bans a key that keeps sending while refused, on every instance, until the ban ends', async () => {
    const env = { BAN_AFTER: '3', BAN_SECONDS: '120' }
    const app = await instance(env)
    const { key, id } = await issueApiKey(database.db, { plan: 'free' })
    const request = { method: 'GET' as const, url: '/v1/pets', headers: bearer(key) }
    await fire(app, 60, request)
    // The first 429, then BAN_AFTER further ones are still rate_limited; the next one bans.
    const refusals = await fire(app, 5, request, 1)
    expect(refusals.map((response) => response.json().code)).toEqual([
      'rate_limited',
      'rate_limited',
      'rate_limited',
      'rate_limited',
      'key_banned'
    ])
    const banned = refusals.at(-1)!
    expect(banned.statusCode).toBe(429)
    expect(banned.headers['retry-after']).toBe('120')
    expect(banned.headers['x-ratelimit-reset']).toBe(String(Math.ceil((NOON + 120_000) / 1000)))

    const { rows } = await sql<{ banned_until: Date }>`
      SELECT banned_until FROM rate_limit_counters WHERE subject = ${`key:${id}`}`.execute(database.db)
    expect(rows[0]!.banned_until.getTime()).toBe(NOON + 120_000)

    // A new minute does not lift the ban, and another instance, knowing nothing yet, enforces it.
    clock.set(NOON + 119_000)
    const other = await instance(env)
    const elsewhere = await other.inject(request)
    expect(elsewhere.json().code).toBe('key_banned')
    expect(elsewhere.headers['retry-after']).toBe('1')

    clock.set(NOON + 120_000)
    expect((await app.inject(request)).statusCode).toBe(200)
    expect((await other.inject(request)).statusCode).toBe(200)
  })

  it('does not ban a key that stops at the first 429s', async () => {
    const app = await instance({ BAN_AFTER: '3' })
    const { key } = await issueApiKey(database.db, { plan: 'free' })
    const request = { method: 'GET' as const, url: '/v1/pets', headers: bearer(key) }
    await fire(app, 64, request)
    clock.advance(60_000)
    expect((await app.inject(request)).statusCode).toBe(200)
  })
})

describe('requests without a valid key', () => {
  it('are limited per client address, and a valid key from that address keeps its own budget', async () => {
    const app = await instance({ UNAUTHENTICATED_PER_MINUTE: '5' })
    const guesses = await fire(app, 7, { method: 'GET', url: '/v1/pets', headers: { authorization: 'Bearer ask_guess' } }, 1)
    expect(guesses.map((response) => response.statusCode)).toEqual([401, 401, 401, 401, 401, 429, 429])
    const refused = guesses.at(-1)!
    expect(refused.json().code).toBe('rate_limited')
    expect(refused.headers['retry-after']).toBe('45')
    expect(refused.headers['ratelimit-policy']).toBe('"minute";q=5;w=60')
    expect((await app.inject({ method: 'GET', url: '/v1/pets' })).statusCode).toBe(429)

    const { key } = await issueApiKey(database.db, { plan: 'free' })
    expect((await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key) })).statusCode).toBe(200)
  })

  it('ignore X-Forwarded-For unless TRUST_PROXY says so', async () => {
    const untrusting = await instance({ UNAUTHENTICATED_PER_MINUTE: '2' })
    const spoofed = await Promise.all(
      ['1.1.1.1', '2.2.2.2', '3.3.3.3'].map((address) =>
        untrusting.inject({ method: 'GET', url: '/v1/pets', headers: { 'x-forwarded-for': address } })
      )
    )
    expect(spoofed.map((response) => response.statusCode).sort()).toEqual([401, 401, 429])

    await sql`TRUNCATE rate_limit_counters`.execute(database.db)
    const trusting = await instance({ UNAUTHENTICATED_PER_MINUTE: '2', TRUST_PROXY: 'true' })
    const forwarded = await Promise.all(
      ['1.1.1.1', '2.2.2.2', '3.3.3.3', '3.3.3.3', '3.3.3.3'].map((address) =>
        trusting.inject({ method: 'GET', url: '/v1/pets', headers: { 'x-forwarded-for': address } })
      )
    )
    expect(forwarded.map((response) => response.statusCode)).toEqual([401, 401, 401, 401, 429])
  })

  it('count IPv6 clients by /64, so one client cannot rotate through its addresses', async () => {
    const app = await instance({ UNAUTHENTICATED_PER_MINUTE: '2', TRUST_PROXY: 'true' })
    const statusFrom = async (address: string) =>
      (await app.inject({ method: 'GET', url: '/v1/pets', headers: { 'x-forwarded-for': address } })).statusCode
    expect(await statusFrom('2001:db8:1:2::1')).toBe(401)
    expect(await statusFrom('2001:db8:1:2::ffff')).toBe(401)
    expect(await statusFrom('2001:db8:1:2:abcd::7')).toBe(429)
    expect(await statusFrom('2001:db8:1:3::1')).toBe(401)
  })
})

describe('several instances on one database', () => {
  it('three instances hit with 150 concurrent requests on one free key admit exactly 60', async () => {
    const instances = await Promise.all([instance(), instance(), instance()])
    const bases = await Promise.all(instances.map((app) => app.listen({ port: 0, host: '127.0.0.1' })))
    const { key } = await issueApiKey(database.db, { plan: 'free' })
    const responses = await Promise.all(
      Array.from({ length: 150 }, (_, i) => fetch(`${bases[i % 3]}/v1/pets?limit=1`, { headers: bearer(key) }))
    )
    const tally = statuses(responses.map((response) => ({ statusCode: response.status })))
    expect(tally).toEqual({ 200: 60, 429: 90 })
    const { rows } = await sql<{ minute_used: number }>`SELECT minute_used FROM rate_limit_counters`.execute(database.db)
    expect(rows).toEqual([{ minute_used: 60 }])
  })

  it('never over-admits a key with leases in play, and admits the whole limit once every instance is refused', async () => {
    const instances = await Promise.all([instance(), instance(), instance()])
    const { key } = await issueApiKey(database.db, { plan: 'enterprise', limits: { perMinute: 500, perDay: 100_000 } })
    const request = { method: 'GET' as const, url: '/v1/owners', headers: bearer(key) }
    const responses = await Promise.all(instances.map((app) => fireUntilRefused(app, request, 40)))
    const tally = statuses(responses.flat())
    // Each instance stopped only after a refusal, which it sends with nothing leased and nothing left
    // in the database: every unit counted was admitted, and no more.
    expect(tally[404]).toBe(500)
    expect(responses.every((sent) => sent.some((response) => response.statusCode === 429))).toBe(true)
    const { rows } = await sql<{ minute_used: number }>`SELECT minute_used FROM rate_limit_counters`.execute(database.db)
    expect(rows).toEqual([{ minute_used: 500 }])
  })
})

describe('leases', () => {
  it('hand units left unused at the end of a minute back to the day, so the day counts only what was admitted', async () => {
    const app = await instance()
    const { key, id } = await issueApiKey(database.db, { plan: 'enterprise', limits: { perMinute: 100_000, perDay: 1_000_000 } })
    const request = { method: 'GET' as const, url: '/v1/owners', headers: bearer(key) }
    // A burst within one second: the instance leases blocks ahead of the requests.
    expect(statuses(await fire(app, 400, request, 40))).toEqual({ 404: 400 })
    const counted = async () =>
      (await sql<{ day_used: number; wanted: number }>`
        SELECT day_used, wanted FROM rate_limit_counters WHERE subject = ${`key:${id}`}`.execute(database.db)).rows[0]!
    const afterBurst = await counted()
    expect(afterBurst.wanted).toBeGreaterThan(1)
    expect(afterBurst.day_used).toBeGreaterThan(400)

    clock.advance(60_000)
    const next = await app.inject(request)
    expect(next.statusCode).toBe(404)
    const { day_used: dayUsed, wanted } = await counted()
    // What the new lease holds is counted too: the day is what was admitted plus that lease.
    expect(dayUsed).toBe(401 + (wanted - 1))
    expect(next.headers['x-ratelimit-remaining']).toBe(String(100_000 - 1))
  })
})

describe('the counting statement', () => {
  const base = (over: Partial<QuotaRequest>): QuotaRequest => ({
    subject: 'key:statement',
    minuteStart: new Date('2027-01-01T12:00:00Z'),
    dayStart: new Date('2027-01-01T00:00:00Z'),
    now: new Date(NOON),
    want: 1,
    returned: 0,
    perMinute: 100,
    perDay: 1000,
    banAfter: 10,
    banSeconds: 900,
    ...over
  })

  it('grants exactly the limit to concurrent callers on separate connections, whatever they ask', async () => {
    const pools = Array.from({ length: 3 }, () => connectDatabase({ url: database.url, poolMax: 8 }))
    try {
      const grants = await Promise.all(
        Array.from({ length: 240 }, (_, i) => consumeQuota(pools[i % 3]!.pool, base({ want: (i % 5) + 1 })))
      )
      expect(grants.reduce((sum, state) => sum + state.granted, 0)).toBe(100)
    } finally {
      await Promise.all(pools.map((pool) => pool.close()))
    }
  })

  it('never moves a window back for an instance whose clock lags', async () => {
    const ahead = await consumeQuota(database.pool, base({ minuteStart: new Date('2027-01-01T12:01:00Z'), want: 100 }))
    expect(ahead.granted).toBe(100)
    const lagging = await consumeQuota(database.pool, base({ minuteStart: new Date('2027-01-01T12:00:00Z') }))
    expect(lagging.granted).toBe(0)
    expect(lagging.minuteStart).toEqual(new Date('2027-01-01T12:01:00Z'))
  })
})

describe('housekeeping and failure', () => {
  it('deletes counters of past days, keeping running bans', async () => {
    await sql`
      INSERT INTO rate_limit_counters (subject, minute_start, minute_used, minute_limit, day_start, day_used,
        day_limit, wanted, last_grant, banned_until, updated_at)
      VALUES
        ('key:old', '2026-12-31T23:59:00Z', 1, 60, '2026-12-31T00:00:00Z', 1, 1000, 1, 1, NULL, '2026-12-31T23:59:00Z'),
        ('key:old-banned', '2026-12-31T23:59:00Z', 1, 60, '2026-12-31T00:00:00Z', 1, 1000, 1, 1, '2027-01-01T12:10:00Z', '2026-12-31T23:59:00Z'),
        ('key:today', '2027-01-01T12:00:00Z', 1, 60, '2027-01-01T00:00:00Z', 1, 1000, 1, 1, NULL, '2027-01-01T12:00:00Z')
    `.execute(database.db)
    expect(await deleteExpiredCounters(database.db, new Date(NOON), new Date('2027-01-01T00:00:00Z'))).toBe(1)
    const { rows } = await sql<{ subject: string }>`SELECT subject FROM rate_limit_counters ORDER BY subject`.execute(database.db)
    expect(rows.map((row) => row.subject)).toEqual(['key:old-banned', 'key:today'])
  })

  it('admits nothing while the database is down: 503 service_unavailable with Retry-After', async () => {
    const cluster = await startStoppableCluster()
    const app = await createTestApp(cluster.database, { clock })
    try {
      const { key } = await issueApiKey(cluster.database.db, { plan: 'free' })
      const request = { method: 'GET' as const, url: '/v1/owners', headers: bearer(key) }
      expect((await app.inject(request)).statusCode).toBe(404)
      await cluster.stop()
      const started = Date.now()
      const responses = await Promise.all([app.inject(request), app.inject({ method: 'GET', url: '/v1/owners' })])
      expect(Date.now() - started).toBeLessThan(2_000)
      for (const response of responses) {
        expect(response.statusCode).toBe(503)
        expect(response.json().code).toBe('service_unavailable')
        expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1)
      }
    } finally {
      await app.close()
      await cluster.destroy()
    }
  })
})
