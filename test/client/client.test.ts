import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  AnimalStoreError,
  createAnimalStoreClient,
  type AnimalStoreClientOptions,
  type ApiKey,
  type Pet
} from '../../client/src/index.js'
import { freePort } from '../../src/db/embedded.js'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { ADMIN_TOKEN, createTestAdminApp, createTestApp, issueTestKey, manualClock } from '../helpers/app.js'
import { startStoppableCluster } from '../helpers/cluster.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

const NOON = Date.parse('2027-01-01T12:00:00Z')

let database: TestDatabase
let app: FastifyInstance
let baseUrl: string
let key: string
const clock = manualClock(NOON, () => database)

async function listen(server: FastifyInstance): Promise<string> {
  await server.listen({ host: '127.0.0.1', port: 0 })
  const address = server.server.address()
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1`
}

beforeAll(async () => {
  database = await createTestDatabase()
  await clock.set(NOON)
  // Links name the public URL; the client must still only talk to the baseUrl it was given.
  const env = { PUBLIC_BASE_URL: 'https://api.animal-store.test/v1', BAN_AFTER: '0', BAN_SECONDS: '30' }
  app = await createTestApp(database, { clock, env })
  baseUrl = await listen(app)
  key = await issueTestKey(database)
})
afterAll(async () => {
  await app.close()
  await database.drop()
})
beforeEach(async () => {
  await sql`TRUNCATE pets RESTART IDENTITY`.execute(database.db)
  await clock.set(NOON)
})

interface Exchange {
  method: string
  url: string
  headers: Headers
  status?: number
  retryAfter?: string | null
}

/** A client on the test server that records each attempt and, instead of sleeping, moves the clock. */
function testClient(apiKey: string, options: Partial<AnimalStoreClientOptions> = {}) {
  const sent: Exchange[] = []
  const sleeps: number[] = []
  const client = createAnimalStoreClient({
    baseUrl,
    apiKey,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms)
      await clock.advance(ms)
    },
    ...options,
    fetch: async (request) => {
      const exchange: Exchange = { method: request.method, url: request.url, headers: new Headers(request.headers) }
      sent.push(exchange)
      const response = await fetch(request)
      exchange.status = response.status
      exchange.retryAfter = response.headers.get('retry-after')
      return response
    }
  })
  return { client, sent, sleeps }
}

/** Spends `count` requests of a key's current minute. */
async function spend(apiKey: string, count: number) {
  for (let i = 0; i < count; i++) {
    const response = await app.inject({
      method: 'GET',
      url: '/v1/pets',
      headers: { authorization: `Bearer ${apiKey}` }
    })
    expect(response.statusCode).toBe(200)
  }
}

async function rejection(promise: Promise<unknown>): Promise<AnimalStoreError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason
  )
  expect(error).toBeInstanceOf(AnimalStoreError)
  return error as AnimalStoreError
}

describe('decide', () => {
  it("decides and charges a customer's request for a service holding a token of the role service", async () => {
    const admin = await createTestAdminApp(database)
    const made = await admin.inject({
      method: 'POST',
      url: '/admin/v1/operators',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { name: 'orders-service', role: 'service' }
    })
    await admin.close()
    const customer = await issueApiKey(database.db, { plan: 'free', metadata: { tier: 'gold' } })
    const { client, sent } = testClient(made.json<{ token: string }>().token)
    const decision = await client.decide({ key: customer.key, method: 'GET', path: '/v1/orders' })
    expect(decision).toEqual({
      admitted: true,
      code: null,
      accountId: customer.accountId,
      keyId: customer.id,
      scopes: ['pets:read', 'pets:write'],
      metadata: { tier: 'gold' },
      headers: {
        'ratelimit-policy': '"minute";q=60;w=60, "day";q=1000;w=86400',
        ratelimit: '"minute";r=59;t=60',
        'retry-after': null
      }
    })
    expect(sent.map((exchange) => `${exchange.method} ${new URL(exchange.url).pathname}`)).toEqual([
      'POST /v1/decisions'
    ])
    const refused = await rejection(
      testClient(customer.key).client.decide({ key: customer.key, method: 'GET', path: '/' })
    )
    expect(refused).toMatchObject({ status: 401, code: 'unauthorized' })
  })
})

describe('calls', () => {
  it('send the key and return typed pets, int64 values exact as BigInts', async () => {
    const { client, sent } = testClient(key)
    const created = await client.addPet({ name: 'Rex', categoryId: 9223372036854775807n, status: 'available' })
    expect(created).toEqual({ id: 1n, name: 'Rex', categoryId: 9223372036854775807n, status: 'available' })
    const untagged = await client.addPet({ name: 'Tom', categoryId: -9223372036854775808n })
    expect(untagged).toEqual({ id: 2n, name: 'Tom', categoryId: -9223372036854775808n })

    expect(await client.getPet(1n)).toEqual(created)
    expect(await client.listPets({ limit: 1 })).toEqual([created])
    expect(await client.listPets({ status: 'available' })).toEqual([created])
    expect(sent.map((exchange) => exchange.headers.get('authorization'))).toEqual(Array(5).fill(`Bearer ${key}`))
  })

  it("read the key's windows without spending a request", async () => {
    const { client } = testClient(key)
    const first = await client.rateLimit()
    const second = await client.rateLimit()
    expect(second).toEqual(first)
    expect(first.plan).toBe('enterprise')
    expect(first.windows.map((window) => window.name)).toEqual(['minute', 'day'])
    expect(first.bannedUntil).toBeNull()
  })

  it('turn Error bodies into AnimalStoreErrors, and do not retry them', async () => {
    const { client, sent, sleeps } = testClient(key)
    const missing = await rejection(client.getPet(12345n))
    expect(missing).toMatchObject({ status: 404, code: 'not_found', message: 'No pet with id 12345' })

    const invalid = await rejection(client.addPet({ name: '', categoryId: 1n }))
    expect(invalid).toMatchObject({ status: 400, code: 'invalid_request' })
    expect(invalid.message).toContain('name')

    const unauthorized = await rejection(testClient('not-a-key').client.listPets())
    expect(unauthorized).toMatchObject({ status: 401, code: 'unauthorized', retryAfterSeconds: undefined })

    expect(sent.map((exchange) => exchange.status)).toEqual([404, 400])
    expect(sleeps).toEqual([])
  })

  it('surface a write with a read-only key as 403 insufficient_scope, naming the scope it needs', async () => {
    const { key: reader } = await issueApiKey(database.db, { plan: 'free', scopes: ['pets:read'] })
    const { client, sleeps } = testClient(reader)
    expect(await client.listPets()).toEqual(expect.any(Array))
    const refused = await rejection(client.addPet({ name: 'Rex', categoryId: 1n }))
    expect(refused).toMatchObject({ status: 403, code: 'insufficient_scope', requiredScope: 'pets:write' })
    expect(sleeps).toEqual([])
  })
})

describe('allPets', () => {
  it('follows Link rel="next" through every page, asking only the configured baseUrl', async () => {
    const { client: writer } = testClient(key)
    for (let i = 1; i <= 25; i++) {
      await writer.addPet({
        name: `pet-${i}`,
        categoryId: BigInt(i),
        ...(i % 3 === 0 ? { status: 'sold' as const } : {})
      })
    }

    const { client, sent } = testClient(key)
    const all: Pet[] = []
    for await (const pet of client.allPets({ limit: 10 })) all.push(pet)
    expect(all.map((pet) => pet.id)).toEqual(Array.from({ length: 25 }, (_, i) => BigInt(i + 1)))
    expect(sent).toHaveLength(3)
    expect(sent.every((exchange) => exchange.url.startsWith(`${baseUrl}/pets?`))).toBe(true)
    expect(new URL(sent[1]!.url).searchParams.get('cursor')).toBeTruthy()

    const sold: Pet[] = []
    for await (const pet of client.allPets({ status: 'sold', limit: 3 })) sold.push(pet)
    expect(sold.map((pet) => pet.id)).toEqual([3n, 6n, 9n, 12n, 15n, 18n, 21n, 24n])
    expect(sold.every((pet) => pet.status === 'sold')).toBe(true)
  })
})

describe("the account's usage", () => {
  it('lists its rows page after page, ids and figures exact, for a key with usage:read', async () => {
    const reader = await issueApiKey(database.db, { plan: 'free', name: 'usage reader', scopes: ['usage:read'] })
    const sibling = await issueApiKey(database.db, { accountId: reader.accountId, name: 'sibling' })
    const hour = Date.UTC(2030, 0, 1, 10)
    await database.db
      .insertInto('api_key_usage')
      .values([
        { api_key_id: reader.id, hour: new Date(hour), admitted: 5, refused: 1, units: 6 },
        { api_key_id: sibling.id, hour: new Date(hour), admitted: 2, refused: 0, units: 2 },
        { api_key_id: reader.id, hour: new Date(hour + 3_600_000), admitted: 1, refused: 0, units: 1 }
      ])
      .execute()
    const { client } = testClient(reader.key)
    const range = { from: '2030-01-01T00:00:00Z', to: '2030-01-02T00:00:00Z' }
    const rows = []
    for await (const row of client.allUsage({ ...range, limit: 1 })) rows.push(row)
    const row = (keyId: bigint, at: number, admitted: number, refused: number, units: number) => ({
      start: new Date(at).toISOString(),
      accountId: reader.accountId,
      keyId,
      admitted,
      refused,
      units
    })
    expect(rows).toEqual([
      row(reader.id, hour, 5, 1, 6),
      row(sibling.id, hour, 2, 0, 2),
      row(reader.id, hour + 3_600_000, 1, 0, 1)
    ])
    expect(await client.listUsage({ ...range, granularity: 'day' })).toEqual([
      row(reader.id, Date.UTC(2030, 0, 1), 6, 1, 7),
      row(sibling.id, Date.UTC(2030, 0, 1), 2, 0, 2)
    ])
  })
})

describe('keys their holders manage', () => {
  it("list, issue, rotate and revoke the keys of the caller's account, ids exact as BigInts", async () => {
    const manager = await issueApiKey(database.db, {
      plan: 'free',
      name: 'manager',
      scopes: ['pets:read', 'pets:write', 'keys:manage']
    })
    const { client, sent } = testClient(manager.key)
    const issued = await client.createKey({ name: 'reader', scopes: ['pets:read'] })
    expect(issued).toMatchObject({ name: 'reader', scopes: ['pets:read'], expiresAt: null, revokedAt: null })
    expect(typeof issued.id).toBe('bigint')
    expect(issued.key).toMatch(/^ask_[0-9A-Za-z]{8}_[0-9A-Za-z]{32}_[0-9A-Za-z]{6}$/)
    expect(await testClient(issued.key).client.listPets()).toEqual([])

    const listed: ApiKey[] = []
    for await (const each of client.allKeys({ limit: 1 })) listed.push(each)
    expect(listed.map((each) => [each.id, each.name])).toEqual([
      [manager.id, 'manager'],
      [issued.id, 'reader']
    ])
    expect(await client.listKeys({ limit: 1 })).toEqual([listed[0]])

    const rotated = await client.rotateKey(issued.id)
    expect(rotated).toMatchObject({ id: issued.id, scopes: ['pets:read'] })
    expect(rotated.key).not.toBe(issued.key)
    const revoked = await client.revokeKey(issued.id)
    expect(revoked).toMatchObject({ id: issued.id, prefix: rotated.prefix, revokedAt: expect.any(String) })
    expect(revoked).not.toHaveProperty('key')
    expect(sent.map((exchange) => `${exchange.method} ${new URL(exchange.url).pathname} ${exchange.status}`)).toEqual([
      'POST /v1/keys 201',
      'GET /v1/keys 200',
      'GET /v1/keys 200',
      'GET /v1/keys 200',
      'POST /v1/keys/' + issued.id + '/rotate 200',
      'DELETE /v1/keys/' + issued.id + ' 200'
    ])
  })

  it("surface a scope beyond the caller's, and another account's key, as AnimalStoreErrors", async () => {
    const limited = await issueApiKey(database.db, { plan: 'free', scopes: ['pets:read', 'keys:manage'] })
    const stranger = await issueApiKey(database.db, { plan: 'free' })
    const { client, sleeps } = testClient(limited.key)
    const beyond = await rejection(client.createKey({ scopes: ['pets:write'] }))
    expect(beyond).toMatchObject({ status: 403, code: 'insufficient_scope', requiredScope: 'pets:write' })
    const foreign = await rejection(client.revokeKey(stranger.id))
    expect(foreign).toMatchObject({ status: 404, code: 'not_found', message: `No key with id ${stranger.id}` })
    const plain = await rejection(testClient(stranger.key).client.listKeys())
    expect(plain).toMatchObject({ status: 403, code: 'insufficient_scope', requiredScope: 'keys:manage' })
    expect(sleeps).toEqual([])
  })
})

describe('retries', () => {
  it('wait out Retry-After on a 429, never less, then succeed', async () => {
    const free = await issueTestKey(database, 'free')
    await clock.set(NOON + 57_000)
    await spend(free, 60)
    const { client, sent, sleeps } = testClient(free, { random: () => 0 })
    expect(await client.listPets()).toEqual([])
    expect(sent.map((exchange) => [exchange.status, exchange.retryAfter])).toEqual([
      [429, '3'],
      [200, null]
    ])
    expect(sleeps).toEqual([3000])
  })

  it('retry POST /pets with the Idempotency-Key the client made, the same on every attempt', async () => {
    const free = await issueTestKey(database, 'free')
    await clock.set(NOON + 58_000)
    await spend(free, 60)
    const { client, sent, sleeps } = testClient(free)
    const pet = await client.addPet({ name: 'Rex', categoryId: 7n })
    expect(pet).toEqual({ id: 1n, name: 'Rex', categoryId: 7n })
    expect(sent.map((exchange) => exchange.status)).toEqual([429, 201])
    expect(sleeps).toEqual([2000])
    const [first, second] = sent.map((exchange) => exchange.headers.get('idempotency-key'))
    expect(first).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(second).toBe(first)

    const { client: other, sent: otherSent } = testClient(key)
    await other.addPet({ name: 'Tom', categoryId: 8n }, { idempotencyKey: 'order-42' })
    await other.addPet({ name: 'Kit', categoryId: 9n })
    const keys = otherSent.map((exchange) => exchange.headers.get('idempotency-key'))
    expect(keys[0]).toBe('order-42')
    expect(keys[1]).not.toBe(first)
  })

  it('never retry a banned key: the ban comes back at once as key_banned with its Retry-After', async () => {
    const free = await issueTestKey(database, 'free')
    await spend(free, 60)
    const refused = await app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${free}` } })
    expect(refused.json().code).toBe('rate_limited')

    const { client, sent, sleeps } = testClient(free)
    const banned = await rejection(client.listPets())
    expect(banned).toMatchObject({ status: 429, code: 'key_banned', retryAfterSeconds: 30 })
    expect(sent).toHaveLength(1)
    expect(sleeps).toEqual([])
  })

  it('hand back a 429 whose Retry-After exceeds the longest wait, rather than wait less', async () => {
    const free = await issueTestKey(database, 'free')
    await spend(free, 60)
    const { client, sent, sleeps } = testClient(free, { maxDelayMs: 10_000 })
    const limited = await rejection(client.listPets())
    expect(limited).toMatchObject({ status: 429, code: 'rate_limited', retryAfterSeconds: 60 })
    expect(sent).toHaveLength(1)
    expect(sleeps).toEqual([])
  })

  it('back off exponentially with full jitter under the cap, up to maxAttempts, when the network fails', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}/v1`
    const options = { baseUrl: nobody, maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 300 }

    const halfway = testClient(key, { ...options, random: () => 0.5 })
    await expect(halfway.client.listPets()).rejects.toThrow(TypeError)
    expect(halfway.sent).toHaveLength(5)
    expect(halfway.sleeps).toEqual([50, 100, 150, 150])

    const top = testClient(key, { ...options, random: () => 0.999 })
    await expect(top.client.addPet({ name: 'Rex', categoryId: 1n })).rejects.toThrow(TypeError)
    expect(top.sleeps).toEqual([99, 199, 299, 299])
    expect(new Set(top.sent.map((exchange) => exchange.headers.get('idempotency-key'))).size).toBe(1)
    expect(top.sent).toHaveLength(5)
  })

  it('wait out Retry-After on a 503 while the database is down, then succeed once it is back', async () => {
    const cluster = await startStoppableCluster()
    const outage = await createTestApp(cluster.database)
    try {
      const outageUrl = await listen(outage)
      const { key: outageKey } = await issueApiKey(cluster.database.db, { plan: 'free' })
      await cluster.stop()
      const sleeps: number[] = []
      const client = createAnimalStoreClient({
        baseUrl: outageUrl,
        apiKey: outageKey,
        random: () => 0,
        sleep: async (ms) => {
          sleeps.push(ms)
          if (sleeps.length === 1) await cluster.start()
        }
      })
      expect(await client.listPets()).toEqual([])
      expect(sleeps.length).toBeGreaterThanOrEqual(1)
      for (const ms of sleeps) expect(ms).toBe(5000)
    } finally {
      await outage.close()
      await cluster.destroy()
    }
  })
})
