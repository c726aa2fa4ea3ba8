import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { issueApiKey, revokeApiKey, rotateApiKey } from '../../src/repositories/api-keys.js'
import { createTestApp, manualClock, onEveryInstance, setApiKeyPlan } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { startPgBouncer, type PgBouncer } from '../../harness/programs.js'
import { describeWith } from '../helpers/requirements.js'
import { bearer, fireUntilRefused, statuses } from '../helpers/traffic.js'

// Mid-minute, so that no burst below straddles two minutes.
const MID_MINUTE = Date.parse('2027-01-01T12:00:15Z')

/**
 * Three instances on one database, each with its own pool, as replicas run: limits stay exact, key
 * changes reach every instance through the change channel, and concurrent duplicates of a create
 * make one pet. `connection` gives the instances' database settings.
 */
function severalInstances(connection: () => { database: TestDatabase; env: Record<string, string> }) {
  const apps: FastifyInstance[] = []
  // The database's clock, which decides the windows, stands at MID_MINUTE too.
  const clock = manualClock(MID_MINUTE, () => connection().database)
  const instances = async (count = 3) => {
    const { database, env } = connection()
    const started = await Promise.all(Array.from({ length: count }, () => createTestApp(database, { clock, env })))
    apps.push(...started)
    return started
  }
  beforeEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()))
    await sql`TRUNCATE account_counters`.execute(connection().database.db)
    await clock.set(MID_MINUTE)
  })
  afterAll(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()))
  })

  it('admit exactly 60 of 150 concurrent requests on one free key', async () => {
    const { database } = connection()
    const bases = await Promise.all((await instances()).map((app) => app.listen({ port: 0, host: '127.0.0.1' })))
    const { key } = await issueApiKey(database.db, { plan: 'free' })
    const responses = await Promise.all(
      Array.from({ length: 150 }, (_, i) => fetch(`${bases[i % 3]}/v1/pets?limit=1`, { headers: bearer(key) }))
    )
    expect(statuses(responses.map((response) => ({ statusCode: response.status })))).toEqual({ 200: 60, 429: 90 })
    const { rows } = await sql<{ used: string }>`
      SELECT used FROM limit_counters WHERE "window" = 'minute'`.execute(database.db)
    expect(rows.map((row) => Number(row.used))).toEqual([60])
  })

  it('never over-admit a key with leases in play, and admit the whole limit once every instance is refused', async () => {
    const { database } = connection()
    const started = await instances()
    const { key } = await issueApiKey(database.db, { plan: 'enterprise', limits: { perMinute: 500, perDay: 100_000 } })
    const request = { method: 'GET' as const, url: '/v1/owners', headers: bearer(key) }
    const responses = await Promise.all(started.map((app) => fireUntilRefused(app, request, 40)))
    // Each instance stopped only after a refusal, which it sends with nothing leased and nothing left
    // in the database: every unit counted was admitted, and no more.
    expect(statuses(responses.flat())[404]).toBe(500)
    expect(responses.every((sent) => sent.some((response) => response.statusCode === 429))).toBe(true)
    const { rows } = await sql<{ used: string }>`
      SELECT used FROM limit_counters WHERE "window" = 'minute'`.execute(database.db)
    expect(rows.map((row) => Number(row.used))).toEqual([500])
  })

  const get = (app: FastifyInstance, key: string) =>
    app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key) })

  it('stop accepting a revoked key through the change channel', async () => {
    const { database } = connection()
    const started = await instances()
    const { id, key } = await issueApiKey(database.db, { plan: 'pro' })
    // Every instance authenticates the key, so every instance holds it in memory.
    for (const app of started) expect((await get(app, key)).statusCode).toBe(200)
    await revokeApiKey(database.db, id)
    await onEveryInstance(started, async (app) => (await get(app, key)).statusCode === 401)
  })

  it('take a rotated secret, and refuse the old one, through the change channel', async () => {
    const { database } = connection()
    const started = await instances()
    const { id, key } = await issueApiKey(database.db, { plan: 'pro' })
    for (const app of started) expect((await get(app, key)).statusCode).toBe(200)
    const rotated = (await rotateApiKey(database.db, id, null))!
    await onEveryInstance(started, async (app) => (await get(app, key)).statusCode === 401)
    for (const app of started) expect((await get(app, rotated.key)).statusCode).toBe(200)
  })

  it('apply a plan change through the change channel', async () => {
    const { database } = connection()
    const started = await instances()
    const { id, key } = await issueApiKey(database.db, { plan: 'pro' })
    for (const app of started) expect((await get(app, key)).headers['x-ratelimit-limit']).toBe('300')
    await setApiKeyPlan(database, id, 'enterprise', { perMinute: 5000, perDay: 9000 })
    await onEveryInstance(started, async (app) => (await get(app, key)).headers['x-ratelimit-limit'] === '5000')
  })

  it('create one pet for 30 concurrent duplicates of a create', async () => {
    const { database } = connection()
    const started = await instances()
    const { key } = await issueApiKey(database.db, { plan: 'pro' })
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        started[i % 3]!.inject({
          method: 'POST',
          url: '/v1/pets',
          headers: { ...bearer(key), 'idempotency-key': 'one-pet' },
          payload: { name: 'Once', categoryId: 7 }
        })
      )
    )
    const created = responses.filter((response) => response.statusCode === 201)
    expect(created.length + responses.filter((response) => response.statusCode === 409).length).toBe(30)
    expect(new Set(created.map((response) => response.json().id))).toHaveLength(1)
    const { rows } = await sql<{ count: bigint }>`SELECT count(*) FROM pets WHERE name = 'Once'`.execute(database.db)
    expect(rows).toEqual([{ count: 1n }])
  })
}

describe('several instances connected directly', () => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterAll(async () => {
    await database?.drop()
  })
  severalInstances(() => ({ database, env: {} }))
})

describeWith('pgbouncer')('several instances through PgBouncer in transaction mode (deploy/pgbouncer.ini)', () => {
  let database: TestDatabase
  let bouncer: PgBouncer
  beforeAll(async () => {
    database = await createTestDatabase()
    bouncer = await startPgBouncer(database.url)
  })
  afterAll(async () => {
    await bouncer?.stop()
    await database?.drop()
  })
  // Requests through the pooler; migrations and change notifications direct, as deployed.
  severalInstances(() => ({ database, env: { DATABASE_URL: bouncer.url, DATABASE_DIRECT_URL: database.url } }))
})
