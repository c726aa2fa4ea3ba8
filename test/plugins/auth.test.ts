import { createHash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createLogger } from '../../src/logging.js'
import { issueApiKey, randomBase62, revokeApiKey } from '../../src/repositories/api-keys.js'
import { createTestApp, manualClock, issueTestKey, useTestApp } from '../helpers/app.js'
import { startStoppableCluster } from '../helpers/cluster.js'
import { createTestDatabase, recordQueries } from '../helpers/database.js'
import { cliOn } from '../helpers/cli.js'
import { holdDatabaseClock, rawRequest } from '../helpers/traffic.js'

const context = useTestApp()

/**
 * What the service sent the database but what every instance sends on its timers, whoever's requests
 * they carry: the change channel's heartbeat (every 2 s), and the usage by route and the hand-back of
 * idle accounts' leased units (every 5 s). A test whose requests take longer on a busy machine sees
 * them, from its own app or the file's.
 */
const beyondTimers = (texts: string[]) =>
  texts.filter(
    (text) =>
      !text.startsWith('NOTIFY') &&
      !/^\s*INSERT INTO api_key_route_usage\b/.test(text) &&
      !/^\s*SELECT FROM hand_back_units\(/.test(text)
  )

const get = (instance: FastifyInstance, authorization?: string, url = '/v1/pets') =>
  instance.inject({ method: 'GET', url, headers: authorization === undefined ? {} : { authorization } })

/** Everything a client can see of a 401, but the per-address budget figures. */
function visible(response: { statusCode: number; body: string; headers: Record<string, unknown> }) {
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

  // Over a real connection: Node's server, not inject, decides what two headers of one name become.
  it('answers a request with two Authorization headers with 401, as a malformed one, whichever is valid', async () => {
    const key = await issueTestKey(context.database)
    if (!context.app.server.listening) await context.app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = context.app.server.address() as AddressInfo
    const malformed = visible(await get(context.app, 'Bearer x y'))
    expect(malformed.status).toBe(401)
    for (const [first, second] of [
      [key, 'nope'],
      ['nope', key],
      [key, key]
    ]) {
      const response = visible(
        await rawRequest(
          port,
          `GET /v1/pets HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${first}\r\nAuthorization: Bearer ${second}\r\nConnection: close\r\n\r\n`
        )
      )
      expect(response, `${first === key ? 'valid' : 'nope'} then ${second === key ? 'valid' : 'nope'}`).toEqual(
        malformed
      )
    }
  })

  it('answers unknown, revoked and expired keys identically', async () => {
    const revoked = await issueApiKey(context.database.db, { plan: 'free' })
    await revokeApiKey(context.database.db, revoked.id)
    const expired = await issueApiKey(context.database.db, { plan: 'free', expiresAt: new Date(Date.now() - 1000) })
    const unknown = 'ask_AAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'
    const responses = await Promise.all(
      [unknown, revoked.key, expired.key].map((key) => get(context.app, `Bearer ${key}`))
    )
    expect(responses.map(visible)).toEqual(Array(3).fill(visible(responses[0]!)))
    expect(responses[0]!.statusCode).toBe(401)
  })

  it('stops accepting a key at the instant it expires', async () => {
    // The database's clock decides: the instance measures its own against it.
    const start = Date.parse('2027-03-01T10:00:00Z')
    const clock = manualClock(start, () => context.database)
    await clock.set(start)
    const timed = await createTestApp(context.database, { clock })
    try {
      const { key } = await issueApiKey(context.database.db, { plan: 'pro', expiresAt: new Date(start + 5_000) })
      expect((await get(timed, `Bearer ${key}`)).statusCode).toBe(200)
      await clock.advance(4_999)
      expect((await get(timed, `Bearer ${key}`)).statusCode).toBe(200)
      await clock.advance(1)
      expect((await get(timed, `Bearer ${key}`)).statusCode).toBe(401)
    } finally {
      await timed.close()
      await clock.release()
    }
  })

  it('stores no secret: a dump of every table after issuing keys holds hashes only', async () => {
    const issued = await Promise.all(
      ['free', 'pro', 'business'].map((plan) => issueApiKey(context.database.db, { plan }))
    )
    const { rows: tables } = await sql<{ name: string }>`
      SELECT quote_ident(table_name) AS name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`.execute(context.database.db)
    let dump = ''
    for (const { name } of tables) {
      const { rows } = await sql<{ row: string }>`SELECT t::text AS row FROM ${sql.raw(name)} t`.execute(
        context.database.db
      )
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

// Key changes on a healthy channel, within a second: test/deploy/instances.test.ts.
describe('key changes across instances', () => {
  let second: FastifyInstance
  beforeAll(async () => {
    second = await createTestApp(context.database)
  })
  afterAll(async () => {
    await second.close()
  })

  /** The Postgres processes that hold this database's change listeners, stopped (SIGSTOP) while `during` runs. */
  async function withListenersFrozen(during: () => Promise<void>) {
    const { rows } = await sql<{ pid: number }>`
      SELECT pid FROM pg_stat_activity
      WHERE application_name = 'animal-store-listener' AND datname = current_database()`.execute(context.database.db)
    expect(rows).toHaveLength(2)
    for (const { pid } of rows) {
      expect(readFileSync(`/proc/${pid}/comm`, 'utf8').trim(), 'a backend of a Postgres server on this host').toBe(
        'postgres'
      )
    }
    for (const { pid } of rows) process.kill(pid, 'SIGSTOP')
    try {
      await during()
    } finally {
      for (const { pid } of rows) process.kill(pid, 'SIGCONT')
    }
  }

  it('revocation, rotation and a downgrade made with the CLI reach every instance within 10 s of their command', async () => {
    const revoked = await issueApiKey(context.database.db, { plan: 'pro' })
    const rotated = await issueApiKey(context.database.db, { plan: 'pro' })
    const downgraded = await issueApiKey(context.database.db, { plan: 'pro' })
    const instances = [context.app, second]
    for (const instance of instances) {
      for (const { key } of [revoked, rotated, downgraded]) {
        expect((await get(instance, `Bearer ${key}`)).statusCode).toBe(200)
      }
    }
    // The CLI's program in this process (test/helpers/cli.ts), opening the database as the process does.
    const { run } = cliOn(() => context.database.url)
    const cli = (...args: string[]) => run('keys', ...args)
    /** Milliseconds from `since` until `visible` holds on every instance, or until over 10 s have passed without it. */
    const reachedEveryInstance = async (since: number, visible: (instance: FastifyInstance) => Promise<boolean>) => {
      for (;;) {
        const visibleEverywhere = (await Promise.all(instances.map(visible))).every(Boolean)
        const elapsed = Date.now() - since
        if (visibleEverywhere || elapsed > 10_000) return elapsed
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }

    await withListenersFrozen(async () => {
      // Each change is watched from the moment its own command returns, while the next command runs.
      expect((await cli('revoke', String(revoked.id))).code).toBe(0)
      const revokedAfter = reachedEveryInstance(
        Date.now(),
        async (instance) => (await get(instance, `Bearer ${revoked.key}`)).statusCode === 401
      )

      const rotation = await cli('rotate', String(rotated.id), '--json')
      expect(rotation.code).toBe(0)
      const newSecret = JSON.parse(rotation.stdout).key as string
      const rotatedAfter = reachedEveryInstance(
        Date.now(),
        async (instance) =>
          (await get(instance, `Bearer ${rotated.key}`)).statusCode === 401 &&
          (await get(instance, `Bearer ${newSecret}`)).statusCode === 200
      )

      expect((await cli('set-plan', String(downgraded.id), '--plan', 'free')).code).toBe(0)
      const downgradedAfter = reachedEveryInstance(
        Date.now(),
        async (instance) => (await get(instance, `Bearer ${downgraded.key}`)).headers['x-ratelimit-limit'] === '60'
      )

      expect(await revokedAfter, 'the revoked key refused everywhere within 10 s').toBeLessThanOrEqual(10_000)
      expect(await rotatedAfter, 'only the new secret accepted everywhere within 10 s').toBeLessThanOrEqual(10_000)
      expect(await downgradedAfter, 'the free plan’s limit everywhere within 10 s').toBeLessThanOrEqual(10_000)
    })
  }, 30_000)
})

const randomKey = () =>
  `ask_${randomBytes(6).toString('base64url').replace(/[-_]/g, 'x')}_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x')}`

describe('keys that cannot authenticate', () => {
  it('cost no database work once their address is spent: 300 random keys make fewer than 10 queries on any connection', async () => {
    const database = await createTestDatabase()
    // The address's budget is a UTC minute on the database's clock: held, so that no minute ends mid-test
    // (the database is dropped at the end, with its clock).
    const clock = manualClock(Date.now(), () => database)
    await clock.set(clock())
    const app = await createTestApp(database, { clock, env: { UNAUTHENTICATED_PER_MINUTE: '5' } })
    const queries = recordQueries(database.name)
    try {
      // An address of this test's own, whose budget no other test has touched.
      const tryKey = (authorization: string) =>
        app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization }, remoteAddress: '203.0.113.7' })
      const spending = await Promise.all(Array.from({ length: 5 }, () => tryKey(`Bearer ${randomKey()}`)))
      expect(spending.map((response) => response.statusCode)).toEqual([401, 401, 401, 401, 401])

      queries.texts.length = 0
      const flood = []
      for (let i = 0; i < 300; i += 25) {
        flood.push(...(await Promise.all(Array.from({ length: 25 }, () => tryKey(`Bearer ${randomKey()}`)))))
      }
      expect(new Set(flood.map((response) => response.statusCode))).toEqual(new Set([429]))
      expect(queries.texts.length, queries.texts.join('\n')).toBeLessThan(10)

      // Tokens that cannot be keys are never looked up, spent address or not.
      const malformed = await Promise.all(
        ['Bearer x', 'Bearer ask_short', 'Basic abc', `Bearer ${randomKey()}!`].map((header) => tryKey(header))
      )
      expect(malformed.map((response) => response.statusCode)).toEqual([429, 429, 429, 429])
      expect(queries.texts.length, queries.texts.join('\n')).toBeLessThan(10)
    } finally {
      queries.stop()
      await app.close()
      await database.drop()
    }
  })

  it('never keep out a valid key from an address that has spent its budget, even on its first request here', async () => {
    const app = await createTestApp(context.database, { clock: await holdDatabaseClock(context.database) })
    try {
      const tryKey = (key: string) =>
        app.inject({
          method: 'GET',
          url: '/v1/pets',
          headers: { authorization: `Bearer ${key}` },
          remoteAddress: '203.0.113.9'
        })
      // Issued first (an instance learns of a new key as fast as NOTIFY travels), used only after.
      const { key } = await issueApiKey(context.database.db, { plan: 'pro' })
      // Made-up keys are refused in memory, in far less time than the announcement takes to arrive.
      await app.keyCache.caughtUp()
      const spending = []
      for (let i = 0; i < 61; i++) spending.push((await tryKey(randomKey())).statusCode)
      expect(spending.at(-1)).toBe(429)
      const response = await tryKey(key)
      expect(response.statusCode).toBe(200)
      expect(response.headers['x-ratelimit-limit']).toBe('300')
    } finally {
      await app.close()
    }
  })
})

describe('a key not yet known to an instance', () => {
  it('is looked up once however many of its requests arrive together, and costs its address nothing', async () => {
    const app = await createTestApp(context.database, { env: { UNAUTHENTICATED_PER_MINUTE: '5' } })
    const queries = recordQueries(context.database.name)
    try {
      const { key } = await issueApiKey(context.database.db, { plan: 'pro' })
      queries.texts.length = 0
      const burst = await Promise.all(
        Array.from({ length: 40 }, () =>
          app.inject({
            method: 'GET',
            url: '/v1/pets/1',
            headers: { authorization: `Bearer ${key}` },
            remoteAddress: '203.0.113.8'
          })
        )
      )
      expect(new Set(burst.map((response) => response.statusCode))).toEqual(new Set([404]))
      expect(queries.texts.filter((text) => /\bfrom "api_keys"/i.test(text))).toHaveLength(1)
      // The address's budget is untouched: its first request without a key is counted as its first.
      const keyless = await app.inject({ method: 'GET', url: '/v1/pets', remoteAddress: '203.0.113.8' })
      expect(keyless.statusCode).toBe(401)
      expect(keyless.headers['x-ratelimit-remaining']).toBe('4')
    } finally {
      queries.stop()
      await app.close()
    }
  })
})

describe("a key's first request on an instance", () => {
  it('costs one statement for its lookup and its count together, and is counted', async () => {
    const app = await createTestApp(context.database)
    const queries = recordQueries(context.database.name)
    try {
      const { key, accountId } = await issueApiKey(context.database.db, { plan: 'free' })
      queries.texts.length = 0
      const response = await get(app, `Bearer ${key}`, '/v1/pets/1')
      expect(response.statusCode).toBe(404)
      expect(response.headers['x-ratelimit-remaining']).toBe('59')
      // The key's statement, then the pet's.
      const sent = beyondTimers(queries.texts)
      expect(sent, sent.join('\n')).toHaveLength(2)
      expect(sent[0]).toMatch(/\bfrom "api_keys"[\s\S]*count_units\(/i)
      const { rows } = await sql<{ used: string }>`
        SELECT used FROM limit_counters WHERE account_id = ${accountId} AND "window" = 'minute'
      `.execute(context.database.db)
      expect(rows).toEqual([{ used: 1n }])
    } finally {
      queries.stop()
      await app.close()
    }
  })

  it('shares its statement with the first requests of other keys that arrive meanwhile', async () => {
    const app = await createTestApp(context.database)
    const queries = recordQueries(context.database.name)
    try {
      const issued = await Promise.all(
        Array.from({ length: 20 }, () => issueApiKey(context.database.db, { plan: 'free' }))
      )
      queries.texts.length = 0
      const responses = await Promise.all(issued.map(({ key }) => get(app, `Bearer ${key}`, '/v1/pets/1')))
      expect(responses.map((response) => [response.statusCode, response.headers['x-ratelimit-remaining']])).toEqual(
        issued.map(() => [404, '59'])
      )
      const lookups = queries.texts.filter((text) => /\bfrom "api_keys"[\s\S]*count_units\(/i.test(text))
      expect(lookups.length).toBeLessThanOrEqual(2)
      const { rows } = await sql<{ used: string }>`
        SELECT used::text FROM limit_counters
        WHERE account_id = ANY (${issued.map(({ accountId }) => accountId)}) AND "window" = 'minute'
      `.execute(context.database.db)
      expect(rows).toEqual(issued.map(() => ({ used: '1' })))
    } finally {
      queries.stop()
      await app.close()
    }
  })

  /**
   * A free key's request, then another once `ms` have passed on the database's clock: the second's
   * response, the statements it cost (heartbeats aside) and the key's day's count afterwards.
   */
  async function requestAgainAfter(ms: number, check: (sent: () => string[]) => Promise<void>) {
    // The first minute of this hour: the day's count then holds both requests at any hour of a run.
    const now = Date.now()
    const start = now - (now % 3_600_000)
    const clock = manualClock(start, () => context.database)
    await clock.set(start)
    const app = await createTestApp(context.database, { clock })
    const queries = recordQueries(context.database.name)
    try {
      const { key, accountId } = await issueApiKey(context.database.db, { plan: 'free' })
      expect((await get(app, `Bearer ${key}`, '/v1/pets/1')).headers['x-ratelimit-remaining']).toBe('59')
      await clock.advance(ms)
      queries.texts.length = 0
      const response = await get(app, `Bearer ${key}`, '/v1/pets/1')
      expect(response.statusCode).toBe(404)
      // A new minute: its first unit.
      expect(response.headers['x-ratelimit-remaining']).toBe('59')
      await check(() => beyondTimers(queries.texts))
      const { rows } = await sql<{ used: string }>`
        SELECT used::text FROM limit_counters WHERE account_id = ${accountId} AND "window" = 'day'
      `.execute(context.database.db)
      expect(rows).toEqual([{ used: '2' }])
    } finally {
      queries.stop()
      await app.close()
      await clock.release()
    }
  }

  it('serves a key whose cached record is a minute old from memory, and looks it up again in the background', async () => {
    await requestAgainAfter(61_000, async (sent) => {
      // Counted as a known key's.
      expect(sent()[0]).toMatch(/^\s*select \* from count_units\(/i)
      // The lookup follows, off the request's path: one statement for the keys due.
      await expect.poll(() => sent().filter((text) => /from unnest\(\$1::bytea\[\]\)/i.test(text))).toHaveLength(1)
    })
  })

  it('costs one statement again once its cached record is five minutes old, when its account holds nothing here', async () => {
    await requestAgainAfter(301_000, async (sent) => {
      expect(sent(), sent().join('\n')).toHaveLength(2)
      expect(sent()[0]).toMatch(/\bfrom "api_keys"[\s\S]*count_units\(/i)
    })
  })

  it('refuses a key revoked elsewhere as soon as the change is announced, and keeps serving the keys it does not name', async () => {
    const app = await createTestApp(context.database)
    const queries = recordQueries(context.database.name)
    try {
      const issued = await issueApiKey(context.database.db, { plan: 'free' })
      const kept = await issueApiKey(context.database.db, { plan: 'free' })
      for (const { key } of [issued, kept]) expect((await get(app, `Bearer ${key}`, '/v1/pets/1')).statusCode).toBe(404)
      await revokeApiKey(context.database.db, issued.id)
      await expect.poll(async () => (await get(app, `Bearer ${issued.key}`, '/v1/pets/1')).statusCode).toBe(401)
      queries.texts.length = 0
      expect((await get(app, `Bearer ${kept.key}`, '/v1/pets/1')).statusCode).toBe(404)
      expect(queries.texts.filter((text) => /\bfrom "api_keys"/i.test(text))).toEqual([])
    } finally {
      queries.stop()
      await app.close()
    }
  })

  it('spends nothing when the key is unknown, revoked or expired', async () => {
    const app = await createTestApp(context.database)
    try {
      const revoked = await issueApiKey(context.database.db, { plan: 'free' })
      await revokeApiKey(context.database.db, revoked.id)
      const expired = await issueApiKey(context.database.db, { plan: 'free', expiresAt: new Date(Date.now() - 1000) })
      const unknown = `ask_${'B'.repeat(8)}_${'B'.repeat(32)}`
      for (const key of [unknown, revoked.key, expired.key]) {
        expect((await get(app, `Bearer ${key}`)).statusCode).toBe(401)
      }
      const spent = await sql<{ rows: number }>`
        SELECT (SELECT count(*) FROM limit_counters WHERE account_id IN (${revoked.accountId}, ${expired.accountId}))
          + (SELECT count(*) FROM api_key_usage WHERE api_key_id IN (${revoked.id}, ${expired.id}))
          + (SELECT count(*) FROM api_key_bans WHERE api_key_id IN (${revoked.id}, ${expired.id})) AS rows
      `.execute(context.database.db)
      expect(Number(spent.rows[0]!.rows)).toBe(0)
    } finally {
      await app.close()
    }
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
    const logged = await buildApp({
      config,
      database: context.database,
      logger: createLogger({ ...config, LOG_LEVEL: 'trace' }, stream)
    })
    try {
      const key = await issueTestKey(context.database)
      await logged.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })
      await logged.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: 'Bearer ask_wrong_key' } })
      await logged.inject({
        method: 'POST',
        url: '/v1/pets',
        headers: { authorization: `Bearer ${key}` },
        payload: 'x'
      })
      expect(lines.length).toBeGreaterThanOrEqual(3)
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

/** A key of the format issued before keys carried a checksum. */
const legacyKey = () => `ask_${randomBase62(8)}_${randomBase62(32)}`

/** A well-formed key of today's format whose checksum is random: made up, or mistyped in it. */
const madeUpKey = () => `ask_${randomBase62(8)}_${randomBase62(32)}_${randomBase62(6)}`

/** Each request from an address of its own, under a ceiling that sheds none: no address's budget is ever spent. */
const fromFreshAddresses = async (app: FastifyInstance, keys: string[]) => {
  const responses = []
  for (let i = 0; i < keys.length; i += 25) {
    responses.push(
      ...(await Promise.all(
        keys.slice(i, i + 25).map((key, j) =>
          app.inject({
            method: 'GET',
            url: '/v1/pets',
            headers: { authorization: `Bearer ${key}` },
            remoteAddress: `198.18.${Math.floor((i + j) / 250)}.${(i + j) % 250}`
          })
        )
      ))
    )
  }
  return responses
}

describe('keys with a checksum', () => {
  it('are refused in memory when made up or mistyped: 300 of each cost no query, from 300 fresh addresses', async () => {
    const database = await createTestDatabase()
    const app = await createTestApp(database, { env: { UNAUTHENTICATED_PER_SECOND: '100000' } })
    try {
      const issued = []
      for (let i = 0; i < 300; i += 50) {
        issued.push(...(await Promise.all(Array.from({ length: 50 }, () => issueApiKey(database.db, { plan: 'pro' })))))
      }
      // Each real key works; with one character changed (anywhere after `ask_`, to another base62
      // character), it is not even looked up.
      for (const { key } of issued.slice(0, 3)) expect((await get(app, `Bearer ${key}`)).statusCode).toBe(200)
      const mistyped = issued.map(({ key }) => {
        let at: number
        do at = 4 + Math.floor(Math.random() * (key.length - 4))
        while (key[at] === '_')
        const replacement = randomBase62(1)
        return replacement === key[at]
          ? `${key.slice(0, at)}${key[at] === 'a' ? 'b' : 'a'}${key.slice(at + 1)}`
          : `${key.slice(0, at)}${replacement}${key.slice(at + 1)}`
      })
      const madeUp = Array.from({ length: 300 }, madeUpKey)

      const queries = recordQueries(database.name)
      try {
        const responses = [...(await fromFreshAddresses(app, mistyped)), ...(await fromFreshAddresses(app, madeUp))]
        // Not one query on any connection but what instances send on their timers.
        expect(beyondTimers(queries.texts), beyondTimers(queries.texts).join('\n')).toEqual([])
        // The same answer as for a key that is not known (one of the old format, looked up here).
        const unknown = await get(app, 'Bearer ask_AAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '/v1/pets')
        expect(unknown.statusCode).toBe(401)
        expect(responses).toHaveLength(600)
        for (const response of responses) expect(visible(response)).toEqual(visible(unknown))
      } finally {
        queries.stop()
      }
    } finally {
      await app.close()
      await database.drop()
    }
  }, 30_000)

  it('leave keys of the old format working, and an old-format key the filter rules out unlooked-up unless keys were issued in the last seconds', async () => {
    const database = await createTestDatabase()
    // A key issued before checksums: its secret replaced by one of the old format.
    const old = await issueApiKey(database.db, { plan: 'pro' })
    const oldKey = legacyKey()
    await sql`
      UPDATE api_keys SET prefix = ${oldKey.slice(0, 12)}, secret_hash = sha256(convert_to(${oldKey}, 'UTF8'))
      WHERE id = ${old.id}`.execute(database.db)
    const app = await createTestApp(database, { env: { UNAUTHENTICATED_PER_SECOND: '100000' } })
    const queries = recordQueries(database.name)
    try {
      const response = await get(app, `Bearer ${oldKey}`)
      expect(response.statusCode).toBe(200)
      expect(response.headers['x-ratelimit-limit']).toBe('300')

      // No key issued since this instance loaded its filter: 300 made-up keys of the old format from
      // 300 fresh addresses cost nothing.
      queries.texts.length = 0
      const flood = await fromFreshAddresses(app, Array.from({ length: 300 }, legacyKey))
      expect(new Set(flood.map((each) => each.statusCode))).toEqual(new Set([401]))
      expect(beyondTimers(queries.texts), beyondTimers(queries.texts).join('\n')).toEqual([])

      // A key issued now (by an instance of the previous version, say): for a few seconds, the filter may
      // lack another issued with it, and one ruled out is looked up.
      await issueApiKey(database.db, { plan: 'free' })
      await new Promise((resolve) => setTimeout(resolve, 200))
      queries.texts.length = 0
      expect((await get(app, `Bearer ${legacyKey()}`)).statusCode).toBe(401)
      expect(beyondTimers(queries.texts).filter((text) => /\bfrom "api_keys"/i.test(text))).toHaveLength(1)
    } finally {
      queries.stop()
      await app.close()
      await database.drop()
    }
  }, 30_000)
})
