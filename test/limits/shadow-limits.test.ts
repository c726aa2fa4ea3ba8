import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { asAdmin, createTestAdminApp, createTestApp, manualClock } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { bearer, fire, statuses } from '../helpers/traffic.js'
import { addPlan, type TestLimit } from '../helpers/plans.js'

// Shadow limits: counted and reported beside the enforced ones, never refusing.
let database: TestDatabase
// The start of a minute, so that all of it lies ahead.
const START = Date.parse('2027-03-15T10:20:00.000Z')
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

async function instance() {
  const app = await createTestApp(database, { clock, env: { BAN_AFTER: '100000' } })
  apps.push(app)
  return app
}

async function adminApp() {
  const app = await createTestAdminApp(database, { clock })
  apps.push(app)
  const admin = asAdmin(app)
  return {
    get: (url: string) => admin.inject({ method: 'GET', url }),
    put: (url: string, payload: object) => admin.inject({ method: 'PUT', url, payload })
  }
}

let plans = 0
/** A plan of these limits, and a key of a new account on it. */
async function keyOnPlan(limits: TestLimit[]) {
  const name = `shadow-${++plans}`
  await addPlan(database.db, name, limits)
  const issued = await issueApiKey(database.db, { plan: name })
  const read = { method: 'GET' as const, url: '/v1/pets?limit=1', headers: bearer(issued.key) }
  const status = { method: 'GET' as const, url: '/v1/rate_limit', headers: bearer(issued.key) }
  return { ...issued, plan: name, read, status }
}

async function wouldRefuseEvents(accountId: bigint) {
  const { rows } = await sql<{ data: Record<string, unknown> }>`
    SELECT data FROM webhook_events WHERE type = 'limit.would_refuse' AND account_id = ${accountId}
    ORDER BY id`.execute(database.db)
  return rows.map((row) => row.data)
}

async function wouldRefuseCount(app: FastifyInstance, window: string): Promise<number> {
  const metric = await app.metrics.registry.getSingleMetric('animal_store_rate_limit_would_refuse_total')!.get()
  return metric.values.find((value) => value.labels.window === window)?.value ?? 0
}

describe('a shadow limit', () => {
  it('that would have refused leaves every request admitted, and its event is sent once', async () => {
    const app = await instance()
    const { read, status, accountId, id } = await keyOnPlan([
      { window: 'minute', limit: 10 },
      { window: 'minute', limit: 3, shadow: true }
    ])
    const answered = await fire(app, 5, read, 1)
    expect(statuses(answered)).toEqual({ 200: 5 })
    const last = answered.at(-1)!
    expect(last.headers['ratelimit-shadow-policy']).toBe('"minute";q=3;w=60')
    expect(last.headers['ratelimit-shadow']).toBe('"minute";r=0;t=60')
    // The enforced fields describe the enforced minute alone.
    expect(last.headers['ratelimit-policy']).toBe('"minute";q=10;w=60')
    expect(last.headers['x-ratelimit-remaining']).toBe('5')
    expect(answered[0]!.headers['ratelimit-shadow']).toBe('"minute";r=2;t=60')

    expect(await wouldRefuseEvents(accountId)).toEqual([
      {
        account: { id: String(accountId) },
        key: { id: String(id) },
        window: 'minute',
        limit: 3,
        used: 4,
        windowStart: '2027-03-15T10:20:00Z',
        windowEnd: '2027-03-15T10:21:00Z'
      }
    ])
    expect(await wouldRefuseCount(app, 'minute')).toBe(2)

    const standing = await app.inject(status)
    expect(standing.statusCode).toBe(200)
    expect(standing.json().windows).toEqual([
      {
        name: 'minute',
        algorithm: 'fixed',
        shadow: false,
        limit: 10,
        used: 5,
        remaining: 5,
        reset: (START + 60_000) / 1000
      },
      {
        name: 'minute',
        algorithm: 'fixed',
        shadow: true,
        limit: 3,
        used: 5,
        remaining: 0,
        reset: (START + 60_000) / 1000
      }
    ])
    expect(standing.headers['ratelimit-shadow']).toBe('"minute";r=0;t=60')
  })

  it('reads the same from another instance, from what the database holds', async () => {
    const [one, other] = [await instance(), await instance()]
    const { read, status } = await keyOnPlan([
      { window: 'minute', limit: 10 },
      { window: 'minute', limit: 3, shadow: true }
    ])
    expect(statuses(await fire(one, 4, read, 1))).toEqual({ 200: 4 })
    const windows = (await other.inject(status)).json().windows
    expect(windows[1]).toMatchObject({ name: 'minute', shadow: true, limit: 3, used: 4, remaining: 0 })
    expect(windows[0]).toMatchObject({ name: 'minute', shadow: false, limit: 10, used: 4, remaining: 6 })
  })

  it('sends its event again in the next window, once', async () => {
    const app = await instance()
    const { read, accountId } = await keyOnPlan([
      { window: 'minute', limit: 10 },
      { window: 'minute', limit: 2, shadow: true }
    ])
    expect(statuses(await fire(app, 4, read, 1))).toEqual({ 200: 4 })
    await clock.set(START + 60_000)
    expect(statuses(await fire(app, 4, read, 1))).toEqual({ 200: 4 })
    const events = await wouldRefuseEvents(accountId)
    expect(events.map((event) => [event.windowStart, event.used])).toEqual([
      ['2027-03-15T10:20:00Z', 3],
      ['2027-03-15T10:21:00Z', 3]
    ])
    expect(await wouldRefuseCount(app, 'minute')).toBe(4)
  })

  it('alone in a plan refuses nothing, its fields sent without the enforced ones', async () => {
    const app = await instance()
    const { read, accountId } = await keyOnPlan([{ window: 'minute', limit: 2, shadow: true }])
    const answered = await fire(app, 4, read, 1)
    expect(statuses(answered)).toEqual({ 200: 4 })
    expect(answered.at(-1)!.headers['ratelimit-shadow']).toBe('"minute";r=0;t=60')
    expect(answered.at(-1)!.headers['ratelimit-policy']).toBeUndefined()
    expect(answered.at(-1)!.headers['x-ratelimit-limit']).toBeUndefined()
    expect(await wouldRefuseEvents(accountId)).toHaveLength(1)
  })

  it('does not change what the enforced limit refuses', async () => {
    const app = await instance()
    const { read, accountId } = await keyOnPlan([
      { window: 'minute', limit: 3 },
      { window: 'minute', limit: 5, shadow: true }
    ])
    const answered = await fire(app, 6, read, 1)
    expect(statuses(answered)).toEqual({ 200: 3, 429: 3 })
    expect(answered.at(-1)!.headers['ratelimit-shadow']).toBe('"minute";r=2;t=60')
    expect(answered.at(-1)!.headers['retry-after']).toBe('60')
    expect(await wouldRefuseEvents(accountId)).toEqual([])
  })

  it('leaves its account without a lease: each request is counted in the database as it comes', async () => {
    const app = await instance()
    const { read, accountId } = await keyOnPlan([
      { window: 'minute', limit: 1000 },
      { window: 'minute', limit: 1000, shadow: true }
    ])
    // Busy enough that an account of enforced limits alone would be leased a block.
    expect(statuses(await fire(app, 40, read, 8))).toEqual({ 200: 40 })
    expect(app.limiter.unusedLease(accountId)).toBe(0)
    const { rows } = await sql<{ windows: string[]; used: string[] }>`
      SELECT windows, used FROM account_counters WHERE account_id = ${accountId}`.execute(database.db)
    expect(rows[0]).toEqual({ windows: ['minute', 'minute:shadow'], used: ['40', '40'] })
  })

  it('fires no usage.threshold event', async () => {
    const app = await instance()
    const { read, accountId } = await keyOnPlan([{ window: 'hour', limit: 2, shadow: true }])
    expect(statuses(await fire(app, 3, read, 1))).toEqual({ 200: 3 })
    const { rows } = await sql<{ type: string }>`
      SELECT type FROM webhook_events WHERE account_id = ${accountId} ORDER BY id`.execute(database.db)
    expect(rows.map((row) => row.type)).toEqual(['limit.would_refuse'])
  })
})

describe('plans with shadow limits on the admin API', () => {
  it('carry shadow through, one enforced and one shadow limit per window', async () => {
    const admin = await adminApp()
    const put = await admin.put('/admin/v1/plans/tighter', {
      limits: [
        { window: 'minute', limit: 3, shadow: true },
        { window: 'minute', limit: 10 }
      ]
    })
    expect(put.statusCode).toBe(201)
    expect(put.json().limits).toEqual([
      { window: 'minute', algorithm: 'fixed', limit: 10, burst: null, shadow: false },
      { window: 'minute', algorithm: 'fixed', limit: 3, burst: null, shadow: true }
    ])
    expect((await admin.get('/admin/v1/plans/tighter')).json().limits[1].shadow).toBe(true)
  })

  it('takes a plan of shadow limits alone', async () => {
    const admin = await adminApp()
    const put = await admin.put('/admin/v1/plans/only-shadow', { limits: [{ window: 'day', limit: 50, shadow: true }] })
    expect(put.statusCode).toBe(201)
    expect(put.json().limits).toEqual([{ window: 'day', algorithm: 'fixed', limit: 50, burst: null, shadow: true }])
  })

  it.each([
    [
      'two shadow limits of one window',
      [
        { window: 'minute', limit: 3, shadow: true },
        { window: 'minute', limit: 4, shadow: true }
      ],
      'limits has two shadow limits for the minute; one shadow limit per window'
    ],
    [
      'two enforced limits of one window',
      [
        { window: 'minute', limit: 3 },
        { window: 'minute', limit: 4, shadow: false }
      ],
      'limits has two limits for the minute; one per window'
    ]
  ])('refuses %s with 400', async (_, limits, message) => {
    const admin = await adminApp()
    const put = await admin.put('/admin/v1/plans/twice', { limits })
    expect(put.statusCode).toBe(400)
    expect(put.json()).toEqual({ code: 'invalid_request', message, status: 400 })
  })

  it('refuses a shadow that is not true or false with 400', async () => {
    const admin = await adminApp()
    const put = await admin.put('/admin/v1/plans/odd', { limits: [{ window: 'minute', limit: 3, shadow: 'yes' }] })
    expect(put.statusCode).toBe(400)
    expect(put.json()).toMatchObject({ code: 'invalid_request', status: 400 })
    expect(put.json().message).toContain('shadow')
  })

  it("reports an account's shadow windows beside its enforced ones", async () => {
    const app = await instance()
    const admin = await adminApp()
    const { read, accountId } = await keyOnPlan([
      { window: 'minute', limit: 10 },
      { window: 'minute', limit: 3, shadow: true }
    ])
    expect(statuses(await fire(app, 4, read, 1))).toEqual({ 200: 4 })
    const reported = await admin.get(`/admin/v1/accounts/${accountId}/windows`)
    expect(reported.statusCode).toBe(200)
    expect(
      reported.json().windows.map(({ shadow, limit, used, remaining }: Record<string, unknown>) => ({
        shadow,
        limit,
        used,
        remaining
      }))
    ).toEqual([
      { shadow: false, limit: 10, used: 4, remaining: 6 },
      { shadow: true, limit: 3, used: 4, remaining: 0 }
    ])
  })
})
