import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { createTestApp, manualClock } from '../helpers/app.js'
import { createTestDatabase, recordQueries, type TestDatabase } from '../helpers/database.js'
import { bearer, fire, statuses } from '../helpers/traffic.js'

const NOON = Date.parse('2027-01-01T12:00:15Z')
const MINUTE_RESET = Date.parse('2027-01-01T12:01:00Z') / 1000
const DAY_RESET = Date.parse('2027-01-02T00:00:00Z') / 1000
const clock = manualClock(NOON, () => database)
let database: TestDatabase
let app: FastifyInstance
beforeAll(async () => {
  database = await createTestDatabase()
  await clock.set(NOON)
  app = await createTestApp(database, { clock, env: { BAN_AFTER: '2', BAN_SECONDS: '600' } })
})
// Tests that move the database's clock for instances of their own leave it where they left it.
beforeEach(() => clock.set(NOON))
afterAll(async () => {
  await app?.close()
  await database?.drop()
})

const statusOn = (instance: FastifyInstance, key: string) =>
  instance.inject({ method: 'GET', url: '/v1/rate_limit', headers: bearer(key) })
const status = (key: string) => statusOn(app, key)
const used = (response: Awaited<ReturnType<typeof status>>) =>
  response.json().windows.map((window: { used: number }) => window.used)
/** Two instances on the test's database, sharing a clock (the database's too) that starts at `start`. */
async function twoInstances(start: number) {
  const clock = manualClock(start, () => database)
  await clock.set(start)
  const env = { BAN_AFTER: '2', BAN_SECONDS: '600' }
  const instances = [await createTestApp(database, { clock, env }), await createTestApp(database, { clock, env })]
  let closing: Promise<unknown> | undefined
  const close = () => (closing ??= Promise.all(instances.map((instance) => instance.close())))
  return { clock, instances, close }
}
const counted = async (accountId: bigint) =>
  Number(
    (
      await sql<{ used: string }>`
        SELECT used FROM limit_counters WHERE account_id = ${accountId} AND "window" = 'minute'`.execute(database.db)
    ).rows[0]?.used ?? 0
  )
/** The account's windows and its keys' streaks and bans as stored. */
const counterOf = async (accountId: bigint) => [
  ...(
    await sql`
      SELECT "window", started_at, used FROM limit_counters WHERE account_id = ${accountId} ORDER BY "window"`.execute(
      database.db
    )
  ).rows,
  ...(
    await sql`
      SELECT b.refused, b.refused_until, b.banned_until FROM api_key_bans b JOIN api_keys k ON k.id = b.api_key_id
      WHERE k.account_id = ${accountId}`.execute(database.db)
  ).rows
]
/** The key's requests as its usage of each hour records them. */
const usageOf = async (apiKeyId: bigint) =>
  (
    await sql`SELECT admitted::int, refused::int FROM api_key_usage WHERE api_key_id = ${apiKeyId} ORDER BY hour`.execute(
      database.db
    )
  ).rows

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
        { name: 'minute', algorithm: 'fixed', shadow: false, limit: 300, used: 0, remaining: 300, reset: MINUTE_RESET },
        { name: 'day', algorithm: 'fixed', shadow: false, limit: 10000, used: 0, remaining: 10000, reset: DAY_RESET }
      ],
      costs: {},
      credits: null,
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
      algorithm: 'fixed',
      shadow: false,
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

describe('GET /v1/rate_limit asked often', () => {
  const BAN_START = Date.parse('2027-01-01T13:00:05Z')

  it.each([
    [0, 'that banned it'],
    [1, 'that never served it']
  ])(
    'costs fewer than 50 queries for 1,000 calls from a banned key, on the instance %i (%s), and counts none',
    async (asked) => {
      const { clock, instances, close } = await twoInstances(BAN_START)
      try {
        const { key, id, accountId } = await issueApiKey(database.db, { plan: 'free' })
        const request = { method: 'GET' as const, url: '/v1/pets', headers: bearer(key) }
        const sent = await fire(instances[0]!, 64, request, 1)
        expect(statuses(sent)).toEqual({ 200: 60, 429: 4 })
        expect(sent.at(-1)!.json().code).toBe('key_banned')
        const before = await counterOf(accountId)

        // 1,000 calls over 50 s, ten at a time: a read every second alone would be 50 queries.
        const queries = recordQueries(database.name)
        const answers = []
        try {
          for (let i = 0; i < 1000; i += 10) {
            answers.push(...(await Promise.all(Array.from({ length: 10 }, () => statusOn(instances[asked]!, key)))))
            await clock.advance(500)
          }
        } finally {
          queries.stop()
        }
        expect(queries.texts.length, queries.texts.join('\n')).toBeLessThan(50)

        const banEnd = BAN_START + 600_000
        const seen = answers.map((answer) => ({
          status: answer.statusCode,
          bannedUntil: answer.json().bannedUntil,
          used: used(answer),
          remaining: answer.headers['x-ratelimit-remaining'],
          reset: answer.headers['x-ratelimit-reset'],
          retryAfter: answer.headers['retry-after']
        }))
        expect(new Set(seen.map((answer) => JSON.stringify(answer)))).toEqual(
          new Set([
            JSON.stringify({
              status: 200,
              bannedUntil: new Date(banEnd).toISOString(),
              used: [60, 60],
              remaining: '0',
              reset: String(banEnd / 1000)
            })
          ])
        )
        expect(await counterOf(accountId)).toEqual(before)
        expect((await fire(instances[asked]!, 1, request))[0]!.json().code).toBe('key_banned')
        // Closing reports the requests the instances decided alone: the 65 above, and no call.
        await close()
        expect(await usageOf(id)).toEqual([{ admitted: 60, refused: 5 }])
      } finally {
        await close()
      }
    }
  )

  it('shows each request of its own instance at once, whether a lease or a statement admitted it', async () => {
    // The file's clock stands still, so no read here is ever older than a second.
    const { key } = await issueApiKey(database.db, { plan: 'pro' })
    expect(used(await status(key))).toEqual([0, 0])
    for (let sent = 1; sent <= 30; sent++) {
      const response = await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key) })
      expect(response.statusCode).toBe(200)
      const answer = await status(key)
      expect(used(answer), `after ${sent} requests`).toEqual([sent, sent])
      expect(answer.headers['x-ratelimit-remaining']).toBe(response.headers['x-ratelimit-remaining'])
    }
  })

  it("shows another instance's requests counted after its own, on a clock that stands still", async () => {
    // Both statements count at the same instant of the database's clock: only the order they were
    // answered in tells which is newer.
    const { instances, close } = await twoInstances(Date.parse('2027-01-01T15:00:05Z'))
    const [here, there] = instances as [FastifyInstance, FastifyInstance]
    try {
      const { key } = await issueApiKey(database.db, { plan: 'free' })
      const request = { method: 'GET' as const, url: '/v1/pets', headers: bearer(key) }
      expect(statuses(await fire(here, 1, request, 1))).toEqual({ 200: 1 })
      expect(statuses(await fire(there, 62, request, 1))).toEqual({ 200: 59, 429: 3 })
      const answer = await statusOn(here, key)
      expect(used(answer)).toEqual([60, 60])
      expect(answer.headers['x-ratelimit-remaining']).toBe('0')
    } finally {
      await close()
    }
  })

  it('shows a ban its own instance set at once', async () => {
    const { key } = await issueApiKey(database.db, { plan: 'free' })
    const request = { method: 'GET' as const, url: '/v1/pets', headers: bearer(key) }
    expect(statuses(await fire(app, 60, request, 1))).toEqual({ 200: 60 })
    expect((await status(key)).json().bannedUntil).toBeNull()
    expect((await fire(app, 4, request, 1)).at(-1)!.json().code).toBe('key_banned')
    const banned = await status(key)
    expect(banned.json().bannedUntil).toBe(new Date(NOON + 600_000).toISOString())
    expect(banned.headers['x-ratelimit-reset']).toBe(String((NOON + 600_000) / 1000))
  })

  it("shows another instance's requests within a second, and within 3 s to a key that asks ten times a second", async () => {
    const { clock, instances, close } = await twoInstances(Date.parse('2027-01-01T14:00:05Z'))
    const [here, there] = instances as [FastifyInstance, FastifyInstance]
    try {
      const { key } = await issueApiKey(database.db, { plan: 'free' })
      const request = { method: 'GET' as const, url: '/v1/pets', headers: bearer(key) }
      expect(used(await statusOn(here, key))).toEqual([0, 0])
      expect(statuses(await fire(there, 3, request, 1))).toEqual({ 200: 3 })
      await clock.advance(1_000)
      expect(used(await statusOn(here, key))).toEqual([3, 3])

      // Ten calls a second for 20 s spend the key's reads here; the other instance's requests still show.
      for (let i = 0; i < 200; i++) {
        await statusOn(here, key)
        await clock.advance(100)
      }
      expect(statuses(await fire(there, 2, request, 1))).toEqual({ 200: 2 })
      const sentAt = clock()
      while (used(await statusOn(here, key))[0] !== 5) {
        expect(clock() - sentAt, 'the requests made there still unseen here').toBeLessThanOrEqual(3_000)
        await clock.advance(100)
      }
    } finally {
      await close()
    }
  })
})

describe("GET /v1/rate_limit across a window's end", () => {
  it('never shows a window that has ended, however often the key asks', async () => {
    const { clock, instances, close } = await twoInstances(Date.parse('2027-01-01T16:00:05Z'))
    const [here, there] = instances as [FastifyInstance, FastifyInstance]
    try {
      const { key } = await issueApiKey(database.db, { plan: 'free' })
      const request = { method: 'GET' as const, url: '/v1/pets', headers: bearer(key) }
      expect(statuses(await fire(there, 3, request, 1))).toEqual({ 200: 3 })
      // Ten calls a second spend the key's reads here, then go on past the minute's end.
      const nextMinute = Date.parse('2027-01-01T16:01:00Z')
      const seen = []
      while (clock() < nextMinute + 5_000) {
        const answer = await statusOn(here, key)
        const minute = answer.json().windows[0]
        seen.push({ at: clock(), used: minute.used, reset: minute.reset, header: answer.headers['x-ratelimit-reset'] })
        await clock.advance(100)
      }
      const after = seen.filter(({ at }) => at >= nextMinute)
      expect(after.length).toBeGreaterThan(40)
      expect(after.filter(({ at, reset }) => reset * 1000 <= at)).toEqual([])
      expect(after.filter(({ at, header }) => Number(header) * 1000 <= at)).toEqual([])
      expect(new Set(after.map(({ used, reset }) => `${used} ${reset}`))).toEqual(
        new Set([`0 ${Date.parse('2027-01-01T16:02:00Z') / 1000}`])
      )
    } finally {
      await close()
    }
  })
})

describe('housekeeping', () => {
  it('deletes usage past USAGE_RETENTION_DAYS, today included, and keeps the rest', async () => {
    const retaining = await createTestApp(database, { clock, env: { USAGE_RETENTION_DAYS: '3' } })
    try {
      const { id } = await issueApiKey(database.db, { plan: 'free' })
      for (const hour of ['2026-12-29T00', '2026-12-29T23', '2026-12-30T00', '2026-12-31T12', '2027-01-01T00']) {
        await sql`INSERT INTO api_key_usage (api_key_id, hour, admitted, refused) VALUES (${id}, ${`${hour}:00Z`}, 1, 0)`.execute(
          database.db
        )
      }
      expect((await retaining.housekeeping.run()).usageHours).toBe(2)
      const { rows } = await sql<{ hour: string }>`
        SELECT to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24') AS hour FROM api_key_usage WHERE api_key_id = ${id}
        ORDER BY hour`.execute(database.db)
      expect(rows.map((row) => row.hour)).toEqual(['2026-12-30T00', '2026-12-31T12', '2027-01-01T00'])
    } finally {
      await retaining.close()
    }
  })
})
