import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { freePort } from '../../src/db/embedded.js'
import { createTestApp, issueTestKey } from '../helpers/app.js'
import { bearer } from '../helpers/traffic.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

let database: TestDatabase
let app: FastifyInstance
let metricsUrl: string
/** Released after each test, so that a test failing while it holds the counters does not hang the next. */
let releaseCounters: (() => Promise<void>) | undefined

beforeAll(async () => {
  database = await createTestDatabase()
  app = await createTestApp(database, {
    env: { METRICS_PORT: String(await freePort()), COUNTING_QUEUE_MAX: '2', DATABASE_TIMEOUT_MS: '30000' }
  })
  metricsUrl = (await app.metrics.listen())!
})
afterEach(async () => {
  await releaseCounters?.()
})
afterAll(async () => {
  await app.close()
  await database.drop()
})

async function queueDepth(): Promise<number> {
  const text = await (await fetch(metricsUrl)).text()
  const line = text.split('\n').find((entry) => entry.startsWith('animal_store_counting_queue_subjects '))
  return Number(line?.split(' ')[1])
}

// A first request on a cold process can take over a second: more than waitFor's default.
const WAIT = { timeout: 10_000 }

const listPets = (key: string) => ({ method: 'GET' as const, url: '/v1/pets?limit=1', headers: bearer(key) })

/**
 * Counting writes account_counters; while the returned transaction holds the table, no counting
 * statement ends. `started` resolves once one waits on it.
 */
async function holdCounters() {
  let release!: () => void
  let locked!: () => void
  const isLocked = new Promise<void>((resolve) => (locked = resolve))
  const holding = database.db.transaction().execute(async (trx) => {
    await sql`LOCK TABLE account_counters IN EXCLUSIVE MODE`.execute(trx)
    locked()
    await new Promise<void>((resolve) => (release = resolve))
  })
  await isLocked
  const releaseHeld = async () => {
    releaseCounters = undefined
    release()
    await holding
  }
  releaseCounters = releaseHeld
  return {
    started: () =>
      vi.waitFor(async () => {
        const { rows } = await sql<{ waiting: number }>`
          SELECT count(*)::int AS waiting FROM pg_locks
          WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND relation = 'account_counters'::regclass AND NOT granted
        `.execute(database.db)
        expect(rows[0]!.waiting).toBe(1)
      }, WAIT),
    release: releaseHeld
  }
}

/**
 * With the counters held: the first key's request under way, the next two queued (a full queue of
 * 2), and the fourth's answer, refused at once. `release` lets counting resume and returns the three
 * answers. A request that takes another path meanwhile leaves the queue short: a key the cache stops
 * trusting (its channel's heartbeat late on a loaded machine) is looked up, in the other queue, and
 * one that arrives as a statement is about to start goes with it. The fill is then tried again with
 * `nextKeys()`, at most three times, and a last failure says what waited on the database.
 */
async function fillQueue(nextKeys: () => Promise<string[]>) {
  for (let attempt = 1; ; attempt++) {
    const keys = await nextKeys()
    // Every announcement applied and the change channel just proven live.
    await vi.waitFor(() => app.keyCache.caughtUp(), WAIT)
    const generation = app.keyCache.generation
    const counters = await holdCounters()
    const underWay = app.inject(listPets(keys[0]!))
    await counters.started()
    const queued = [app.inject(listPets(keys[1]!)), app.inject(listPets(keys[2]!))]
    const release = async () => {
      await counters.release()
      return Promise.all([underWay, ...queued])
    }
    let short: unknown
    try {
      await vi.waitFor(async () => expect(await queueDepth()).toBe(2), WAIT)
    } catch (error) {
      short = error
    }
    // A fourth key sent after the cache stopped trusting its channel would wait for a lookup.
    if (short !== undefined || app.keyCache.generation !== generation) {
      const { rows } = await sql<{ waiting: string }>`
        SELECT coalesce(string_agg(left(query, 60), ' | '), 'none') AS waiting FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'
      `.execute(database.db)
      await release()
      if (attempt < 3) continue
      throw new Error(`the counting queue did not fill in 3 tries; waiting on a lock: ${rows[0]!.waiting}`, {
        cause: short
      })
    }
    const refused = await app.inject(listPets(keys[3]!))
    return { refused, keys, release }
  }
}

const issueKeys = () => Promise.all(Array.from({ length: 4 }, () => issueTestKey(database)))

describe('the counting queue', () => {
  it('answers 503 with Retry-After at once when full, shows its depth, and serves those queued once counting resumes', async () => {
    // Known here first (GET /v1/rate_limit counts nothing), so that they wait for the limiter's counts, not for lookups.
    const knownKeys = async () => {
      const keys = await issueKeys()
      for (const key of keys) {
        expect((await app.inject({ method: 'GET', url: '/v1/rate_limit', headers: bearer(key) })).statusCode).toBe(200)
      }
      return keys
    }
    expect(await queueDepth()).toBe(0)

    const { refused, keys, release } = await fillQueue(knownKeys)
    expect(refused.statusCode).toBe(503)
    expect(refused.headers['retry-after']).toBe('1')
    expect(refused.json()).toEqual({
      code: 'service_unavailable',
      message: 'Too many requests are waiting to be counted; retry later',
      status: 503
    })
    expect(await queueDepth()).toBe(2)

    const answered = await release()
    expect(answered.map((response) => response.statusCode)).toEqual([200, 200, 200])
    expect(await queueDepth()).toBe(0)
    const retried = await app.inject(listPets(keys[3]!))
    expect(retried.statusCode).toBe(200)
  })

  it('holds the first requests of keys not known here in a queue of the same bound, shown in the same gauge', async () => {
    // The first key's lookup and count is under way, held by the lock; the next two wait for theirs.
    const { refused, keys, release } = await fillQueue(issueKeys)
    expect(refused.statusCode).toBe(503)
    expect(refused.headers['retry-after']).toBe('1')

    const answered = await release()
    expect(answered.map((response) => response.statusCode)).toEqual([200, 200, 200])
    expect(await queueDepth()).toBe(0)
    expect((await app.inject(listPets(keys[3]!))).statusCode).toBe(200)
  })
})
