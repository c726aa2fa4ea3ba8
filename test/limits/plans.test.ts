import type { FastifyInstance, InjectOptions } from 'fastify'
import { sql } from 'kysely'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { createTestAdminApp, createTestApp, manualClock, ADMIN_TOKEN } from '../helpers/app.js'
import { bearer, fire, statuses } from '../helpers/traffic.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { addPlan, type TestLimit } from '../helpers/plans.js'

// Limits as a plan writes them, counted on the database's clock by instances that share one database.
let database: TestDatabase
const START = Date.parse('2027-03-15T10:20:30.000Z')
const clock = manualClock(START, () => database)
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
  await clock.set(START)
  await sql`TRUNCATE account_counters, api_key_bans, webhook_events CASCADE`.execute(database.db)
})

async function instances(count: number, env: Record<string, string> = {}) {
  const made = await Promise.all(
    Array.from({ length: count }, () =>
      createTestApp(database, {
        clock,
        env: { BAN_AFTER: '100000', ...env }
      })
    )
  )
  apps.push(...made)
  return made
}

let plans = 0
/** A plan of these limits (and costs), and a key of a new account on it. */
async function keyOnPlan(limits: TestLimit[], costs: Record<string, number> = {}) {
  const name = `plan-${++plans}`
  await addPlan(database.db, name, limits, costs)
  const issued = await issueApiKey(database.db, { plan: name })
  const read = { method: 'GET' as const, url: '/v1/pets?limit=1', headers: bearer(issued.key) }
  return { ...issued, plan: name, read }
}

/** Sends `n` requests spread over the instances in turn, a few at a time. */
async function across(apps: FastifyInstance[], n: number, request: InjectOptions) {
  const answered = await Promise.all(
    apps.map((app, i) => fire(app, Math.floor(n / apps.length) + (i < n % apps.length ? 1 : 0), request, 4))
  )
  return answered.flat()
}

describe('windows', () => {
  it.each([
    ['second', 5, 1_000],
    ['minute', 40, 60_000],
    ['hour', 30, 3_600_000],
    ['day', 30, 86_400_000]
  ] as const)(
    'a fixed %s admits exactly its limit across 3 instances, then again from the next %s',
    async (window, limit, ms) => {
      const three = await instances(3)
      const { read } = await keyOnPlan([{ window, limit }])
      // The start of the window, so that all of it lies ahead.
      await clock.set(START - (START % ms))
      expect(statuses(await across(three, limit + 9, read))).toEqual({ 200: limit, 429: 9 })
      await clock.set(START - (START % ms) + ms)
      expect(statuses(await across(three, 3, read))).toEqual({ 200: 3 })
    }
  )

  it('a month is the UTC calendar month: spent in March, admitted again on 1 April at 00:00', async () => {
    const three = await instances(3)
    const { read } = await keyOnPlan([{ window: 'month', limit: 12 }])
    expect(statuses(await across(three, 15, read))).toEqual({ 200: 12, 429: 3 })
    await clock.set(Date.parse('2027-03-31T23:59:59.500Z'))
    const last = await three[0]!.inject(read)
    expect(last.statusCode).toBe(429)
    expect(last.headers['retry-after']).toBe('1')
    expect(last.headers['x-ratelimit-reset']).toBe(String(Date.parse('2027-04-01T00:00:00Z') / 1000))
    expect(last.headers['ratelimit-policy']).toBe('"month";q=12;w=2592000')
    await clock.set(Date.parse('2027-04-01T00:00:00.000Z'))
    expect((await three[1]!.inject(read)).statusCode).toBe(200)
  })

  it.each([
    ['day', '2027-03-15T23:59:30.000Z'],
    ['month', '2027-03-31T23:59:30.000Z']
  ] as const)(
    'a refusal in a %s’s last minute names that spent limit, not the minute that ends with it',
    async (window, at) => {
      const [app] = await instances(1)
      const { read } = await keyOnPlan([
        { window: 'minute', limit: 100 },
        { window, limit: 2 }
      ])
      await clock.set(Date.parse(at))
      const answered = await fire(app!, 3, read, 1)
      expect(statuses(answered)).toEqual({ 200: 2, 429: 1 })
      const refused = answered.at(-1)!
      expect(refused.json().message).toBe(`Rate limit exceeded: 2 a ${window}; retry in 30 s`)
      expect(refused.headers['x-ratelimit-limit']).toBe('2')
      expect(refused.headers.ratelimit).toBe(`"${window}";r=0;t=30`)
    }
  )

  it('every limit counts: the tightest refuses, and Retry-After waits for the latest one short', async () => {
    const [app] = await instances(1)
    const { read } = await keyOnPlan([
      { window: 'second', limit: 3 },
      { window: 'hour', limit: 5 }
    ])
    expect(statuses(await fire(app!, 4, read, 1))).toEqual({ 200: 3, 429: 1 })
    await clock.advance(1_000)
    const answered = await fire(app!, 3, read, 1)
    expect(statuses(answered)).toEqual({ 200: 2, 429: 1 })
    // The hour is short now, though the second has room: no retry succeeds before 11:00.
    expect(answered.at(-1)!.headers['retry-after']).toBe(
      String((Date.parse('2027-03-15T11:00:00Z') - START - 1_000) / 1000)
    )
    expect(answered.at(-1)!.headers['ratelimit-policy']).toBe('"second";q=3;w=1, "hour";q=5;w=3600')
  })
})

describe('token buckets', () => {
  it('admit the burst, then refill evenly: one unit every 1/limit of the window, across instances', async () => {
    const three = await instances(3)
    // 60 a minute, holding at most 10: one unit a second.
    const { read } = await keyOnPlan([{ window: 'minute', limit: 60, algorithm: 'bucket', burst: 10 }])
    const answered = await across(three, 14, read)
    expect(statuses(answered)).toEqual({ 200: 10, 429: 4 })
    expect(answered.find((response) => response.statusCode === 429)!.json().message).toBe(
      'Rate limit exceeded: the minute bucket of 10; retry in 1 s'
    )
    await clock.advance(1_000)
    expect((await three[1]!.inject(read)).statusCode).toBe(200)
    expect((await three[2]!.inject(read)).statusCode).toBe(429)
    await clock.advance(5_000)
    expect(statuses(await across(three, 7, read))).toEqual({ 200: 5, 429: 2 })
  })

  it('never admit twice a window across its boundary, as a fixed window would', async () => {
    const [app] = await instances(1)
    const { read } = await keyOnPlan([{ window: 'minute', limit: 30, algorithm: 'bucket' }])
    await clock.set(Date.parse('2027-03-15T10:20:59.000Z'))
    expect(statuses(await fire(app!, 40, read, 4))).toEqual({ 200: 30, 429: 10 })
    await clock.set(Date.parse('2027-03-15T10:21:01.000Z'))
    // Two seconds later a bucket of 30 a minute has refilled 1 unit, not 30.
    expect(statuses(await fire(app!, 5, read, 1))).toEqual({ 200: 1, 429: 4 })
  })

  it('give their burst in the headers: Limit and q what they hold at most, Remaining what they hold, Reset when full', async () => {
    const [app] = await instances(1)
    // 60 a minute, holding at most 10: one unit a second.
    const { read } = await keyOnPlan([{ window: 'minute', limit: 60, algorithm: 'bucket', burst: 10 }])
    const last = (await fire(app!, 4, read, 1)).at(-1)!
    expect(last.statusCode).toBe(200)
    expect(last.headers).toMatchObject({
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '6',
      'x-ratelimit-reset': String(Math.ceil((START + 4_000) / 1000)),
      'ratelimit-policy': '"minute";q=10;w=60',
      ratelimit: '"minute";r=6;t=4'
    })
    // GET /v1/rate_limit gives the same burst as its limit: the refill is the plan's.
    const standing = await app!.inject({ ...read, url: '/v1/rate_limit' })
    expect(standing.json().windows).toMatchObject([{ name: 'minute', algorithm: 'bucket', limit: 10, remaining: 6 }])
  })

  it('show what they hold and when they are full again', async () => {
    const [app] = await instances(1)
    const { read } = await keyOnPlan([{ window: 'hour', limit: 3600, algorithm: 'bucket', burst: 100 }])
    await fire(app!, 40, read, 4)
    const standing = await app!.inject({ ...read, url: '/v1/rate_limit' })
    expect(standing.json().windows).toEqual([
      // A bucket's limit is what it holds at most; it is full again once 40 s have refilled 40 units.
      {
        name: 'hour',
        algorithm: 'bucket',
        shadow: false,
        limit: 100,
        used: 40,
        remaining: 60,
        reset: Math.ceil((START + 40_000) / 1000)
      }
    ])
  })
})

describe('costs', () => {
  it('spend a route’s cost in every limit, 1 for a route not named, and nothing for a route that costs 0', async () => {
    const three = await instances(3)
    const issued = await keyOnPlan(
      [
        { window: 'minute', limit: 20 },
        { window: 'day', limit: 1000 }
      ],
      {
        'POST /v1/pets': 5,
        'GET /v1/pets/{petId}': 0
      }
    )
    const create = {
      method: 'POST' as const,
      url: '/v1/pets',
      headers: bearer(issued.key),
      payload: { name: 'Rex', categoryId: 1 }
    }
    const created = await across(three, 5, create)
    expect(statuses(created)).toEqual({ 201: 4, 429: 1 })
    const petId = created.find((response) => response.statusCode === 201)!.json().id
    const free = { method: 'GET' as const, url: `/v1/pets/${petId}`, headers: bearer(issued.key) }
    expect(statuses(await across(three, 6, free))).toEqual({ 200: 6 })
    // A HEAD is its GET without the body, at the GET's cost, on an instance that knows the key and as
    // the first request of an instance that looks it up.
    expect(statuses(await across(three, 3, { ...free, method: 'HEAD' as const }))).toEqual({ 200: 3 })
    const [fresh] = await instances(1)
    expect((await fresh!.inject({ ...free, method: 'HEAD' })).statusCode).toBe(200)
    const spent = await three[0]!.inject(issued.read)
    expect(spent.statusCode).toBe(429)
    expect(spent.json()).toEqual({
      code: 'rate_limited',
      message: `Rate limit exceeded: 20 a minute; retry in ${60 - ((START / 1000) % 60)} s`,
      status: 429
    })
    const standing = await three[1]!.inject({ ...issued.read, url: '/v1/rate_limit' })
    expect(standing.json().costs).toEqual({ 'POST /v1/pets': 5, 'GET /v1/pets/{petId}': 0 })
    const { rows } = await sql<{ window: string; used: string }>`
      SELECT "window", used FROM limit_counters WHERE account_id = ${issued.accountId} ORDER BY "window"`.execute(
      database.db
    )
    expect(rows.map((row) => [row.window, Number(row.used)])).toEqual([
      ['day', 20],
      ['minute', 20]
    ])
    await three[0]!.close()
    await three[1]!.close()
    await three[2]!.close()
    await fresh!.close()
    apps.splice(0)
    const usage = await sql<{ admitted: string; refused: string; units: string }>`
      SELECT sum(admitted) AS admitted, sum(refused) AS refused, sum(units) AS units FROM api_key_usage
      WHERE api_key_id = ${issued.id}`.execute(database.db)
    // 4 creations, 6 GETs and 4 HEADs admitted, the fifth creation and the read refused.
    expect(usage.rows[0]).toEqual({ admitted: '14', refused: '2', units: '20' })
  })

  it('refuse a request whose cost is more than is left, while a cheaper one still fits', async () => {
    const [app] = await instances(1)
    const issued = await keyOnPlan([{ window: 'minute', limit: 7 }], { 'POST /v1/pets': 5 })
    const create = {
      method: 'POST' as const,
      url: '/v1/pets',
      headers: bearer(issued.key),
      payload: { name: 'Bo', categoryId: 1 }
    }
    expect((await app!.inject(create)).statusCode).toBe(201)
    const refused = await app!.inject(create)
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['x-ratelimit-remaining']).toBe('0')
    expect(statuses(await fire(app!, 3, issued.read, 1))).toEqual({ 200: 2, 429: 1 })
    const { rows } = await sql<{ count: string }>`SELECT count(*) FROM pets WHERE name = 'Bo'`.execute(database.db)
    expect(Number(rows[0]!.count)).toBe(1)
  })
})

describe('overrides', () => {
  it('replace a plan’s limit until their instant on the database’s clock, then the plan’s applies again', async () => {
    const [app] = await instances(1)
    const issued = await keyOnPlan([{ window: 'minute', limit: 2 }])
    await sql`INSERT INTO account_limit_overrides (account_id, "window", "limit", until)
      VALUES (${issued.accountId}, 'minute', 5, ${new Date(START + 90_000)})`.execute(database.db)
    await vi.waitFor(async () => expect((await app!.inject(issued.read)).headers['x-ratelimit-limit']).toBe('5'))
    await clock.set(START - (START % 60_000) + 60_000)
    expect(statuses(await fire(app!, 6, issued.read, 1))).toEqual({ 200: 5, 429: 1 })
    // At START + 90 s (10:22:00) the override has ended: the plan's 2 again, in a new minute.
    await clock.set(START + 90_000)
    const answered = await fire(app!, 3, issued.read, 1)
    expect(statuses(answered)).toEqual({ 200: 2, 429: 1 })
    expect(answered[0]!.headers['x-ratelimit-limit']).toBe('2')
  })

  it('never give back what was spent: lowering a limit mid-window refuses at once, raising it admits the difference', async () => {
    const three = await instances(3)
    const issued = await keyOnPlan([{ window: 'hour', limit: 50 }])
    expect(statuses(await across(three, 30, issued.read))).toEqual({ 200: 30 })
    await sql`UPDATE plan_limits SET "limit" = 20 WHERE plan = ${issued.plan}`.execute(database.db)
    // Leases counted before the change are usable for a second at most.
    await clock.advance(1_000)
    expect(statuses(await across(three, 3, issued.read))).toEqual({ 429: 3 })
    await sql`UPDATE plan_limits SET "limit" = 35 WHERE plan = ${issued.plan}`.execute(database.db)
    await clock.advance(1_000)
    expect(statuses(await across(three, 9, issued.read))).toEqual({ 200: 5, 429: 4 })
  })
})

describe('credits', () => {
  it('run down with every admitted unit, refuse with credits_exhausted at zero, and refill at the next window', async () => {
    const three = await instances(3)
    const issued = await keyOnPlan([{ window: 'minute', limit: 1000 }], { 'POST /v1/pets': 3 })
    await sql`INSERT INTO account_credits (account_id, remaining, refill_amount, refill_every, refilled_at)
      VALUES (${issued.accountId}, 10, 4, 'day', ${new Date(START - (START % 86_400_000))})`.execute(database.db)
    expect(statuses(await across(three, 12, issued.read))).toEqual({ 200: 10, 429: 2 })
    const refused = await three[0]!.inject(issued.read)
    expect(refused.json()).toEqual({
      code: 'credits_exhausted',
      message: `This account's credits are spent; they refill in ${(Date.parse('2027-03-16T00:00:00Z') - START) / 1000} s`,
      status: 429
    })
    expect((await three[0]!.inject({ ...issued.read, url: '/v1/rate_limit' })).json().credits).toBe(0)
    await clock.set(Date.parse('2027-03-16T00:00:00Z'))
    const create = {
      method: 'POST' as const,
      url: '/v1/pets',
      headers: bearer(issued.key),
      payload: { name: 'Ada', categoryId: 2 }
    }
    expect(statuses(await across(three, 2, create))).toEqual({ 201: 1, 429: 1 })
    expect(statuses(await across(three, 2, issued.read))).toEqual({ 200: 1, 429: 1 })
    const { rows } = await sql<{ remaining: string }>`
      SELECT remaining FROM account_credits WHERE account_id = ${issued.accountId}`.execute(database.db)
    expect(Number(rows[0]!.remaining)).toBe(0)
  })

  it('without a refill, refuse without Retry-After once spent', async () => {
    const [app] = await instances(1)
    const issued = await keyOnPlan([{ window: 'minute', limit: 1000 }])
    await sql`INSERT INTO account_credits (account_id, remaining) VALUES (${issued.accountId}, 1)`.execute(database.db)
    expect((await app!.inject(issued.read)).statusCode).toBe(200)
    const refused = await app!.inject(issued.read)
    expect(refused.json()).toEqual({
      code: 'credits_exhausted',
      message: "This account's credits are spent",
      status: 429
    })
    expect(refused.headers['retry-after']).toBeUndefined()
  })
})

describe('threshold events', () => {
  it('are written once per window at 80 % and 100 % of each fixed limit of an hour or longer', async () => {
    const three = await instances(3)
    const issued = await keyOnPlan([
      { window: 'minute', limit: 100 },
      { window: 'hour', limit: 10 },
      { window: 'day', limit: 50 }
    ])
    await clock.set(Date.parse('2027-03-15T10:00:00Z'))
    await across(three, 12, issued.read)
    await clock.set(Date.parse('2027-03-15T11:00:00Z'))
    await across(three, 8, issued.read)
    const { rows } = await sql<{ type: string; account_id: string; data: Record<string, unknown> }>`
      SELECT type, account_id, data FROM webhook_events WHERE type = 'usage.threshold' ORDER BY id`.execute(database.db)
    expect(rows.map((row) => [row.data.window, row.data.percent, row.data.used, row.data.windowStart])).toEqual([
      ['hour', 80, 8, '2027-03-15T10:00:00Z'],
      ['hour', 100, 10, '2027-03-15T10:00:00Z'],
      ['hour', 80, 8, '2027-03-15T11:00:00Z']
    ])
    expect(rows[0]!.data).toEqual({
      account: { id: String(issued.accountId) },
      window: 'hour',
      limit: 10,
      used: 8,
      percent: 80,
      windowStart: '2027-03-15T10:00:00Z',
      windowEnd: '2027-03-15T11:00:00Z'
    })
    expect(rows.every((row) => BigInt(row.account_id) === issued.accountId)).toBe(true)
  })
})

describe('bans', () => {
  it('reach an instance holding a lease of the account at once: the banned key is refused there, its sibling is not', async () => {
    const [busy, other] = await instances(2, { BAN_AFTER: '1', BAN_SECONDS: '300' })
    const issued = await keyOnPlan([{ window: 'minute', limit: 100_000 }])
    const sibling = await issueApiKey(database.db, { accountId: issued.accountId })
    // The sibling's burst gives `busy` a lease of the account.
    expect(statuses(await fire(busy!, 300, { ...issued.read, headers: bearer(sibling.key) }, 30))).toEqual({ 200: 300 })
    // The account's minute is made one short of spent; `busy` keeps its lease (the clock stands still).
    const { rows: counted } = await sql<{ used: string }>`
      SELECT used FROM limit_counters WHERE account_id = ${issued.accountId} AND "window" = 'minute'`.execute(
      database.db
    )
    await sql`INSERT INTO account_limit_overrides (account_id, "window", "limit")
      VALUES (${issued.accountId}, 'minute', ${Number(counted[0]!.used) + 1})`.execute(database.db)
    // The key is banned by the database through the other instance: refused past BAN_AFTER.
    const refusals = await fire(other!, 4, issued.read, 1)
    expect(refusals.map((response) => response.json().code ?? 'admitted')).toEqual([
      'admitted',
      'rate_limited',
      'rate_limited',
      'key_banned'
    ])
    const { rows } = await sql<{ type: string; data: { key: { id: string } } }>`
      SELECT type, data FROM webhook_events WHERE type = 'key.banned'`.execute(database.db)
    expect(rows.map((row) => row.data.key.id)).toEqual([String(issued.id)])
    await vi.waitFor(async () => expect((await busy!.inject(issued.read)).json().code).toBe('key_banned'))
  })
})

describe('a plan made over the admin API', () => {
  it('with a minute bucket, a day, a month and a cost of 5 to add a pet: three instances never admit past any limit', async () => {
    const admin = await createTestAdminApp(database, { clock })
    apps.push(admin)
    const call = (options: InjectOptions) =>
      admin.inject({ ...options, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    const plan = await call({
      method: 'PUT',
      url: '/admin/v1/plans/done-when',
      payload: {
        limits: [
          { window: 'minute', algorithm: 'bucket', limit: 10 },
          { window: 'day', limit: 25 },
          { window: 'month', limit: 40 }
        ],
        costs: { 'POST /v1/pets': 5 }
      }
    })
    expect(plan.statusCode, plan.body).toBe(201)
    const issued = await call({ method: 'POST', url: '/admin/v1/keys', payload: { plan: 'done-when' } })
    expect(issued.statusCode, issued.body).toBe(201)
    const { key, accountId } = issued.json<{ key: string; accountId: number }>()
    const three = await instances(3)
    const create = {
      method: 'POST' as const,
      url: '/v1/pets',
      headers: bearer(key),
      payload: { name: 'Rex', categoryId: 1 }
    }
    const refusal = (responses: { statusCode: number; json(): { message: string } }[]) =>
      responses.find((response) => response.statusCode === 429)?.json().message

    // The bucket holds 10 units: two pets, then it refuses.
    const first = await across(three, 3, create)
    expect(statuses(first)).toEqual({ 201: 2, 429: 1 })
    expect(refusal(first)).toMatch(/^Rate limit exceeded: the minute bucket of 10; retry in 30 s$/)
    const policy = '"minute";q=10;w=60, "day";q=25;w=86400, "month";q=40;w=2592000'
    expect(first.every((response) => response.headers['ratelimit-policy'] === policy)).toBe(true)
    // A minute later it is full again; the day's 25 units allow one pet more after those two.
    await clock.advance(60_000)
    expect(statuses(await across(three, 2, create))).toEqual({ 201: 2 })
    await clock.advance(60_000)
    const dayEnd = await across(three, 3, create)
    expect(statuses(dayEnd)).toEqual({ 201: 1, 429: 2 })
    expect(refusal(dayEnd)).toMatch(/^Rate limit exceeded: 25 a day; retry in \d+ s$/)

    // The next day the month has 15 units left: three pets.
    await clock.set(Date.parse('2027-03-16T00:00:00Z'))
    const monthEnd = await across(three, 4, create)
    expect(statuses(monthEnd)).toEqual({ 201: 2, 429: 2 })
    await clock.advance(60_000)
    const spent = await across(three, 2, create)
    expect(statuses(spent)).toEqual({ 201: 1, 429: 1 })
    expect(refusal(spent)).toMatch(/^Rate limit exceeded: 40 a month; retry in \d+ s$/)

    // An override of the month until the 20th, and credits for one pet.
    const patched = await call({
      method: 'PATCH',
      url: `/admin/v1/accounts/${accountId}`,
      payload: { overrides: [{ window: 'month', limit: 100, until: '2027-03-20T00:00:00Z' }] }
    })
    expect(patched.statusCode, patched.body).toBe(200)
    const topped = await call({ method: 'POST', url: `/admin/v1/accounts/${accountId}/credits`, payload: { add: 5 } })
    expect(topped.statusCode, topped.body).toBe(200)
    // A minute on, the bucket and the day have room for a pet more: only the credits refuse the second.
    await clock.advance(60_000)
    const credited = await across(three, 2, create)
    expect(statuses(credited)).toEqual({ 201: 1, 429: 1 })
    expect(credited.find((response) => response.statusCode === 429)!.json()).toMatchObject({
      code: 'credits_exhausted'
    })
    const withOverride = credited.find((response) => response.statusCode === 201)!
    expect(withOverride.headers['ratelimit-policy']).toBe(
      '"minute";q=10;w=60, "day";q=25;w=86400, "month";q=100;w=2592000'
    )

    // What the database holds: no limit past its figure, no credits below zero.
    const { rows } = await sql<{ window: string; used: string; level: number }>`
      SELECT "window", used::text, level FROM limit_counters WHERE account_id = ${BigInt(accountId)} ORDER BY "window"
    `.execute(database.db)
    // The second day's 20 units: four pets, the last on credits; the month's 45 under its override.
    expect(rows.map((row) => [row.window, row.used])).toEqual([
      ['day', '20'],
      ['minute', '0'],
      ['month', '45']
    ])
    const credits = await sql<{ remaining: string }>`
      SELECT remaining::text FROM account_credits WHERE account_id = ${BigInt(accountId)}
    `.execute(database.db)
    expect(credits.rows).toEqual([{ remaining: '0' }])
  })
})
