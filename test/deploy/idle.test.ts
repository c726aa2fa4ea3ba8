import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer } from '../../harness/processes.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { startRoundTripCounter } from '../helpers/round-trip-counter.js'

// An instance nobody calls: the change channel's heartbeat every 2 s, the webhook worker's look at
// the outbox every 30 s (it is woken by an announcement otherwise), housekeeping every ten minutes.
// Counted on the wire: every query the instance's sessions sent and PostgreSQL answered, from the
// end of one of the worker's idle looks to the end of the next, 30 s later.
const IDLE_LOOK_MS = 30_000
/** The statement that ends a look of an idle worker: when the next delivery falls due. */
const endsIdleLook = (text: string) => text.includes('min(head.next_attempt_at)')

let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(async () => {
  await database?.drop()
})

describe('an idle instance', () => {
  it('sends PostgreSQL at most one query a second', { timeout: 120_000 }, async () => {
    const url = new URL(database.url)
    const counter = await startRoundTripCounter({ host: url.hostname, port: Number(url.port) })
    url.hostname = '127.0.0.1'
    url.port = String(counter.port)
    url.searchParams.set('sslmode', 'disable')
    const server = await startServer({ DATABASE_URL: url.toString() })
    const idleLooks = () => counter.sent().filter(endsIdleLook).length
    try {
      // Past start-up's own statements: the worker, listening, found nothing to send and idles.
      await expect.poll(idleLooks, { timeout: 10_000, interval: 20 }).toBeGreaterThanOrEqual(1)
      const from = Date.now()
      const before = counter.answered()
      const looks = idleLooks()
      await expect.poll(idleLooks, { timeout: IDLE_LOOK_MS + 10_000, interval: 20 }).toBe(looks + 1)
      const seconds = (Date.now() - from) / 1000
      const during = counter.answered() - before
      expect(seconds).toBeGreaterThanOrEqual((IDLE_LOOK_MS - 1000) / 1000)
      expect(during, `${during} queries in ${seconds} s`).toBeLessThanOrEqual(seconds)
      // The relay saw the instance at all: the heartbeat alone is 15 in 30 s.
      expect(during).toBeGreaterThanOrEqual(10)
    } finally {
      expect(await server.stop()).toBe(0)
      await counter.close()
    }
  })
})
