import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer } from '../../harness/processes.js'
import { freePort } from '../../src/db/embedded.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { startRoundTripCounter } from '../helpers/round-trip-counter.js'

// An instance nobody calls: the change channel's heartbeat every 2 s, the webhook worker's look at
// the outbox every 30 s (it is woken by an announcement otherwise), housekeeping every ten minutes.
// Counted on the wire: every query the instance's sessions sent and PostgreSQL answered.
const WINDOW_MS = 30_000

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
    const server = await startServer({ PORT: String(await freePort()), DATABASE_URL: url.toString() })
    try {
      // Past start-up's own statements.
      await new Promise((resolve) => setTimeout(resolve, 3_000))
      const before = counter.answered()
      await new Promise((resolve) => setTimeout(resolve, WINDOW_MS))
      const during = counter.answered() - before
      expect(during, `${during} queries in ${WINDOW_MS / 1000} s`).toBeLessThanOrEqual(WINDOW_MS / 1000)
      // The relay saw the instance at all: the heartbeat alone is 15 in 30 s.
      expect(during).toBeGreaterThanOrEqual(10)
    } finally {
      expect(await server.stop()).toBe(0)
      await counter.close()
    }
  })
})
