import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { createTestApp, manualClock } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { bearer, fire, statuses } from '../helpers/traffic.js'

const NOON = Date.parse('2027-01-01T12:00:15Z')
const MINUTE_RESET = Date.parse('2027-01-01T12:01:00Z') / 1000
const DAY_RESET = Date.parse('2027-01-02T00:00:00Z') / 1000
const clock = manualClock(NOON)
let database: TestDatabase
let app: FastifyInstance
beforeAll(async () => {
  database = await createTestDatabase()
  app = await createTestApp(database, { clock, env: { BAN_AFTER: '2', BAN_SECONDS: '600' } })
})
afterAll(async () => {
  await app?.close()
  await database?.drop()
})

const status = (key: string) => app.inject({ method: 'GET', url: '/v1/rate_limit', headers: bearer(key) })
const counted = async (accountId: bigint) =>
  (
    await sql<{
      minute_used: number
    }>`SELECT minute_used FROM rate_limit_counters WHERE subject = ${`account:${accountId}`}`.execute(database.db)
  ).rows[0]?.minute_used ?? 0

describe('GET /v1/rate_limit', () => {
  it("shows the key's plan and both windows, and never counts against them", async () => {
    const { key, accountId } = await issueApiKey(database.db, { plan: 'pro' })
    for (let i = 0; i < 5; i++) expect((await status(key)).statusCode).toBe(200)
    expect(await counted(accountId)).toBe(0)
    const response = await status(key)
    expect(response.json()).toEqual({
      account: { id: Number(accountId), externalId: null },
      plan: 'pro',
      windows: [
        { name: 'minute', limit: 300, used: 0, remaining: 300, reset: MINUTE_RESET },
        { name: 'day', limit: 10000, used: 0, remaining: 10000, reset: DAY_RESET }
      ],
      bannedUntil: null
    })
    expect(response.headers['x-ratelimit-remaining']).toBe('300')

    // Five requests that count (a pro key leases units ahead; those still held here are not used).
    const sent = await fire(app, 5, { method: 'GET', url: '/v1/pets', headers: bearer(key) }, 1)
    const after = (await status(key)).json()
    expect(after.windows.map((window: { used: number }) => window.used)).toEqual([5, 5])
    expect(String(after.windows[0].remaining)).toBe(sent.at(-1)!.headers['x-ratelimit-remaining'])
  })

  it('answers while the key is refused, and while it is banned', async () => {
    const { key } = await issueApiKey(database.db, { plan: 'free' })
    const request = { method: 'GET' as const, url: '/v1/pets', headers: bearer(key) }
    expect(statuses(await fire(app, 61, request, 1))).toEqual({ 200: 60, 429: 1 })
    const limited = await status(key)
    expect(limited.statusCode).toBe(200)
    expect(limited.json().windows[0]).toEqual({
      name: 'minute',
      limit: 60,
      used: 60,
      remaining: 0,
      reset: MINUTE_RESET
    })
    expect(limited.json().bannedUntil).toBeNull()

    const refusals = await fire(app, 3, request, 1)
    expect(refusals.at(-1)!.json().code).toBe('key_banned')
    const banned = await status(key)
    expect(banned.statusCode).toBe(200)
    expect(banned.json().bannedUntil).toBe(new Date(NOON + 600_000).toISOString())
    expect(banned.headers['retry-after']).toBeUndefined()
    expect(banned.headers['x-ratelimit-reset']).toBe(String((NOON + 600_000) / 1000))
  })

  it('answers 401 without a valid key, on the address budget', async () => {
    const none = await app.inject({ method: 'GET', url: '/v1/rate_limit' })
    expect(none.statusCode).toBe(401)
    expect(none.headers['www-authenticate']).toBe('Bearer realm="animal-store"')
    expect(none.headers['ratelimit-policy']).toBe('"minute";q=60;w=60')
    const wrong = await app.inject({
      method: 'GET',
      url: '/v1/rate_limit',
      headers: bearer('ask_AAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')
    })
    expect(wrong.statusCode).toBe(401)
  })

  it('is in the OpenAPI document', async () => {
    const document = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
    expect(document.paths['/rate_limit'].get.operationId).toBe('getRateLimit')
    expect(document.components.schemas.RateLimitStatus).toBeDefined()
  })
})

describe('housekeeping', () => {
  it('deletes usage past USAGE_RETENTION_DAYS, today included, and keeps the rest', async () => {
    const retaining = await createTestApp(database, { clock, env: { USAGE_RETENTION_DAYS: '3' } })
    try {
      const { id } = await issueApiKey(database.db, { plan: 'free' })
      for (const day of ['2026-12-29', '2026-12-30', '2026-12-31', '2027-01-01']) {
        await sql`INSERT INTO api_key_usage (api_key_id, day, admitted, refused) VALUES (${id}, ${day}, 1, 0)`.execute(
          database.db
        )
      }
      expect((await retaining.housekeeping.run()).usageDays).toBe(1)
      const { rows } = await sql<{ day: string }>`
        SELECT day FROM api_key_usage WHERE api_key_id = ${id} ORDER BY day`.execute(database.db)
      expect(rows.map((row) => row.day)).toEqual(['2026-12-30', '2026-12-31', '2027-01-01'])
    } finally {
      await retaining.close()
    }
  })
})
