import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import type pg from 'pg'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { IDEMPOTENCY_KEY_TTL_MS } from '../../src/plugins/app/idempotency.js'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { createTestApp, manualClock, withKey } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

const START = new Date('2027-03-01T10:00:00Z').getTime()
const CLAIM_MS = 5_000

let database: TestDatabase
let app: FastifyInstance
let other: FastifyInstance
let key: string
let keyId: bigint
let secondKey: string
const clock = manualClock(START)

beforeAll(async () => {
  database = await createTestDatabase()
  const env = { IDEMPOTENCY_CLAIM_MS: String(CLAIM_MS) }
  // Two instances, each with a pool of its own, on one database.
  ;[app, other] = await Promise.all([createTestApp(database, { clock, env }), createTestApp(database, { clock, env })])
  const limits = { perMinute: 1_000_000, perDay: 100_000_000 }
  const first = await issueApiKey(database.db, { plan: 'enterprise', limits })
  key = first.key
  keyId = first.id
  secondKey = (await issueApiKey(database.db, { plan: 'enterprise', limits })).key
})
afterAll(async () => {
  await Promise.all([app.close(), other.close()])
  await database.drop()
})
beforeEach(async () => {
  await sql`TRUNCATE pets, idempotency_keys RESTART IDENTITY`.execute(database.db)
  clock.set(START)
})

const body = { name: 'Rex', categoryId: '9223372036854775807', status: 'available' }
const json = (value: Record<string, string>) =>
  `{"name":${JSON.stringify(value.name)},"categoryId":${value.categoryId}${value.status ? `,"status":"${value.status}"` : ''}}`

function create(options: { idempotencyKey?: string; payload?: string; apiKey?: string; on?: FastifyInstance } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey
  return withKey(options.on ?? app, options.apiKey ?? key).inject({
    method: 'POST',
    url: '/v1/pets',
    headers,
    payload: options.payload ?? json(body)
  })
}

async function petsInDatabase() {
  const { rows } = await sql<{ id: bigint; name: string }>`SELECT id, name FROM pets ORDER BY id`.execute(database.db)
  return rows
}

async function keysInDatabase() {
  const { rows } = await sql<{ key: string; pet_id: bigint | null }>`
    SELECT key, pet_id FROM idempotency_keys ORDER BY key`.execute(database.db)
  return rows
}

function expectError(response: { statusCode: number; headers: Record<string, unknown>; json(): any }, status: number, code: string) {
  expect(response.statusCode).toBe(status)
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
  expect(response.json()).toEqual({ code, message: expect.any(String), status })
}

/** Holds a SHARE lock on pets: reads go on, but creating a pet waits until release(). */
async function blockPetCreation() {
  const client: pg.PoolClient = await database.pool.connect()
  await client.query('BEGIN')
  await client.query('LOCK TABLE pets IN SHARE MODE')
  return {
    async release() {
      await client.query('COMMIT')
      client.release()
    }
  }
}

/** Waits until some request has claimed the key (the claim commits before the pet is created). */
async function claimed(idempotencyKey: string, count = 1) {
  for (let i = 0; i < 500; i++) {
    const { rows } = await sql<{ n: string }>`
      SELECT count(*) AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO pets%'`.execute(database.db)
    const stored = (await keysInDatabase()).filter((row) => row.key === idempotencyKey)
    if (stored.length === 1 && Number(rows[0]!.n) >= count) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`no request claimed ${idempotencyKey}`)
}

describe('POST /v1/pets with Idempotency-Key', () => {
  it('creates the pet once, and a repeat with the same body replays the 201 byte for byte without creating anything', async () => {
    const first = await create({ idempotencyKey: 'order-1' })
    expect(first.statusCode).toBe(201)
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    expect(first.body).toBe('{"id":1,"name":"Rex","categoryId":9223372036854775807,"status":"available"}')

    // Same body with another key order and spacing, on another instance.
    const reordered = '{ "status": "available", "categoryId": 9223372036854775807, "name": "Rex" }'
    const again = await create({ idempotencyKey: 'order-1', payload: reordered, on: other })
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(again.body).toBe(first.body)

    expect(await petsInDatabase()).toEqual([{ id: 1n, name: 'Rex' }])
    expect(await keysInDatabase()).toEqual([{ key: 'order-1', pet_id: 1n }])
  })

  it('replays a pet created without a status without the status field', async () => {
    const payload = '{"name":"Tom","categoryId":1}'
    const first = await create({ idempotencyKey: 'no-status', payload })
    const again = await create({ idempotencyKey: 'no-status', payload })
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.body).toBe('{"id":1,"name":"Tom","categoryId":1}')
    expect(again.body).toBe(first.body)
  })

  it('answers 422 idempotency_key_reused for the same key with a different body, and creates nothing', async () => {
    expect((await create({ idempotencyKey: 'order-2' })).statusCode).toBe(201)
    for (const changed of [
      { ...body, name: 'Max' },
      { ...body, categoryId: '9223372036854775806' },
      { ...body, status: 'sold' },
      { name: 'Rex', categoryId: body.categoryId }
    ]) {
      expectError(await create({ idempotencyKey: 'order-2', payload: json(changed) }), 422, 'idempotency_key_reused')
    }
    expect(await petsInDatabase()).toHaveLength(1)
  })

  it('scopes keys to the API key: another API key with the same Idempotency-Key creates its own pet', async () => {
    const mine = await create({ idempotencyKey: 'shared-name' })
    const theirs = await create({ idempotencyKey: 'shared-name', apiKey: secondKey })
    expect(mine.json().id).toBe(1)
    expect(theirs.statusCode).toBe(201)
    expect(theirs.json().id).toBe(2)
    expect(theirs.headers['idempotent-replayed']).toBeUndefined()
    expect(await petsInDatabase()).toHaveLength(2)
  })

  it('creates exactly one pet from many concurrent duplicates on two instances', async () => {
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) => create({ idempotencyKey: 'burst', on: i % 2 ? other : app }))
    )
    const statuses = new Set(responses.map((response) => response.statusCode))
    expect([...statuses].every((status) => status === 201 || status === 409)).toBe(true)
    const created = responses.filter((response) => response.statusCode === 201)
    expect(created.filter((response) => response.headers['idempotent-replayed'] === undefined)).toHaveLength(1)
    for (const response of created) expect(response.body).toBe(created[0]!.body)
    for (const response of responses.filter((response) => response.statusCode === 409)) {
      expectError(response, 409, 'idempotency_key_in_use')
    }
    expect(await petsInDatabase()).toHaveLength(1)
    // Once the first has finished, every repeat is a replay.
    const after = await create({ idempotencyKey: 'burst', on: other })
    expect(after.headers['idempotent-replayed']).toBe('true')
    expect(after.body).toBe(created[0]!.body)
  })

  it('answers 409 idempotency_key_in_use with Retry-After while the first request is still running, and 422 for another body', async () => {
    const lock = await blockPetCreation()
    let first: Promise<Awaited<ReturnType<typeof create>>>
    try {
      first = create({ idempotencyKey: 'slow' })
      await claimed('slow')
      const duplicate = await create({ idempotencyKey: 'slow', on: other })
      expectError(duplicate, 409, 'idempotency_key_in_use')
      expect(duplicate.headers['retry-after']).toBe('1')
      expectError(await create({ idempotencyKey: 'slow', payload: json({ ...body, name: 'Other' }) }), 422, 'idempotency_key_reused')
      expect(await petsInDatabase()).toEqual([])
    } finally {
      await lock.release()
    }
    const done = await first!
    expect(done.statusCode).toBe(201)
    const replay = await create({ idempotencyKey: 'slow', on: other })
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.body).toBe(done.body)
    expect(await petsInDatabase()).toHaveLength(1)
  })

  it('lets a retry take over a claim left behind by a crashed instance once IDEMPOTENCY_CLAIM_MS has passed', async () => {
    // What an instance that died between its claim and the pet leaves behind.
    const hash = (await import('../../src/plugins/app/idempotency.js')).hashNewPet({
      name: body.name,
      categoryId: BigInt(body.categoryId),
      status: 'available'
    })
    await sql`
      INSERT INTO idempotency_keys (api_key_id, key, request_hash, claim_token, claimed_until, created_at, expires_at)
      VALUES (${keyId}, 'orphan', ${hash}, gen_random_uuid(), ${new Date(START + CLAIM_MS)}, ${new Date(START)},
        ${new Date(START + IDEMPOTENCY_KEY_TTL_MS)})`.execute(database.db)

    expectError(await create({ idempotencyKey: 'orphan' }), 409, 'idempotency_key_in_use')
    clock.advance(CLAIM_MS)
    expectError(await create({ idempotencyKey: 'orphan', payload: json({ ...body, name: 'Other' }) }), 422, 'idempotency_key_reused')
    const retried = await create({ idempotencyKey: 'orphan', on: other })
    expect(retried.statusCode).toBe(201)
    expect(retried.headers['idempotent-replayed']).toBeUndefined()
    expect((await create({ idempotencyKey: 'orphan' })).headers['idempotent-replayed']).toBe('true')
    expect(await petsInDatabase()).toHaveLength(1)
  })

  it('creates one pet when a slow first request loses its lapsed claim to a retry', async () => {
    const lock = await blockPetCreation()
    let slow: Promise<Awaited<ReturnType<typeof create>>>
    let retry: Promise<Awaited<ReturnType<typeof create>>>
    try {
      slow = create({ idempotencyKey: 'lapsed' })
      await claimed('lapsed')
      clock.advance(CLAIM_MS)
      retry = create({ idempotencyKey: 'lapsed', on: other })
      await claimed('lapsed', 2)
    } finally {
      await lock.release()
    }
    const [first, second] = await Promise.all([slow!, retry!])
    // The slow request's claim was taken over, so it creates nothing; the retry creates the pet.
    expectError(first, 409, 'idempotency_key_in_use')
    expect(second.statusCode).toBe(201)
    expect(await petsInDatabase()).toHaveLength(1)
    expect((await create({ idempotencyKey: 'lapsed' })).body).toBe(second.body)
  })

  it('gives up the claim when creating fails, so the retry after the fix does not wait for it to lapse', async () => {
    const broken = await createTestDatabase()
    const brokenApp = await createTestApp(broken, { clock })
    try {
      const { key: brokenKey } = await issueApiKey(broken.db, { plan: 'enterprise', limits: { perMinute: 1000, perDay: 1000 } })
      await sql`ALTER TABLE pets RENAME COLUMN category_id TO category`.execute(broken.db)
      const failed = await create({ idempotencyKey: 'after-fix', apiKey: brokenKey, on: brokenApp })
      expectError(failed, 500, 'internal_error')
      expect((await sql`SELECT key FROM idempotency_keys`.execute(broken.db)).rows).toEqual([])

      await sql`ALTER TABLE pets RENAME COLUMN category TO category_id`.execute(broken.db)
      const retried = await create({ idempotencyKey: 'after-fix', apiKey: brokenKey, on: brokenApp })
      expect(retried.statusCode).toBe(201)
      expect(retried.headers['idempotent-replayed']).toBeUndefined()
    } finally {
      await brokenApp.close()
      await broken.drop()
    }
  })

  it.each([
    ['empty', ''],
    ['256 characters long', 'k'.repeat(256)]
  ])('refuses an Idempotency-Key that is %s with 400 invalid_request, storing nothing', async (_label, idempotencyKey) => {
    const response = await create({ idempotencyKey })
    expectError(response, 400, 'invalid_request')
    expect(response.json().message).toContain('idempotency-key')
    expect(await petsInDatabase()).toEqual([])
    expect(await keysInDatabase()).toEqual([])
  })

  it('accepts a key of 255 characters, of any printable characters', async () => {
    for (const idempotencyKey of ['k'.repeat(255), 'a b;c,"d"=é', '1']) {
      expect((await create({ idempotencyKey })).statusCode).toBe(201)
    }
    expect(await keysInDatabase()).toHaveLength(3)
  })

  it('stores nothing for a request that fails validation, so the key stays free for a good body', async () => {
    for (const payload of ['{"name":"","categoryId":1}', '{"name":"Rex"}', '{"name":"Rex","categoryId":1,"id":5}', '{"name":']) {
      expect((await create({ idempotencyKey: 'fix-and-retry', payload })).statusCode).toBe(400)
    }
    expect(await keysInDatabase()).toEqual([])
    const good = await create({ idempotencyKey: 'fix-and-retry' })
    expect(good.statusCode).toBe(201)
    expect(good.headers['idempotent-replayed']).toBeUndefined()
  })

  it('keeps a key for 24 hours: replayed until then, a fresh request after', async () => {
    const first = await create({ idempotencyKey: 'daily' })
    clock.advance(IDEMPOTENCY_KEY_TTL_MS - 1)
    expect((await create({ idempotencyKey: 'daily' })).headers['idempotent-replayed']).toBe('true')
    clock.advance(1)
    const fresh = await create({ idempotencyKey: 'daily', payload: json({ ...body, name: 'Rex II' }) })
    expect(fresh.statusCode).toBe(201)
    expect(fresh.headers['idempotent-replayed']).toBeUndefined()
    expect(fresh.json().id).toBe(first.json().id + 1)
    expect(await keysInDatabase()).toEqual([{ key: 'daily', pet_id: 2n }])
  })
})

describe('clean-up of expired keys', () => {
  it('deletes keys past their 24 hours and keeps the others', async () => {
    await create({ idempotencyKey: 'old' })
    clock.advance(60_000)
    await create({ idempotencyKey: 'newer', payload: json({ ...body, name: 'B' }) })
    clock.set(START + IDEMPOTENCY_KEY_TTL_MS)
    expect(await app.idempotency.deleteExpired()).toBe(1)
    expect((await keysInDatabase()).map((row) => row.key)).toEqual(['newer'])
    // The pets stay: only the keys expire.
    expect(await petsInDatabase()).toHaveLength(2)
  })

  it('runs by itself every IDEMPOTENCY_CLEANUP_INTERVAL_MS', async () => {
    const sweeping = await createTestApp(database, { clock, env: { IDEMPOTENCY_CLEANUP_INTERVAL_MS: '100' } })
    try {
      await create({ idempotencyKey: 'swept' })
      await create({ idempotencyKey: 'kept', payload: json({ ...body, name: 'B' }) })
      await sql`UPDATE idempotency_keys SET expires_at = ${new Date(START - 1)} WHERE key = 'swept'`.execute(database.db)
      for (let i = 0; i < 100 && (await keysInDatabase()).length > 1; i++) await new Promise((resolve) => setTimeout(resolve, 50))
      expect((await keysInDatabase()).map((row) => row.key)).toEqual(['kept'])
    } finally {
      await sweeping.close()
    }
  })
})
