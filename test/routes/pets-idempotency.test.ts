import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import type pg from 'pg'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { IDEMPOTENCY_KEY_TTL_MS } from '../../src/plugins/app/idempotency.js'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { createTestApp, manualClock, withKey } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { rawRequest } from '../helpers/traffic.js'

const START = new Date('2027-03-01T10:00:00Z').getTime()
// The advisory lock a held create waits on, and the connection name that makes a create wait on it.
const HOLD_LOCK = 14
const HELD = 'held'

let database: TestDatabase
let app: FastifyInstance
let other: FastifyInstance
/** An instance whose creates wait on HOLD_LOCK after inserting their key (a first request in flight); it waits 200 ms for duplicates. */
let held: FastifyInstance
/** An instance that waits 200 ms for a request with the same key in flight. */
let impatient: FastifyInstance
let key: string
let secondKey: string
const clock = manualClock(START)

beforeAll(async () => {
  database = await createTestDatabase()
  await sql`
    CREATE FUNCTION hold_pet_creation() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF current_setting('application_name') = ${sql.lit(HELD)} THEN PERFORM pg_advisory_xact_lock_shared(${sql.lit(HOLD_LOCK)}); END IF;
      RETURN NEW;
    END $$`.execute(database.db)
  await sql`CREATE TRIGGER hold_pet_creation BEFORE INSERT ON pets FOR EACH ROW EXECUTE FUNCTION hold_pet_creation()`.execute(
    database.db
  )
  const heldUrl = new URL(database.url)
  heldUrl.searchParams.set('application_name', HELD)
  const env = { IDEMPOTENCY_WAIT_MS: '5000' }
  // Instances, each with a pool of its own, on one database.
  ;[app, other, held, impatient] = await Promise.all([
    createTestApp(database, { clock, env }),
    createTestApp(database, { clock, env }),
    createTestApp({ ...database, url: heldUrl.toString() }, { clock, env: { IDEMPOTENCY_WAIT_MS: '200' } }),
    createTestApp(database, { clock, env: { IDEMPOTENCY_WAIT_MS: '200' } })
  ])
  const limits = { perMinute: 1_000_000, perDay: 100_000_000 }
  const first = await issueApiKey(database.db, { plan: 'enterprise', limits })
  key = first.key
  secondKey = (await issueApiKey(database.db, { plan: 'enterprise', limits })).key
})
afterAll(async () => {
  await Promise.all([app.close(), other.close(), held.close(), impatient.close()])
  await database.drop()
})
beforeEach(async () => {
  await sql`TRUNCATE pets, idempotency_keys RESTART IDENTITY`.execute(database.db)
  await clock.set(START)
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

function expectError(
  response: { statusCode: number; headers: Record<string, unknown>; json(): any },
  status: number,
  code: string
) {
  expect(response.statusCode).toBe(status)
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
  expect(response.json()).toEqual({ code, message: expect.any(String), status })
}

/**
 * A create over a real connection, with each of `idempotencyKeys` as a header line of its own: Node's
 * server, not inject, decides what two headers of one name become.
 */
async function createOverSocket(idempotencyKeys: string[]) {
  if (!app.server.listening) await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  const payload = json(body)
  const head = [
    'POST /v1/pets HTTP/1.1',
    `Host: 127.0.0.1:${port}`,
    `Authorization: Bearer ${key}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(payload)}`,
    ...idempotencyKeys,
    'Connection: close'
  ].join('\r\n')
  return rawRequest(port, `${head}\r\n\r\n`, payload)
}

/** Makes creates on the `held` instance wait, after inserting their key, until release(). */
async function holdCreation() {
  const client: pg.PoolClient = await database.pool.connect()
  await client.query('SELECT pg_advisory_lock($1)', [HOLD_LOCK])
  return {
    async release() {
      await client.query('SELECT pg_advisory_unlock($1)', [HOLD_LOCK])
      client.release()
    }
  }
}

/**
 * Waits until `count` requests wait on a lock: held creates on HOLD_LOCK, others on the key or the
 * pets' id lock of one in flight. All are advisory locks; held creates are the `held` instance's.
 */
async function waiting(on: 'hold' | 'key', count = 1) {
  for (let i = 0; i < 1000; i++) {
    const { rows } = await sql<{ n: string }>`
      SELECT count(*) AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'
        AND (application_name = ${HELD}) = ${on === 'hold'}`.execute(database.db)
    if (Number(rows[0]!.n) >= count) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`no request waited on the ${on}`)
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

  it('creates exactly one pet from many concurrent duplicates on two instances, and replays it to the others', async () => {
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) => create({ idempotencyKey: 'burst', on: i % 2 ? other : app }))
    )
    // The duplicates wait for the one that creates, then replay it: none is refused.
    expect(responses.map((response) => response.statusCode)).toEqual(Array(40).fill(201))
    expect(responses.filter((response) => response.headers['idempotent-replayed'] === undefined)).toHaveLength(1)
    for (const response of responses) expect(response.body).toBe(responses[0]!.body)
    const pets = await petsInDatabase()
    expect(pets).toHaveLength(1)
    // A create that lost the race had drawn an id before rolling back: the one pet's id need not be 1.
    expect(await keysInDatabase()).toEqual([{ key: 'burst', pet_id: pets[0]!.id }])
    expect(String(responses[0]!.json().id)).toBe(String(pets[0]!.id))
  })

  it('makes a duplicate wait while the first request is in flight, then replays it; another body then gets 422', async () => {
    const hold = await holdCreation()
    let first: Promise<Awaited<ReturnType<typeof create>>>
    let duplicate: Promise<Awaited<ReturnType<typeof create>>>
    let otherBody: Promise<Awaited<ReturnType<typeof create>>>
    try {
      first = create({ idempotencyKey: 'slow', on: held })
      await waiting('hold')
      duplicate = create({ idempotencyKey: 'slow', on: other })
      otherBody = create({ idempotencyKey: 'slow', payload: json({ ...body, name: 'Other' }) })
      await waiting('key', 2)
      // Neither the key nor the pet is visible while the first is in flight.
      expect(await keysInDatabase()).toEqual([])
      expect(await petsInDatabase()).toEqual([])
    } finally {
      await hold.release()
    }
    const done = await first!
    expect(done.statusCode).toBe(201)
    expect(done.headers['idempotent-replayed']).toBeUndefined()
    const replay = await duplicate!
    expect(replay.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.body).toBe(done.body)
    expectError(await otherBody!, 422, 'idempotency_key_reused')
    expect(await petsInDatabase()).toHaveLength(1)
    expect(await keysInDatabase()).toEqual([{ key: 'slow', pet_id: 1n }])
  })

  it('answers 409 idempotency_key_in_use with Retry-After when the first is still in flight after IDEMPOTENCY_WAIT_MS', async () => {
    const hold = await holdCreation()
    let first: Promise<Awaited<ReturnType<typeof create>>>
    try {
      first = create({ idempotencyKey: 'stuck', on: held })
      await waiting('hold')
      const started = performance.now()
      const duplicate = await create({ idempotencyKey: 'stuck', on: impatient })
      expect(performance.now() - started).toBeGreaterThanOrEqual(200)
      expectError(duplicate, 409, 'idempotency_key_in_use')
      expect(duplicate.headers['retry-after']).toBe('1')
      expect(await petsInDatabase()).toEqual([])
    } finally {
      await hold.release()
    }
    // The bound is only for waiting on the key: the first, held longer than its own 200 ms, still creates the pet.
    const done = await first!
    expect(done.statusCode).toBe(201)
    const replay = await create({ idempotencyKey: 'stuck', on: impatient })
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.body).toBe(done.body)
    expect(await petsInDatabase()).toHaveLength(1)
  })

  it("waits for another key's create in flight past IDEMPOTENCY_WAIT_MS, and draws the id after it", async () => {
    const hold = await holdCreation()
    let first: Promise<Awaited<ReturnType<typeof create>>>
    let second: Promise<Awaited<ReturnType<typeof create>>>
    try {
      first = create({ idempotencyKey: 'ahead', on: held })
      await waiting('hold')
      second = create({ idempotencyKey: 'behind', on: impatient })
      // It waits for the pets' id lock the first holds, past its 200 ms for a key.
      await waiting('key')
      await new Promise((resolve) => setTimeout(resolve, 300))
    } finally {
      await hold.release()
    }
    const [ahead, behind] = [await first!, await second!]
    expect([ahead.statusCode, behind.statusCode]).toEqual([201, 201])
    expect(BigInt(behind.json().id)).toBeGreaterThan(BigInt(ahead.json().id))
  })

  it('lets a waiting duplicate create the pet when the first is rolled back (its connection ended)', async () => {
    const hold = await holdCreation()
    let first: Promise<Awaited<ReturnType<typeof create>>>
    let duplicate: Promise<Awaited<ReturnType<typeof create>>>
    try {
      first = create({ idempotencyKey: 'orphan', on: held })
      await waiting('hold')
      duplicate = create({ idempotencyKey: 'orphan', on: other })
      await waiting('key')
      await sql`
        SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = ${HELD} AND wait_event = 'advisory'`.execute(
        database.db
      )
      expectError(await first!, 503, 'service_unavailable')
    } finally {
      await hold.release()
    }
    const created = await duplicate!
    expect(created.statusCode).toBe(201)
    expect(created.headers['idempotent-replayed']).toBeUndefined()
    const pets = await petsInDatabase()
    expect(pets).toHaveLength(1)
    expect(await keysInDatabase()).toEqual([{ key: 'orphan', pet_id: pets[0]!.id }])
    expect((await create({ idempotencyKey: 'orphan' })).body).toBe(created.body)
  })

  it('stores nothing when creating fails, so the retry after the fix creates the pet', async () => {
    const broken = await createTestDatabase()
    const brokenApp = await createTestApp(broken, { clock })
    try {
      const { key: brokenKey } = await issueApiKey(broken.db, {
        plan: 'enterprise',
        limits: { perMinute: 1000, perDay: 1000 }
      })
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
  ])(
    'refuses an Idempotency-Key that is %s with 400 invalid_request, storing nothing',
    async (_label, idempotencyKey) => {
      const response = await create({ idempotencyKey })
      expectError(response, 400, 'invalid_request')
      expect(response.json().message).toContain('idempotency-key')
      expect(await petsInDatabase()).toEqual([])
      expect(await keysInDatabase()).toEqual([])
    }
  )

  it.each([
    ['two values', ['Idempotency-Key: a', 'Idempotency-Key: b']],
    ['one value twice, in two spellings', ['Idempotency-Key: a', 'idempotency-key: a']]
  ])(
    'refuses an Idempotency-Key sent twice (%s) with 400 invalid_request naming the header, storing nothing',
    async (_label, lines) => {
      const response = await createOverSocket(lines)
      expectError(response, 400, 'invalid_request')
      expect(response.json().message).toBe('Idempotency-Key must be sent once; this request sent it 2 times')
      // The error code travels in a header only on GET /v1/authorize, for the proxy in front.
      expect(response.headers['x-error-code']).toBeUndefined()
      expect(await petsInDatabase()).toEqual([])
      expect(await keysInDatabase()).toEqual([])
    }
  )

  it('takes a key with a comma in one header over a real connection as that one key', async () => {
    const response = await createOverSocket(['Idempotency-Key: a, b'])
    expect(response.statusCode).toBe(201)
    expect(await keysInDatabase()).toEqual([{ key: 'a, b', pet_id: 1n }])
  })

  it('accepts a key of 255 characters, of any printable characters', async () => {
    for (const idempotencyKey of ['k'.repeat(255), 'a b;c,"d"=é', '1']) {
      expect((await create({ idempotencyKey })).statusCode).toBe(201)
    }
    expect(await keysInDatabase()).toHaveLength(3)
  })

  it('stores nothing for a request that fails validation, so the key stays free for a good body', async () => {
    for (const payload of [
      '{"name":"","categoryId":1}',
      '{"name":"Rex"}',
      '{"name":"Rex","categoryId":1,"id":5}',
      '{"name":'
    ]) {
      expect((await create({ idempotencyKey: 'fix-and-retry', payload })).statusCode).toBe(400)
    }
    expect(await keysInDatabase()).toEqual([])
    const good = await create({ idempotencyKey: 'fix-and-retry' })
    expect(good.statusCode).toBe(201)
    expect(good.headers['idempotent-replayed']).toBeUndefined()
  })

  it('keeps a key for 24 hours: replayed until then, a fresh request after', async () => {
    const first = await create({ idempotencyKey: 'daily' })
    await clock.advance(IDEMPOTENCY_KEY_TTL_MS - 1)
    expect((await create({ idempotencyKey: 'daily' })).headers['idempotent-replayed']).toBe('true')
    await clock.advance(1)
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
    await clock.advance(60_000)
    await create({ idempotencyKey: 'newer', payload: json({ ...body, name: 'B' }) })
    await clock.set(START + IDEMPOTENCY_KEY_TTL_MS)
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
      await sql`UPDATE idempotency_keys SET expires_at = ${new Date(START - 1)} WHERE key = 'swept'`.execute(
        database.db
      )
      for (let i = 0; i < 100 && (await keysInDatabase()).length > 1; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect((await keysInDatabase()).map((row) => row.key)).toEqual(['kept'])
    } finally {
      await sweeping.close()
    }
  })
})
