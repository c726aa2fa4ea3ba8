import { createHash } from 'node:crypto'
import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { issueApiKey, revokeApiKey, rotateApiKey, setApiKeyPlan } from '../../src/repositories/api-keys.js'
import { createTestApp, issueTestKey, useTestApp } from '../helpers/app.js'
import { startStoppableCluster } from '../helpers/cluster.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

const context = useTestApp()

const get = (instance: FastifyInstance, authorization?: string, url = '/v1/pets') =>
  instance.inject({ method: 'GET', url, headers: authorization === undefined ? {} : { authorization } })

/** Everything a client can see of a 401, but the per-address budget figures. */
function visible(response: Awaited<ReturnType<typeof get>>) {
  return { status: response.statusCode, body: response.body, challenge: response.headers['www-authenticate'] }
}

describe('bearer authentication', () => {
  it('answers a request without a key with 401, the Error body and a plain Bearer challenge', async () => {
    const response = await get(context.app)
    expect(response.statusCode).toBe(401)
    expect(response.json()).toEqual({
      code: 'unauthorized',
      message: 'A valid API key is required: send Authorization: Bearer <key>',
      status: 401
    })
    expect(response.headers['www-authenticate']).toBe('Bearer realm="animal-store"')
  })

  it('accepts the scheme word in any case', async () => {
    const key = await issueTestKey(context.database)
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      expect((await get(context.app, `${scheme} ${key}`)).statusCode, scheme).toBe(200)
    }
  })

  it.each([
    ['a bare key', (key: string) => key],
    ['another scheme', (key: string) => `Basic ${key}`],
    ['a scheme with no key', () => 'Bearer '],
    ['a key with a character changed', (key: string) => `Bearer ${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`],
    ['a key with text appended', (key: string) => `Bearer ${key}x`]
  ])('answers %s with 401 and error="invalid_token"', async (_label, header) => {
    const key = await issueTestKey(context.database)
    const response = await get(context.app, header(key))
    expect(response.statusCode).toBe(401)
    expect(response.json().code).toBe('unauthorized')
    expect(response.headers['www-authenticate']).toBe('Bearer realm="animal-store", error="invalid_token"')
  })

  it('answers unknown, revoked and expired keys identically', async () => {
    const revoked = await issueApiKey(context.database.db, { plan: 'free' })
    await revokeApiKey(context.database.db, revoked.id)
    const expired = await issueApiKey(context.database.db, { plan: 'free', expiresAt: new Date(Date.now() - 1000) })
    const unknown = 'ask_AAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'
    const responses = await Promise.all([unknown, revoked.key, expired.key].map((key) => get(context.app, `Bearer ${key}`)))
    expect(responses.map(visible)).toEqual(Array(3).fill(visible(responses[0]!)))
    expect(responses[0]!.statusCode).toBe(401)
  })

  it('stops accepting a key at the instant it expires', async () => {
    let now = Date.parse('2027-03-01T10:00:00Z')
    const timed = await createTestApp(context.database, { clock: () => now })
    try {
      const { key } = await issueApiKey(context.database.db, { plan: 'pro', expiresAt: new Date(now + 5_000) })
      expect((await get(timed, `Bearer ${key}`)).statusCode).toBe(200)
      now += 4_999
      expect((await get(timed, `Bearer ${key}`)).statusCode).toBe(200)
      now += 1
      expect((await get(timed, `Bearer ${key}`)).statusCode).toBe(401)
    } finally {
      await timed.close()
    }
  })

  it('stores no secret: a dump of every table after issuing keys holds hashes only', async () => {
    const issued = await Promise.all(['free', 'pro', 'business'].map((plan) => issueApiKey(context.database.db, { plan: plan as 'free' })))
    const { rows: tables } = await sql<{ name: string }>`
      SELECT quote_ident(table_name) AS name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`.execute(context.database.db)
    let dump = ''
    for (const { name } of tables) {
      const { rows } = await sql<{ row: string }>`SELECT t::text AS row FROM ${sql.raw(name)} t`.execute(context.database.db)
      dump += rows.map((row) => row.row).join('\n')
    }
    expect(tables.map((table) => table.name)).toContain('api_keys')
    for (const { key, prefix } of issued) {
      const secret = key.slice(prefix.length + 1)
      expect(dump).toContain(prefix)
      expect(dump).not.toContain(secret)
      expect(dump).not.toContain(Buffer.from(key).toString('hex'))
      expect(dump).toContain(createHashHex(key))
    }
  })
})

function createHashHex(key: string) {
  return createHash('sha256').update(key).digest('hex')
}

describe('key changes across instances', () => {
  let second: FastifyInstance
  beforeAll(async () => {
    second = await createTestApp(context.database)
  })
  afterAll(async () => {
    await second.close()
  })

  /** Milliseconds until every instance answers as expected, failing after one second. */
  async function untilAll(check: (instance: FastifyInstance) => Promise<boolean>): Promise<number> {
    const started = Date.now()
    while (Date.now() - started <= 1_000) {
      const results = await Promise.all([context.app, second].map(check))
      if (results.every(Boolean)) return Date.now() - started
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    throw new Error('not every instance saw the change within 1 s')
  }

  it('revocation takes effect on both instances within 1 second', async () => {
    const { id, key } = await issueApiKey(context.database.db, { plan: 'free' })
    // Both instances authenticate the key, so both hold it in memory.
    for (const instance of [context.app, second]) expect((await get(instance, `Bearer ${key}`)).statusCode).toBe(200)
    await revokeApiKey(context.database.db, id)
    expect(await untilAll(async (instance) => (await get(instance, `Bearer ${key}`)).statusCode === 401)).toBeLessThanOrEqual(1_000)
  })

  it('rotation: the old secret stops and the new one works on both instances within 1 second', async () => {
    const { id, key } = await issueApiKey(context.database.db, { plan: 'free' })
    for (const instance of [context.app, second]) expect((await get(instance, `Bearer ${key}`)).statusCode).toBe(200)
    const rotated = (await rotateApiKey(context.database.db, id))!
    expect(rotated.key).not.toBe(key)
    await untilAll(async (instance) => (await get(instance, `Bearer ${key}`)).statusCode === 401)
    for (const instance of [context.app, second]) expect((await get(instance, `Bearer ${rotated.key}`)).statusCode).toBe(200)
  })

  it('a plan change reaches both instances within 1 second', async () => {
    const { id, key } = await issueApiKey(context.database.db, { plan: 'free' })
    for (const instance of [context.app, second]) {
      expect((await get(instance, `Bearer ${key}`)).headers['x-ratelimit-limit']).toBe('60')
    }
    await setApiKeyPlan(context.database.db, id, 'enterprise', { perMinute: 5000, perDay: 9000 })
    await untilAll(async (instance) => (await get(instance, `Bearer ${key}`)).headers['x-ratelimit-limit'] === '5000')
  })
})

describe('logging', () => {
  it('never writes the Authorization header or a key to a log line', async () => {
    const lines: string[] = []
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean))
        done()
      }
    })
    const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: context.database.url })
    const logged = await buildApp({ config, database: context.database, logger: { level: 'trace', stream } })
    try {
      const key = await issueTestKey(context.database)
      await logged.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })
      await logged.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: 'Bearer ask_wrong_key' } })
      await logged.inject({ method: 'POST', url: '/v1/pets', headers: { authorization: `Bearer ${key}` }, payload: 'x' })
      expect(lines.length).toBeGreaterThan(3)
      const text = lines.join('\n')
      expect(text).not.toContain(key)
      expect(text).not.toContain('ask_wrong_key')
      expect(text.toLowerCase()).not.toContain('bearer')
    } finally {
      await logged.close()
    }
  })
})

describe('a context.database failure during key lookup', () => {
  it('answers 503 service_unavailable with Retry-After, never a 500 with driver text', async () => {
    const cluster = await startStoppableCluster()
    const outage = await createTestApp(cluster.database)
    try {
      const { key } = await issueApiKey(cluster.database.db, { plan: 'free' })
      await cluster.stop()
      const started = Date.now()
      const response = await get(outage, `Bearer ${key}`)
      expect(Date.now() - started).toBeLessThan(2_000)
      expect(response.statusCode).toBe(503)
      expect(response.json()).toEqual({
        code: 'service_unavailable',
        message: 'The service cannot reach its database; retry later',
        status: 503
      })
      expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    } finally {
      await outage.close()
      await cluster.destroy()
    }
  })
})
