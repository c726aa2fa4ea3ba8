import type { FastifyInstance, InjectOptions } from 'fastify'
import { sql } from 'kysely'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { connectDatabase } from '../../src/db/connect.js'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { countUnits, deleteIdleCounters, type QuotaRequest } from '../../src/repositories/rate-limits.js'
import { createTestApp, manualClock, setApiKeyPlan } from '../helpers/app.js'
import { bearer, fire, statuses } from '../helpers/traffic.js'
import { startStoppableCluster } from '../helpers/cluster.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

let database: TestDatabase
const NOON = Date.parse('2027-01-01T12:00:15.200Z')
const clock = manualClock(NOON, () => database)
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
  await clock.set(NOON)
  await sql`TRUNCATE account_counters, api_key_bans`.execute(database.db)
})

async function instance(env: Record<string, string> = {}) {
  const app = await createTestApp(database, { clock, env })
  apps.push(app)
  return app
}

/** An enterprise key with limits no test reaches: a busy one is admitted mostly from leases. */
async function busyKey() {
  const { key, id, accountId } = await issueApiKey(database.db, {
    plan: 'enterprise',
    limits: { perMinute: 100_000, perDay: 1_000_000 }
  })
  return { key, id, accountId, request: { method: 'GET' as const, url: '/v1/owners', headers: bearer(key) } }
}

describe('plan windows', () => {
  it.each([
    ['free', 60, 1000],
    ['pro', 300, 10000],
    ['business', 1000, 100000]
  ] as const)("admits exactly %s's %i requests in a minute, then refuses", async (plan, perMinute, perDay) => {
    const app = await instance()
    const { key } = await issueApiKey(database.db, { plan })
    const responses = await fire(app, perMinute + 15, { method: 'GET', url: '/v1/pets?limit=1', headers: bearer(key) })
    expect(statuses(responses)).toEqual({ 200: perMinute, 429: 15 })
    expect(responses.slice(0, perMinute).every((response) => response.statusCode === 200)).toBe(true)
    const refused = responses[perMinute]!
    expect(refused.json()).toEqual({
      code: 'rate_limited',
      message: `Rate limit exceeded: ${perMinute} a minute; retry in 45 s`,
      status: 429
    })
    expect(refused.headers['ratelimit-policy']).toBe(`"minute";q=${perMinute};w=60, "day";q=${perDay};w=86400`)
  })

  it('enforces the day window of an enterprise key across minutes, until the UTC day ends', async () => {
    const app = await instance()
    const { key, accountId } = await issueApiKey(database.db, {
      plan: 'enterprise',
      limits: { perMinute: 100, perDay: 25 }
    })
    const request = { method: 'GET' as const, url: '/v1/pets', headers: bearer(key) }
    const tally: Record<number, number>[] = []
    for (let minute = 0; minute < 3; minute++) {
      await clock.set(NOON + minute * 60_000)
      tally.push(statuses(await fire(app, 10, request)))
    }
    expect(tally).toEqual([{ 200: 10 }, { 200: 10 }, { 200: 5, 429: 5 }])
    const counted = await sql<{ used: string }>`
      SELECT used FROM limit_counters WHERE account_id = ${accountId} AND "window" = 'day'`.execute(database.db)
    expect(Number(counted.rows[0]!.used)).toBe(25)

    await clock.set(Date.parse('2027-01-01T23:59:59.500Z'))
    const refused = await app.inject(request)
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBe('1')
    expect(refused.headers['x-ratelimit-limit']).toBe('25')
    expect(refused.headers['x-ratelimit-remaining']).toBe('0')
    expect(refused.headers['x-ratelimit-reset']).toBe(String(Date.parse('2027-01-02T00:00:00Z') / 1000))
    expect(refused.headers.ratelimit).toBe('"day";r=0;t=1')

    await clock.set(Date.parse('2027-01-02T00:00:00Z'))
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
    expect([ok, invalid, missing, noRoute].map((response) => response.headers['x-ratelimit-remaining'])).toEqual([
      '59',
      '58',
      '57',
      '56'
    ])
    for (const response of [ok, invalid, missing, noRoute]) {
      expect(response.headers['x-ratelimit-limit']).toBe('60')
      expect(response.headers['x-ratelimit-reset']).toBe(String(Date.parse('2027-01-01T12:01:00Z') / 1000))
      expect(response.headers['ratelimit-policy']).toBe('"minute";q=60;w=60, "day";q=1000;w=86400')
    }
    expect(noRoute.headers.ratelimit).toBe('"minute";r=56;t=45')

    // A valid key never spends the address's budget, not even on its first lookup.
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
    expect(response.headers.ratelimit).toBe(
      `"day";r=2;t=${Math.ceil((Date.parse('2027-01-02T00:00:00Z') - NOON) / 1000)}`
    )
  })

  it('on a tie, describe the window that resets first', async () => {
    const app = await instance()
    const { key } = await issueApiKey(database.db, { plan: 'enterprise', limits: { perMinute: 5, perDay: 5 } })
    const response = await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key) })
    expect(response.headers['x-ratelimit-remaining']).toBe('4')
    expect(response.headers.ratelimit).toBe('"minute";r=4;t=45')
    expect(response.headers['x-ratelimit-reset']).toBe(String(Date.parse('2027-01-01T12:01:00Z') / 1000))
  })

  it('on a refusal with a minute and a day both spent, describe the day, which the retry waits for', async () => {
    const app = await instance({ BAN_AFTER: '1000' })
    const { key } = await issueApiKey(database.db, { plan: 'enterprise', limits: { perMinute: 5, perDay: 8 } })
    const request = { method: 'GET' as const, url: '/v1/pets', headers: bearer(key) }
    await fire(app, 3, request, 1)
    await clock.set(Date.parse('2027-01-01T12:01:10.000Z'))
    const answered = await fire(app, 6, request, 1)
    expect(statuses(answered)).toEqual({ 200: 5, 429: 1 })
    // The last one admitted left both at 0: admitted, the tie goes to the minute, which resets first.
    expect(answered[4]!.headers.ratelimit).toBe('"minute";r=0;t=50')
    const refused = answered.at(-1)!
    const dayEnd = Date.parse('2027-01-02T00:00:00Z')
    const secondsLeft = (dayEnd - Date.parse('2027-01-01T12:01:10Z')) / 1000
    expect(refused.headers).toMatchObject({
      'retry-after': String(secondsLeft),
      'x-ratelimit-limit': '8',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(dayEnd / 1000),
      ratelimit: `"day";r=0;t=${secondsLeft}`
    })
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

    await clock.set(Date.parse('2027-01-01T12:00:59.999Z'))
    const lastMoment = await app.inject(request)
    expect(lastMoment.statusCode).toBe(429)
    expect(lastMoment.headers['retry-after']).toBe('1')

    await clock.set(Date.parse('2027-01-01T12:01:00.000Z'))
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
      SELECT banned_until FROM api_key_bans WHERE api_key_id = ${id}`.execute(database.db)
    expect(rows[0]!.banned_until.getTime()).toBe(NOON + 120_000)

    // A new minute does not lift the ban, and another instance, knowing nothing yet, enforces it.
    await clock.set(NOON + 119_000)
    const other = await instance(env)
    const elsewhere = await other.inject(request)
    expect(elsewhere.json().code).toBe('key_banned')
    expect(elsewhere.headers['retry-after']).toBe('1')

    await clock.set(NOON + 120_000)
    expect((await app.inject(request)).statusCode).toBe(200)
    expect((await other.inject(request)).statusCode).toBe(200)
  })

  it('refuses a banned key with every rate-limit header once its account idled here, and where the ban was announced', async () => {
    const env = { BAN_AFTER: '2', BAN_SECONDS: '120' }
    const app = await instance(env)
    const told = await instance(env)
    const { key, id } = await issueApiKey(database.db, { plan: 'free' })
    const request = { method: 'GET' as const, url: '/v1/pets', headers: bearer(key) }
    // The second instance caches the key; it learns of the ban from the announcement alone.
    expect((await told.inject(request)).statusCode).toBe(200)
    await fire(app, 59, request)
    expect((await fire(app, 4, request, 1)).map((response) => response.json().code)).toEqual([
      'rate_limited',
      'rate_limited',
      'rate_limited',
      'key_banned'
    ])
    await vi.waitFor(() => expect(told.limiter.knownBan(id)).toBe(NOON + 120_000))
    // Idle for 11 s, each instance's sweep lets go of what the account does not need kept.
    await clock.advance(11_000)
    await Promise.all([app.limiter.reportUsage(), told.limiter.reportUsage()])
    for (const each of [app, told]) {
      const refused = await each.inject(request)
      expect(refused.json().code).toBe('key_banned')
      expect(refused.headers).toMatchObject({
        'retry-after': '109',
        'x-ratelimit-limit': '60',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': String(Math.ceil((NOON + 120_000) / 1000)),
        'ratelimit-policy': '"minute";q=60;w=60, "day";q=1000;w=86400',
        ratelimit: '"minute";r=0;t=109'
      })
    }
  })

  it('does not ban a key that stops at the first 429s', async () => {
    const app = await instance({ BAN_AFTER: '3' })
    const { key } = await issueApiKey(database.db, { plan: 'free' })
    const request = { method: 'GET' as const, url: '/v1/pets', headers: bearer(key) }
    await fire(app, 64, request)
    await clock.advance(60_000)
    expect((await app.inject(request)).statusCode).toBe(200)
  })
})

describe('requests without a valid key', () => {
  it('are limited per client address in memory; a valid key keeps its own budget, known here or not', async () => {
    const app = await instance({ UNAUTHENTICATED_PER_MINUTE: '5' })
    const known = await issueApiKey(database.db, { plan: 'free' })
    // Looked up once, then cached here; a valid key's lookup costs the address nothing.
    expect((await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(known.key) })).statusCode).toBe(200)
    const guesses = await fire(
      app,
      7,
      { method: 'GET', url: '/v1/pets', headers: { authorization: 'Bearer ask_guess' } },
      1
    )
    expect(guesses.map((response) => response.statusCode)).toEqual([401, 401, 401, 401, 401, 429, 429])
    const refused = guesses.at(-1)!
    expect(refused.json().code).toBe('rate_limited')
    // The address's minute is the UTC minute on the database's clock, as every other window: 12:00:15.2 now.
    expect(refused.headers['retry-after']).toBe('45')
    expect(refused.headers['x-ratelimit-reset']).toBe(String(Date.parse('2027-01-01T12:01:00Z') / 1000))
    expect(refused.headers.ratelimit).toBe('"minute";r=0;t=45')
    expect(refused.headers['ratelimit-policy']).toBe('"minute";q=5;w=60')
    expect((await app.inject({ method: 'GET', url: '/v1/pets' })).statusCode).toBe(429)

    expect((await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(known.key) })).statusCode).toBe(200)
    // A key this instance has not seen is looked up from a spent address too, once its announcement
    // (NOTIFY, milliseconds after the commit) has reached the instance's membership filter.
    const unseen = await issueApiKey(database.db, { plan: 'free' })
    // Until then it is refused like a made-up key, at no cost to the database, and asked again.
    await vi.waitFor(async () =>
      expect((await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(unseen.key) })).statusCode).toBe(200)
    )
    expect(await countedAccounts()).toEqual([known.accountId, unseen.accountId])
  })

  it("keep their minute while the database's clock stands still near its end, however long the requests take", async () => {
    await clock.set(Date.parse('2027-01-01T12:00:59.800Z'))
    const app = await instance({ UNAUTHENTICATED_PER_MINUTE: '5' })
    const sent = []
    for (let i = 0; i < 7; i++) {
      const guess = { authorization: 'Bearer ask_guess' }
      sent.push(
        (await app.inject({ method: 'GET', url: '/v1/pets', headers: guess, remoteAddress: '203.0.113.77' })).statusCode
      )
      // Past the 200 ms left of the minute in this process's own time.
      await new Promise((resolve) => setTimeout(resolve, 60))
    }
    expect(sent).toEqual([401, 401, 401, 401, 401, 429, 429])
  })

  it('ignore X-Forwarded-For unless the connecting peer is one TRUST_PROXY lists', async () => {
    const addresses = ['1.1.1.1', '2.2.2.2', '3.3.3.3']
    const send = (app: FastifyInstance, forwardedFor: string, peer = '127.0.0.1') =>
      app.inject({ method: 'GET', url: '/v1/pets', remoteAddress: peer, headers: { 'x-forwarded-for': forwardedFor } })

    const untrusting = await instance({ UNAUTHENTICATED_PER_MINUTE: '2' })
    const spoofed = await Promise.all(addresses.map((address) => send(untrusting, address)))
    expect(spoofed.map((response) => response.statusCode).sort()).toEqual([401, 401, 429])

    // The load balancer is 10.0.0.5; a client reaching the port directly is not believed.
    await sql`TRUNCATE account_counters, api_key_bans`.execute(database.db)
    const behindBalancer = await instance({ UNAUTHENTICATED_PER_MINUTE: '2', TRUST_PROXY: '10.0.0.5' })
    const direct = await Promise.all(addresses.map((address) => send(behindBalancer, address, '203.0.113.9')))
    expect(direct.map((response) => response.statusCode).sort()).toEqual([401, 401, 429])
    const forwarded = []
    for (const address of ['1.1.1.1', '2.2.2.2', '3.3.3.3', '3.3.3.3', '3.3.3.3']) {
      forwarded.push((await send(behindBalancer, `198.51.100.1, ${address}`, '10.0.0.5')).statusCode)
    }
    expect(forwarded).toEqual([401, 401, 401, 401, 429])
    expect(await countedAccounts()).toEqual([])
  })

  it('count only IP addresses from a trusted proxy: anything else is charged to the proxy', async () => {
    const app = await instance({ UNAUTHENTICATED_PER_MINUTE: '49', TRUST_PROXY: 'loopback' })
    const junk = [
      'unknown',
      'evil.test',
      '1.2.3.4:5678',
      '01.2.3.4',
      'fe80::1%eth0',
      `fe80::1%${'z'.repeat(4000)}`,
      '<script>',
      "'; DROP TABLE rate_limit_counters; --",
      'x'.repeat(8000),
      ...Array.from({ length: 40 }, (_, i) => `client-${i}-${'y'.repeat(200)}`)
    ]
    for (const forwardedFor of junk) {
      const response = await app.inject({
        method: 'GET',
        url: '/v1/pets',
        headers: { 'x-forwarded-for': forwardedFor }
      })
      expect(response.statusCode).toBe(401)
    }
    // Every one of them was the trusted peer's request: its budget of 49 is spent, another address's is not.
    const proxy = await app.inject({ method: 'GET', url: '/v1/pets', headers: { 'x-forwarded-for': 'unknown' } })
    expect(proxy.statusCode).toBe(429)
    const client = await app.inject({ method: 'GET', url: '/v1/pets', headers: { 'x-forwarded-for': '192.0.2.1' } })
    expect(client.statusCode).toBe(401)
    expect(await countedAccounts()).toEqual([])
  })

  it('count IPv6 clients by /64, so one client cannot rotate through its addresses', async () => {
    const app = await instance({ UNAUTHENTICATED_PER_MINUTE: '2', TRUST_PROXY: 'loopback' })
    const statusFrom = async (address: string) =>
      (await app.inject({ method: 'GET', url: '/v1/pets', headers: { 'x-forwarded-for': address } })).statusCode
    expect(await statusFrom('2001:db8:1:2::1')).toBe(401)
    expect(await statusFrom('2001:db8:1:2::ffff')).toBe(401)
    expect(await statusFrom('2001:db8:1:2:abcd::7')).toBe(429)
    expect(await statusFrom('2001:db8:1:3::1')).toBe(401)
  })
})

/** The accounts the database has counted requests of. */
const countedAccounts = async () =>
  (
    await sql<{
      account_id: string
    }>`SELECT DISTINCT account_id FROM limit_counters ORDER BY account_id`.execute(database.db)
  ).rows.map((row) => BigInt(row.account_id))

describe('leases', () => {
  it('hand units left unused at the end of a minute back to the day, so the day counts only what was admitted', async () => {
    const app = await instance()
    const { accountId, request } = await busyKey()
    // A burst within one second: the instance leases blocks ahead of the requests.
    expect(statuses(await fire(app, 400, request, 40))).toEqual({ 404: 400 })
    const dayUsed = async () =>
      Number(
        (
          await sql<{ used: string }>`
          SELECT used FROM limit_counters WHERE account_id = ${accountId} AND "window" = 'day'`.execute(database.db)
        ).rows[0]!.used
      )
    expect(await dayUsed()).toBeGreaterThan(400)

    await clock.advance(60_000)
    const next = await app.inject(request)
    expect(next.statusCode).toBe(404)
    // The day counts what was admitted and what the new lease holds; what the instance holds unused is not spent.
    expect(await dayUsed()).toBeGreaterThanOrEqual(401)
    const standing = await app.inject({ method: 'GET', url: '/v1/rate_limit', headers: request.headers })
    expect(standing.json().windows.find((window: { name: string }) => window.name === 'day')).toMatchObject({
      used: 401,
      remaining: 1_000_000 - 401
    })
    expect(next.headers['x-ratelimit-remaining']).toBe(String(100_000 - 1))
  })

  /** What the account's minute and day count. */
  const counted = async (accountId: bigint) =>
    Object.fromEntries(
      (
        await sql<{ window: string; used: string }>`
          SELECT "window", used FROM limit_counters WHERE account_id = ${accountId}`.execute(database.db)
      ).rows.map((row) => [row.window, Number(row.used)])
    )

  it('hand units left unused back once the account is idle here for 10 s, so its windows count only what was admitted', async () => {
    const app = await instance()
    const { accountId, request } = await busyKey()
    expect(statuses(await fire(app, 400, request, 40))).toEqual({ 404: 400 })
    expect((await counted(accountId)).day).toBeGreaterThan(400)

    // Still in the same minute: the minute gets them back too.
    await clock.advance(10_000)
    await app.limiter.reportUsage()
    // The sweep every few seconds may be the one that hands them back.
    await vi.waitFor(async () => {
      expect(await counted(accountId)).toEqual({ minute: 400, day: 400 })
      expect(app.limiter.holds(accountId)).toBe(false)
    })
  })

  it('hand every unit left unused back when the instance shuts down, its running lease’s too', async () => {
    const app = await instance()
    const { accountId, request } = await busyKey()
    expect(statuses(await fire(app, 400, request, 40))).toEqual({ 404: 400 })
    expect((await counted(accountId)).day).toBeGreaterThan(400)
    await app.close()
    expect(await counted(accountId)).toEqual({ minute: 400, day: 400 })
  })
})

describe('lease boundaries', () => {
  /** Sends requests one by one until one is held up (its counting statement waits), and returns that one. */
  async function sendUntilHeld(app: FastifyInstance, request: InjectOptions) {
    for (let sent = 0; sent < 5_000; sent++) {
      const response = app.inject(request)
      const settled = await Promise.race([
        response.then(() => true),
        new Promise((done) => setTimeout(done, 200, false))
      ])
      // Wrapped, so that returning it does not wait for it.
      if (!settled) return { response }
    }
    throw new Error('no request was held up')
  }

  it('never admits in a new minute from units leased in the one before, even when that minute ended mid-statement', async () => {
    const app = await instance()
    const perMinute = 1_000_000
    const { key, accountId } = await issueApiKey(database.db, {
      plan: 'enterprise',
      limits: { perMinute, perDay: 100_000_000 }
    })
    const request = { method: 'GET' as const, url: '/v1/owners', headers: bearer(key) }
    await clock.set(Date.parse('2027-01-01T12:00:59.500Z'))
    // A busy second: the instance leases blocks of about half a second of traffic.
    expect(statuses(await fire(app, 1_000, request, 50))).toEqual({ 404: 1_000 })

    // The key's row is locked, so the next statement for it waits; the minute ends meanwhile.
    const locker = await database.pool.connect()
    let held: Promise<Awaited<ReturnType<FastifyInstance['inject']>>>
    let next: Awaited<ReturnType<FastifyInstance['inject']>>
    try {
      await locker.query('BEGIN')
      await locker.query(`SELECT 1 FROM account_counters WHERE account_id = $1 FOR UPDATE`, [accountId])
      held = (await sendUntilHeld(app, request)).response
      await clock.set(Date.parse('2027-01-01T12:01:00.000Z'))
      const waiting = app.inject(request)
      await locker.query('COMMIT')
      expect((await held).statusCode).toBe(404)
      next = await waiting
    } finally {
      locker.release()
    }
    expect(next.statusCode).toBe(404)
    const inNewMinute = [next, ...(await fire(app, 10, request, 1))]
    expect(inNewMinute.every((response) => response.statusCode === 404)).toBe(true)
    // The statement that waited decided once it held the row, in the new minute: it and the 11 after it.
    expect(inNewMinute.at(-1)!.headers['x-ratelimit-remaining']).toBe(String(perMinute - 12))

    // Everything admitted in the new minute was counted in it.
    const { rows } = await sql<{ started_at: Date; used: string }>`
      SELECT started_at, used FROM limit_counters WHERE account_id = ${accountId} AND "window" = 'minute'`.execute(
      database.db
    )
    expect(rows[0]!.started_at).toEqual(new Date('2027-01-01T12:01:00Z'))
    expect(Number(rows[0]!.used)).toBeGreaterThanOrEqual(12)
  })
})

describe('plan changes', () => {
  it('take effect within a second: a lease counted under the old limits lasts a second at most', async () => {
    const app = await instance()
    const { id, request } = await busyKey()
    // A burst: the instance holds a lease of many units.
    expect(statuses(await fire(app, 400, request, 40))).toEqual({ 404: 400 })
    await setApiKeyPlan(database, id, 'enterprise', { perMinute: 50, perDay: 1_000_000 })
    await clock.advance(1_000)
    // The change reaches the instance; from then on the minute, long past 50, refuses.
    let response = await app.inject(request)
    for (let tries = 0; response.headers['x-ratelimit-limit'] !== '50' && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      response = await app.inject(request)
    }
    expect(response.headers['x-ratelimit-limit']).toBe('50')
    expect(response.statusCode).toBe(429)
    expect((await app.inject(request)).statusCode).toBe(429)
  })
})

describe('usage per key and day', () => {
  const usageOf = async (id: bigint) =>
    (
      await sql<{ day: string; admitted: string; refused: string }>`
        SELECT to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, sum(admitted) AS admitted, sum(refused) AS refused
        FROM api_key_usage WHERE api_key_id = ${id} GROUP BY 1 ORDER BY 1`.execute(database.db)
    ).rows.map((row) => ({ day: row.day, admitted: Number(row.admitted), refused: Number(row.refused) }))

  it('counts every request admitted and refused, including those decided from a lease or a known ban', async () => {
    const app = await instance({ BAN_AFTER: '2', BAN_SECONDS: '600' })
    const busy = await busyKey()
    const limited = await issueApiKey(database.db, { plan: 'free' })
    // A burst admitted mostly from leases, and a free key refused, then banned, then refused from memory.
    expect(statuses(await fire(app, 400, busy.request, 40))).toEqual({ 404: 400 })
    const refusals = await fire(app, 70, { method: 'GET', url: '/v1/pets', headers: bearer(limited.key) }, 1)
    expect(statuses(refusals)).toEqual({ 200: 60, 429: 10 })
    expect(refusals.filter((response) => response.json().code === 'key_banned')).toHaveLength(7)
    // What this instance decided alone is reported within seconds, and at the latest when it stops.
    await app.close()
    expect(await usageOf(busy.id)).toEqual([{ day: '2027-01-01', admitted: 400, refused: 0 }])
    expect(await usageOf(limited.id)).toEqual([{ day: '2027-01-01', admitted: 60, refused: 10 }])
  })

  it('counts requests on the UTC day they were made, across midnight', async () => {
    const app = await instance()
    const { id, request } = await busyKey()
    await clock.set(Date.parse('2027-01-01T23:59:59.000Z'))
    await fire(app, 300, request, 30)
    await clock.set(Date.parse('2027-01-02T00:00:00.000Z'))
    await fire(app, 200, request, 30)
    await app.close()
    expect(await usageOf(id)).toEqual([
      { day: '2027-01-01', admitted: 300, refused: 0 },
      { day: '2027-01-02', admitted: 200, refused: 0 }
    ])
  })
})

describe('usage per key and hour', () => {
  const hoursOf = async (id: bigint) =>
    (
      await sql<{ hour: string; admitted: string; refused: string; units: string }>`
        SELECT to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI') AS hour, admitted, refused, units
        FROM api_key_usage WHERE api_key_id = ${id} ORDER BY hour`.execute(database.db)
    ).rows.map((row) => ({
      ...row,
      admitted: Number(row.admitted),
      refused: Number(row.refused),
      units: Number(row.units)
    }))

  it('counts requests in the UTC hour they were made, with the units the admitted spent', async () => {
    const app = await instance({ BAN_AFTER: '1000' })
    const { id, request } = await busyKey()
    const limited = await issueApiKey(database.db, { plan: 'free' })
    await clock.set(Date.parse('2027-01-01T09:59:58.000Z'))
    await fire(app, 150, request, 30)
    await fire(app, 62, { method: 'GET', url: '/v1/pets', headers: bearer(limited.key) }, 1)
    await clock.set(Date.parse('2027-01-01T10:00:01.000Z'))
    await fire(app, 70, request, 30)
    await fire(app, 3, { method: 'GET', url: '/v1/pets', headers: bearer(limited.key) }, 1)
    await app.close()
    expect(await hoursOf(id)).toEqual([
      { hour: '2027-01-01T09:00', admitted: 150, refused: 0, units: 150 },
      { hour: '2027-01-01T10:00', admitted: 70, refused: 0, units: 70 }
    ])
    expect(await hoursOf(limited.id)).toEqual([
      { hour: '2027-01-01T09:00', admitted: 60, refused: 2, units: 60 },
      { hour: '2027-01-01T10:00', admitted: 3, refused: 0, units: 3 }
    ])
  })
})

describe('batching', () => {
  it('counts the requests of many keys that arrive together with one statement', async () => {
    const app = await instance()
    const keys = await Promise.all(Array.from({ length: 50 }, () => issueApiKey(database.db, { plan: 'free' })))
    const everyKeyOnce = () =>
      Promise.all(keys.map(({ key }) => app.inject({ method: 'GET', url: '/v1/owners', headers: bearer(key) })))
    // Every key looked up and cached; a free key's lease is one unit, so each request needs a statement.
    expect(statuses(await everyKeyOnce())).toEqual({ 404: 50 })
    // Counting statements go on the counting pool's connections, one checkout each.
    let statements = 0
    app.database.counting.on('acquire', () => statements++)
    expect(statuses(await everyKeyOnce())).toEqual({ 404: 50 })
    expect(statements).toBeGreaterThanOrEqual(1)
    expect(statements).toBeLessThanOrEqual(2)
    const { rows } = await sql<{ used: string }>`
      SELECT used FROM limit_counters WHERE "window" = 'minute'`.execute(database.db)
    expect(rows.map((row) => Number(row.used))).toEqual(Array(50).fill(2))
  })
})

describe('the counting statement', () => {
  const base = (over: Partial<QuotaRequest> & Pick<QuotaRequest, 'apiKeyId' | 'accountId'>): QuotaRequest => ({
    cost: 1,
    want: 1,
    returned: 0,
    returnedAt: 0,
    banAfter: 10,
    banSeconds: 900,
    ...over
  })

  it('grants exactly the limit to concurrent callers on separate connections, whatever they ask', async () => {
    const { id, accountId } = await issueApiKey(database.db, {
      plan: 'enterprise',
      limits: { perMinute: 100, perDay: 1000 }
    })
    // Each pool's two counting connections take 80 of the calls in turn, and the last waits for the
    // 79 before it: on a busy machine that is longer than the 2 s a request would wait for one.
    const pools = Array.from({ length: 3 }, () => connectDatabase({ url: database.url, timeoutMs: 60_000 }))
    try {
      const grants = await Promise.all(
        Array.from({ length: 240 }, (_, i) =>
          countUnits(pools[i % 3]!.counting, [base({ apiKeyId: id, accountId, want: (i % 5) + 1 })]).then(
            ([state]) => state!
          )
        )
      )
      expect(grants.reduce((sum, state) => sum + state.granted, 0)).toBe(100)
      expect(grants.filter((state) => state.admitted)).toHaveLength(grants.filter((state) => state.granted > 0).length)
    } finally {
      await Promise.all(pools.map((pool) => pool.close()))
    }
  })

  it('decides on the database’s clock: instances 5 s ahead and 5 s behind count in the same windows', async () => {
    await clock.set(Date.parse('2027-01-01T12:00:58.000Z'))
    // Their own clocks are wrong; they measure how wrong from the database at start and with each statement.
    const env = { BAN_AFTER: '1000' }
    const ahead = await createTestApp(database, { clock: () => clock() + 5_000, env })
    const behind = await createTestApp(database, { clock: () => clock() - 5_000, env })
    apps.push(ahead, behind)
    const { key } = await issueApiKey(database.db, { plan: 'free' })
    const request = { method: 'GET' as const, url: '/v1/pets', headers: bearer(key) }
    const answered = [...(await fire(ahead, 40, request, 1)), ...(await fire(behind, 40, request, 1))]
    expect(statuses(answered)).toEqual({ 200: 60, 429: 20 })
    for (const response of answered) {
      expect(response.headers['x-ratelimit-reset']).toBe(String(Date.parse('2027-01-01T12:01:00Z') / 1000))
    }
    expect(answered.at(-1)!.headers['retry-after']).toBe('2')
    // The database's minute ends: both admit again, though one of them thinks it ended 5 s ago and the other in 3 s.
    await clock.set(Date.parse('2027-01-01T12:01:00.000Z'))
    expect((await ahead.inject(request)).statusCode).toBe(200)
    expect((await behind.inject(request)).statusCode).toBe(200)
  })
})

describe('housekeeping and failure', () => {
  it('deletes the counters of accounts none of whose windows holds anything at the database’s now: windows that ended, buckets full again', async () => {
    const [busy, refilling] = await Promise.all([
      issueApiKey(database.db, { plan: 'free' }),
      issueApiKey(database.db, { plan: 'free' })
    ])
    await sql`
      INSERT INTO account_limit_overrides (account_id, "window", algorithm, "limit") VALUES (${refilling.accountId}, 'hour', 'bucket', 3600)
    `.execute(database.db)
    await sql`
      INSERT INTO account_counters (account_id, windows, algorithms, started_ats, used, levels, notified) VALUES
        -- Its minute ended, its day still runs.
        (${busy.accountId}, '{minute,day}', '{fixed,fixed}', '{2027-01-01T11:59:00Z,2027-01-01T00:00:00Z}', '{5,5}',
          '{0,0}', '{0,0}'),
        -- Its minute ended; its bucket refills 1 a second: at noon, 15 s after this, it holds 3,000 of its 3,600.
        (${refilling.accountId}, '{minute,hour}', '{fixed,bucket}', '{2027-01-01T11:59:00Z,2027-01-01T11:59:45Z}',
          '{5,0}', '{0,2985}', '{0,0}')
    `.execute(database.db)
    expect(await deleteIdleCounters(database.db)).toBe(0)
    await clock.advance(600_000)
    expect(await deleteIdleCounters(database.db)).toBe(1)
    const { rows } = await sql<{ account_id: string; window: string }>`
      SELECT account_id::text, "window" FROM limit_counters ORDER BY "window"
    `.execute(database.db)
    expect(rows).toEqual([
      { account_id: String(busy.accountId), window: 'day' },
      { account_id: String(busy.accountId), window: 'minute' }
    ])
  })

  it('leaves the counters a counting statement holds to a later sweep and deletes the others without waiting for it', async () => {
    const [held, idle] = await Promise.all([
      issueApiKey(database.db, { plan: 'free' }),
      issueApiKey(database.db, { plan: 'free' })
    ])
    // Both minutes ended at noon.
    await sql`
      INSERT INTO account_counters (account_id, windows, algorithms, started_ats, used, levels, notified) VALUES
        (${held.accountId}, '{minute}', '{fixed}', '{2027-01-01T11:59:00Z}', '{5}', '{0}', '{0}'),
        (${idle.accountId}, '{minute}', '{fixed}', '{2027-01-01T11:59:00Z}', '{5}', '{0}', '{0}')
    `.execute(database.db)
    const holder = await database.pool.connect()
    try {
      await holder.query('BEGIN')
      await holder.query('SELECT FROM account_counters WHERE account_id = $1 FOR UPDATE', [held.accountId])
      // A sweep that waited for the held row would give up after half a second.
      const deleted = await database.db.transaction().execute(async (trx) => {
        await sql`SET LOCAL lock_timeout = '500ms'`.execute(trx)
        return deleteIdleCounters(trx)
      })
      expect(deleted).toBe(1)
      const { rows } = await sql<{ account_id: string }>`SELECT account_id::text FROM account_counters`.execute(
        database.db
      )
      expect(rows).toEqual([{ account_id: String(held.accountId) }])
      await holder.query('COMMIT')
      expect(await deleteIdleCounters(database.db)).toBe(1)
    } finally {
      await holder.query('ROLLBACK')
      holder.release()
    }
  })

  it('admits nothing while the database is down: 503 service_unavailable with Retry-After; no key, 401', async () => {
    const cluster = await startStoppableCluster()
    const app = await createTestApp(cluster.database, { clock })
    try {
      const { key } = await issueApiKey(cluster.database.db, { plan: 'free' })
      const request = { method: 'GET' as const, url: '/v1/owners', headers: bearer(key) }
      expect((await app.inject(request)).statusCode).toBe(404)
      await cluster.stop()
      const started = Date.now()
      const [keyed, keyless] = await Promise.all([
        app.inject(request),
        app.inject({ method: 'GET', url: '/v1/owners' })
      ])
      expect(Date.now() - started).toBeLessThan(2_000)
      expect(keyed.statusCode).toBe(503)
      expect(keyed.json().code).toBe('service_unavailable')
      expect(Number(keyed.headers['retry-after'])).toBeGreaterThanOrEqual(1)
      // The budget of requests without a key is in memory: they need no database to be refused.
      expect(keyless.statusCode).toBe(401)
    } finally {
      await app.close()
      await cluster.destroy()
    }
  })
})
