import type { FastifyInstance, InjectOptions } from 'fastify'
import { sql } from 'kysely'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { countUnits, deleteIdleCounters } from '../../src/repositories/rate-limits.js'
import { createTestApp, manualClock } from '../helpers/app.js'
import { bearer, fire, statuses } from '../helpers/traffic.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { addPlan, type TestLimit } from '../helpers/plans.js'

// Months that follow the account's cycleAnchor, counted on the database's clock by instances that
// share one database.
let database: TestDatabase
const at = (instant: string) => Date.parse(instant)
const clock = manualClock(at('2027-02-15T00:00:00Z'), () => database)
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
  await sql`TRUNCATE account_counters, api_key_bans, webhook_events CASCADE`.execute(database.db)
})

async function instances(count: number) {
  const made = await Promise.all(
    Array.from({ length: count }, () => createTestApp(database, { clock, env: { BAN_AFTER: '100000' } }))
  )
  apps.push(...made)
  return made
}

let plans = 0
/** A plan of these limits, and a key of a new account on it whose months start at `cycleAnchor`. */
async function keyOnPlan(limits: TestLimit[], cycleAnchor: string) {
  const name = `anchored-${++plans}`
  await addPlan(database.db, name, limits)
  const issued = await issueApiKey(database.db, { plan: name })
  await sql`UPDATE accounts SET cycle_anchor = ${cycleAnchor} WHERE id = ${issued.accountId}`.execute(database.db)
  const read = { method: 'GET' as const, url: '/v1/pets?limit=1', headers: bearer(issued.key) }
  return { ...issued, read }
}

/** Sends `n` requests spread over the instances in turn, a few at a time, all at once. */
async function across(apps: FastifyInstance[], n: number, request: InjectOptions) {
  const answered = await Promise.all(
    apps.map((app, i) => fire(app, Math.floor(n / apps.length) + (i < n % apps.length ? 1 : 0), request, 4))
  )
  return answered.flat()
}

const seconds = (instant: string) => String(at(instant) / 1000)

describe('a month anchored on the 31st', () => {
  it('counts its February exactly across 3 instances, from the last day of February to 31 March', async () => {
    const three = await instances(3)
    const { read, accountId } = await keyOnPlan(
      [{ window: 'month', limit: 12, anchor: 'account' }],
      '2027-01-31T10:00:00Z'
    )

    // 28 February, before 10:00: still the period that began on 31 January.
    await clock.set(at('2027-02-28T09:59:59.000Z'))
    const january = await across(three, 15, read)
    expect(statuses(january)).toEqual({ 200: 12, 429: 3 })
    const refused = january.find((response) => response.statusCode === 429)!
    expect(refused.headers['x-ratelimit-reset']).toBe(seconds('2027-02-28T10:00:00Z'))
    expect(refused.headers['retry-after']).toBe('1')

    // 10:00 on 28 February starts the February period, in the middle of the calendar's February.
    await clock.set(at('2027-02-28T10:00:00.000Z'))
    const february = await across(three, 20, read)
    expect(statuses(february)).toEqual({ 200: 12, 429: 8 })
    const admitted = february.filter((response) => response.statusCode === 200)
    expect(new Set(admitted.map((response) => response.headers['x-ratelimit-reset']))).toEqual(
      new Set([seconds('2027-03-31T10:00:00Z')])
    )
    const last = february.find((response) => response.statusCode === 429)!
    expect(last.headers['x-ratelimit-remaining']).toBe('0')
    expect(last.headers.ratelimit).toBe(`"month";r=0;t=${(at('2027-03-31T10:00:00Z') - clock()) / 1000}`)
    expect(last.headers['ratelimit-policy']).toBe('"month";q=12;w=2592000')

    const standing = await three[1]!.inject({ ...read, url: '/v1/rate_limit' })
    expect(standing.json().windows).toEqual([
      {
        name: 'month',
        algorithm: 'fixed',
        limit: 12,
        used: 12,
        remaining: 0,
        reset: at('2027-03-31T10:00:00Z') / 1000,
        shadow: false
      }
    ])

    // The calendar's March starts nothing: the period runs to 31 March, 10:00.
    await clock.set(at('2027-03-01T00:00:00.000Z'))
    expect(statuses(await across(three, 3, read))).toEqual({ 429: 3 })
    await clock.set(at('2027-03-31T09:59:59.999Z'))
    expect(statuses(await across(three, 3, read))).toEqual({ 429: 3 })
    await clock.set(at('2027-03-31T10:00:00.000Z'))
    const march = await across(three, 14, read)
    expect(statuses(march)).toEqual({ 200: 12, 429: 2 })
    expect(march.find((response) => response.statusCode === 200)!.headers['x-ratelimit-reset']).toBe(
      seconds('2027-04-30T10:00:00Z')
    )

    // Each period's usage.threshold events name that period.
    const { rows } = await sql<{ data: { percent: number; windowStart: string; windowEnd: string } }>`
      SELECT data FROM webhook_events WHERE type = 'usage.threshold' AND account_id = ${accountId} ORDER BY id
    `.execute(database.db)
    expect(rows.map(({ data }) => [data.percent, data.windowStart, data.windowEnd])).toEqual([
      [80, '2027-01-31T10:00:00Z', '2027-02-28T10:00:00Z'],
      [100, '2027-01-31T10:00:00Z', '2027-02-28T10:00:00Z'],
      [80, '2027-02-28T10:00:00Z', '2027-03-31T10:00:00Z'],
      [100, '2027-02-28T10:00:00Z', '2027-03-31T10:00:00Z'],
      [80, '2027-03-31T10:00:00Z', '2027-04-30T10:00:00Z'],
      [100, '2027-03-31T10:00:00Z', '2027-04-30T10:00:00Z']
    ])
  })

  it('as a shadow, refuses nothing and names its period in limit.would_refuse', async () => {
    const [app] = await instances(1)
    const { read, accountId } = await keyOnPlan(
      [
        { window: 'month', limit: 100 },
        { window: 'month', limit: 2, anchor: 'account', shadow: true }
      ],
      '2027-01-31T10:00:00Z'
    )
    await clock.set(at('2027-02-28T12:00:00Z'))
    expect(statuses(await fire(app!, 3, read, 1))).toEqual({ 200: 3 })
    const { rows } = await sql<{ data: { windowStart: string; windowEnd: string } }>`
      SELECT data FROM webhook_events WHERE type = 'limit.would_refuse' AND account_id = ${accountId}
    `.execute(database.db)
    expect(rows.map(({ data }) => [data.windowStart, data.windowEnd])).toEqual([
      ['2027-02-28T10:00:00Z', '2027-03-31T10:00:00Z']
    ])
  })

  it('in a leap year, starts its February period on the 29th', async () => {
    const [app] = await instances(1)
    const { read } = await keyOnPlan([{ window: 'month', limit: 2, anchor: 'account' }], '2028-01-31T00:00:00Z')
    await clock.set(at('2028-02-28T23:59:59.000Z'))
    expect(statuses(await fire(app!, 3, read, 1))).toEqual({ 200: 2, 429: 1 })
    await clock.set(at('2028-02-29T00:00:00.000Z'))
    const answered = await fire(app!, 3, read, 1)
    expect(statuses(answered)).toEqual({ 200: 2, 429: 1 })
    expect(answered[0]!.headers['x-ratelimit-reset']).toBe(seconds('2028-03-31T00:00:00Z'))
  })
})

describe('an anchor', () => {
  it('moved starts the month afresh in the period of the new anchor that holds now', async () => {
    const [app] = await instances(1)
    const { read, accountId } = await keyOnPlan(
      [{ window: 'month', limit: 3, anchor: 'account' }],
      '2027-01-10T00:00:00Z'
    )
    await clock.set(at('2027-02-15T00:00:00Z'))
    expect(statuses(await fire(app!, 4, read, 1))).toEqual({ 200: 3, 429: 1 })
    // Ahead of now: the period under way is the one that ends at a whole number of months before it.
    await sql`UPDATE accounts SET cycle_anchor = '2027-06-20T00:00:00Z' WHERE id = ${accountId}`.execute(database.db)
    await clock.advance(1_000)
    const answered = await fire(app!, 4, read, 1)
    expect(statuses(answered)).toEqual({ 200: 3, 429: 1 })
    expect(answered[0]!.headers['x-ratelimit-reset']).toBe(seconds('2027-02-20T00:00:00Z'))
  })

  it('leaves a calendar month as it is: that plan’s month starts on the 1st', async () => {
    const [app] = await instances(1)
    const { read } = await keyOnPlan([{ window: 'month', limit: 2 }], '2027-01-31T10:00:00Z')
    await clock.set(at('2027-02-28T12:00:00Z'))
    const answered = await fire(app!, 3, read, 1)
    expect(statuses(answered)).toEqual({ 200: 2, 429: 1 })
    expect(answered[0]!.headers['x-ratelimit-reset']).toBe(seconds('2027-03-01T00:00:00Z'))
  })

  it('keeps an anchored month’s counter past the calendar month’s end, until its period’s', async () => {
    const [app] = await instances(1)
    const { read, accountId } = await keyOnPlan(
      [{ window: 'month', limit: 2, anchor: 'account' }],
      '2027-01-31T10:00:00Z'
    )
    await clock.set(at('2027-02-28T12:00:00Z'))
    expect(statuses(await fire(app!, 3, read, 1))).toEqual({ 200: 2, 429: 1 })
    const kept = async () =>
      (await sql`SELECT FROM account_counters WHERE account_id = ${accountId}`.execute(database.db)).rows.length
    await clock.set(at('2027-03-15T00:00:00Z'))
    await deleteIdleCounters(database.db)
    expect(await kept()).toBe(1)
    expect(statuses(await fire(app!, 1, read, 1))).toEqual({ 429: 1 })
    await clock.set(at('2027-03-31T10:00:00Z'))
    await deleteIdleCounters(database.db)
    expect(await kept()).toBe(0)
  })

  it('ends a lease at the anchored month’s end when that comes before the shortest window’s', async () => {
    const { id, accountId } = await keyOnPlan(
      [
        { window: 'minute', limit: 1000 },
        { window: 'month', limit: 5000, anchor: 'account' }
      ],
      '2027-01-31T10:00:30.250Z'
    )
    await clock.set(at('2027-02-28T10:00:29.750Z'))
    const [state] = await countUnits(database.pool, [
      { apiKeyId: id, accountId, cost: 1, want: 50, returned: 0, returnedAt: 0, banAfter: null, banSeconds: 60 }
    ])
    expect(state).toMatchObject({ admitted: true, granted: 50, leaseUntil: at('2027-02-28T10:00:30.250Z') })
    expect(state!.windows.map((window) => [window.name, window.resetAt])).toEqual([
      ['minute', at('2027-02-28T10:01:00Z')],
      ['month', at('2027-02-28T10:00:30.250Z')]
    ])
  })
})
