import { hash } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { issueInBulk } from '../../bench/database.js'
import { REDIS_SERVER, startRedis } from '../../bench/processes.js'
import { findUsableApiKey, getApiKey } from '../../src/repositories/api-keys.js'
import { putPlan } from '../../src/services/plans.js'
import { issueTestKey } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { holdPort, processEnv, startProcess, waitFor, type RunningProcess } from '../../harness/processes.js'
import { describeNeeding } from '../helpers/requirements.js'
import { awayFromMinuteEnd } from '../helpers/traffic.js'

// The peer the service is judged against on `plans` must count what the service counts: every window
// of each key's plan, a calendar month included, and the route's cost, in Redis, refusing past any
// limit, with the same bodies as the service.
describeNeeding([{ path: REDIS_SERVER, package: 'redis-server' }])(
  "the bench's Redis peer (bench/baseline.ts with BASELINE=redis)",
  () => {
    let database: TestDatabase
    let redis: Awaited<ReturnType<typeof startRedis>>
    let peer: RunningProcess
    let origin: string

    beforeAll(async () => {
      database = await createTestDatabase()
      await sql`INSERT INTO pets (name, category_id, status) VALUES ('Rex', 1, 'available')`.execute(database.db)
      redis = await startRedis()
      const held = await holdPort()
      held.release()
      origin = `http://127.0.0.1:${held.port}`
      peer = startProcess(
        process.execPath,
        ['--import', 'tsx', 'bench/baseline.ts'],
        processEnv({
          BASELINE: 'redis',
          REDIS_URL: redis.origin,
          DATABASE_URL: database.url,
          HOST: '127.0.0.1',
          PORT: String(held.port)
        })
      )
      await waitFor(`${origin}/v1/pets/1`, peer, 50_000, {
        headers: { authorization: `Bearer ${await issueTestKey(database, 'enterprise')}` }
      })
    })

    afterAll(async () => {
      await peer?.stop('SIGTERM')
      await redis?.stop()
      await database?.drop()
    })

    const get = (token?: string) =>
      fetch(`${origin}/v1/pets/1`, token ? { headers: { authorization: `Bearer ${token}` } } : {})

    it('refuses a request without a known key', async () => {
      expect((await get()).status).toBe(401)
      expect((await get('ask_00000000_00000000000000000000000000000000')).status).toBe(401)
    })

    it("counts each key's minute on its own and refuses past the key's limit", async () => {
      // The peer counts on its own clock's minute: the 61 requests in one of them.
      await awayFromMinuteEnd(10_000)
      const [free, other] = [await issueTestKey(database, 'free'), await issueTestKey(database, 'free')]
      const first = await get(free)
      expect(first.status).toBe(200)
      expect(await first.json()).toEqual({ id: 1, name: 'Rex', categoryId: 1, status: 'available' })
      expect(first.headers.get('x-ratelimit-limit')).toBe('60')
      expect(first.headers.get('x-ratelimit-remaining')).toBe('59')
      for (let i = 0; i < 59; i++) expect((await get(free)).status).toBe(200)
      expect((await get(free)).status).toBe(429)
      const fresh = await get(other)
      expect(fresh.status).toBe(200)
      expect(fresh.headers.get('x-ratelimit-remaining')).toBe('59')
    })

    it("counts the route's cost against every window of the plan, the month included", async () => {
      await awayFromMinuteEnd(5000)
      const plan = {
        limits: [
          { window: 'minute', limit: 10 },
          { window: 'month', limit: 4 }
        ],
        costs: { 'POST /v1/pets': 2 }
      }
      await putPlan(database.db, { actor: 'cli:test', requestId: null }, 'metered', plan)
      const [key] = await issueInBulk(database.db).issue([{ plan: 'metered' }])
      const created = await fetch(`${origin}/v1/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Bench', categoryId: 1, status: 'available' })
      })
      expect(created.status).toBe(201)
      expect(created.headers.get('x-ratelimit-remaining')).toBe('8')
      expect((await get(key)).headers.get('x-ratelimit-remaining')).toBe('7')
      expect((await get(key)).status).toBe(200)
      // The month's 4 units are spent while the minute has 6 left.
      expect((await get(key)).status).toBe(429)
    })
  }
)

it('issues keys in bulk that the service finds by their hash, on their plan', async () => {
  const database = await createTestDatabase()
  try {
    const limits = { perMinute: 5000, perDay: 90000 }
    const [free, enterprise] = await issueInBulk(database.db).issue([{ plan: 'free' }, { plan: 'enterprise', limits }])
    // Found by the hash as a request finds it; its limits as the admin API reads them.
    const find = async (key: string) => {
      const found = (await findUsableApiKey(database.pool, hash('sha256', key, 'buffer'), new Date()))?.key
      return found && getApiKey(database.db, found.id)
    }
    expect(await find(free!)).toMatchObject({ plan: 'free', perMinute: 60, prefix: free!.slice(0, 12) })
    expect(await find(enterprise!)).toMatchObject({ plan: 'enterprise', perMinute: 5000, perDay: 90000 })
  } finally {
    await database.drop()
  }
})
