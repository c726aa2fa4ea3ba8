import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectDedicated } from '../../src/db/connect.js'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { newWebhookSecret } from '../../src/webhooks/signing.js'
import { startWebhookWorker } from '../../src/webhooks/worker.js'
import { createTestApp, manualClock } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { bearer } from '../helpers/traffic.js'
import { addPlan } from '../helpers/plans.js'

// usage.reported: one event an account and closed hour, written once whichever instances look, with
// its usage by route, delivered with one webhook-id however often it is sent.
let database: TestDatabase
const TEN = Date.parse('2027-03-15T10:00:00Z')
const clock = manualClock(TEN + 20 * 60_000, () => database)

beforeAll(async () => {
  database = await createTestDatabase()
  await clock.set(TEN + 20 * 60_000)
})
afterAll(async () => {
  await clock.release()
  await database?.drop()
})

const instances = (count: number) =>
  Promise.all(Array.from({ length: count }, () => createTestApp(database, { clock, env: { BAN_AFTER: '100000' } })))
const closeAll = (apps: FastifyInstance[]) => Promise.all(apps.map((app) => app.close()))

const reported = async () => {
  const { rows } = await sql<{ id: string; account_id: bigint; data: Record<string, unknown> }>`
    SELECT id, account_id, data FROM webhook_events WHERE type = 'usage.reported' ORDER BY id`.execute(database.db)
  return rows
}

describe('usage.reported', () => {
  it('is written once per account and closed hour, with its requests by route, whichever instances look', async () => {
    await addPlan(database.db, 'metered', [['minute', 7]], { 'GET /v1/pets/{petId}': 3 })
    await sql`INSERT INTO webhook_endpoints (url, secret, events)
      VALUES ('http://127.0.0.1:9/hooks', ${newWebhookSecret()}, ARRAY['usage.reported'])`.execute(database.db)
    const first = await issueApiKey(database.db, { plan: 'metered', name: 'first' })
    const second = await issueApiKey(database.db, { plan: 'metered', name: 'second', accountId: first.accountId })
    const other = await issueApiKey(database.db, { plan: 'metered', name: 'other' })
    const list = (key: string) => ({ method: 'GET' as const, url: '/v1/pets?limit=1', headers: bearer(key) })
    const get = (key: string) => ({ method: 'GET' as const, url: '/v1/pets/999999', headers: bearer(key) })

    // 10:20, on two instances: three lists (1 unit each) and a read (3 units) fill 6 of the minute's
    // 7 units; a second read does not fit and is refused.
    const [a, b] = await instances(2)
    const statuses: number[] = []
    for (const [app, request] of [
      [a, list(first.key)],
      [b, list(first.key)],
      [a, list(second.key)],
      [b, get(second.key)],
      [a, get(first.key)],
      [b, list(other.key)]
    ] as const) {
      statuses.push((await app!.inject(request)).statusCode)
    }
    expect(statuses).toEqual([200, 200, 200, 404, 429, 200])
    // 11:05: the next hour's request is not in 10:00's report.
    await clock.set(TEN + 65 * 60_000)
    expect((await a!.inject(list(other.key))).statusCode).toBe(200)
    // Closing reports what each instance counted.
    await closeAll([a!, b!])

    const [c, d] = await instances(2)
    try {
      // 11:00:30: the hour has ended, but instances may still be reporting it.
      await clock.set(TEN + 60 * 60_000 + 30_000)
      expect((await c!.housekeeping.run()).usageReports).toBe(0)
      expect(await reported()).toEqual([])

      await clock.set(TEN + 61 * 60_000)
      const runs = await Promise.all([c!.housekeeping.run(), d!.housekeeping.run()])
      expect(runs.map((run) => run.usageReports).sort()).toEqual([0, 2])
      expect((await c!.housekeeping.run()).usageReports).toBe(0)
      const hour = { hourStart: '2027-03-15T10:00:00Z', hourEnd: '2027-03-15T11:00:00Z' }
      expect((await reported()).map((row) => [String(row.account_id), row.data])).toEqual([
        [
          String(first.accountId),
          {
            account: { id: String(first.accountId), externalId: null },
            ...hour,
            admitted: 4,
            refused: 1,
            units: 6,
            routes: [
              { route: 'GET /v1/pets', admitted: 3, refused: 0, units: 3 },
              { route: 'GET /v1/pets/{petId}', admitted: 1, refused: 1, units: 3 }
            ]
          }
        ],
        [
          String(other.accountId),
          {
            account: { id: String(other.accountId), externalId: null },
            ...hour,
            admitted: 1,
            refused: 0,
            units: 1,
            routes: [{ route: 'GET /v1/pets', admitted: 1, refused: 0, units: 1 }]
          }
        ]
      ])

      // 12:01: 11:00's hour, one request of one account.
      await clock.set(TEN + 121 * 60_000)
      expect((await d!.housekeeping.run()).usageReports).toBe(1)
      expect((await reported()).at(-1)!.data).toMatchObject({
        account: { id: String(other.accountId) },
        hourStart: '2027-03-15T11:00:00Z',
        admitted: 1,
        routes: [{ route: 'GET /v1/pets', admitted: 1, refused: 0, units: 1 }]
      })
    } finally {
      await closeAll([c!, d!])
    }
  })

  it('is sent again with the same webhook-id after a failed delivery', async () => {
    const event = (await reported())[0]!
    const attempts: string[] = []
    const receiver = createServer((request, response) => {
      attempts.push(String(request.headers['webhook-id']))
      request.resume()
      response.writeHead(attempts.length === 1 ? 500 : 204).end()
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`
    await sql`UPDATE webhook_endpoints SET url = ${url}`.execute(database.db)
    await sql`DELETE FROM webhook_deliveries WHERE event_id <> ${event.id}`.execute(database.db)
    const dedicated = connectDedicated({ url: database.url, max: 2, queryTimeoutMs: 10_000, applicationName: 'test' })
    const worker = startWebhookWorker({
      db: dedicated.db,
      policy: { allowHttp: true, allowedCidrs: [] },
      timeoutMs: 2000,
      concurrency: 1,
      pollMs: 50,
      log: { warn: () => {}, info: () => {} }
    })
    try {
      await expect.poll(() => attempts.length, { timeout: 10_000 }).toBe(1)
      // Its retry is due now, as the database's clock would make it later.
      await sql`UPDATE webhook_deliveries SET next_attempt_at = clock_timestamp() WHERE status = 'pending'`.execute(
        database.db
      )
      await expect.poll(() => attempts.length, { timeout: 10_000 }).toBe(2)
      expect(attempts).toEqual([`evt_${event.id}`, `evt_${event.id}`])
    } finally {
      await worker.stop()
      await dedicated.close()
      await new Promise((resolve) => receiver.close(resolve))
    }
  })
})
