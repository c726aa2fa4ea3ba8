import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { createTestApp, issueTestKey, manualClock, useTestApp } from '../helpers/app.js'
import { bearer, statuses } from '../helpers/traffic.js'

const context = useTestApp()

const countRows = async () =>
  Number(
    (await sql<{ n: string }>`SELECT count(*) AS n FROM rate_limit_counters`.execute(context.database.db)).rows[0]!.n
  )

describe('requests without a valid key', () => {
  it('from 20,000 addresses behind a trusted proxy write nothing to the database, and keyed traffic alongside is served', async () => {
    const app = await createTestApp(context.database, {
      env: { TRUST_PROXY: 'loopback', UNAUTHENTICATED_PER_SECOND: '1000000', OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0' }
    })
    try {
      const key = await issueTestKey(context.database)
      expect((await app.inject({ method: 'GET', url: '/v1/pets?limit=1', headers: bearer(key) })).statusCode).toBe(200)
      const before = await countRows()
      const flood: Promise<{ statusCode: number }>[] = []
      const keyed: Promise<{ statusCode: number }>[] = []
      for (let i = 0; i < 20_000; i++) {
        const address = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
        const authorization = i % 2 === 0 ? {} : { authorization: 'Bearer ask_made_up' }
        flood.push(
          app.inject({ method: 'GET', url: '/v1/pets', headers: { 'x-forwarded-for': address, ...authorization } })
        )
        if (i % 100 === 0) keyed.push(app.inject({ method: 'GET', url: '/v1/pets?limit=1', headers: bearer(key) }))
        if (flood.length % 200 === 0) {
          await Promise.all(flood.slice(-200))
          // Injected requests never pass through the poll phase: let the database's answers in, as sockets would.
          await new Promise((resolve) => setImmediate(resolve))
        }
      }
      expect(statuses(await Promise.all(flood))).toEqual({ 401: 20_000 })
      const served = await Promise.all(keyed)
      expect(
        statuses(served),
        (served.find((r) => r.statusCode !== 200) as { body?: string } | undefined)?.body
      ).toEqual({ 200: 200 })
      // The key's row was there before; the addresses count nowhere in the database.
      expect(await countRows()).toBe(before)
    } finally {
      await app.close()
    }
  }, 120_000)

  it("past the instance's ceiling per second are shed with 429 and Retry-After, while keyed requests are served", async () => {
    const clock = manualClock(Date.parse('2027-02-01T08:00:00.500Z'))
    const app = await createTestApp(context.database, { clock, env: { UNAUTHENTICATED_PER_SECOND: '3' } })
    try {
      const key = await issueTestKey(context.database)
      const keyless = (address: string) => app.inject({ method: 'GET', url: '/v1/pets', remoteAddress: address })
      const first = []
      for (const address of ['192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.4']) first.push(await keyless(address))
      expect(first.map((response) => response.statusCode)).toEqual([401, 401, 401, 429])
      const shed = first[3]!
      expect(shed.json()).toEqual({
        code: 'rate_limited',
        message: 'Too many requests without a valid API key; retry in 1 s',
        status: 429
      })
      expect(shed.headers['retry-after']).toBe('1')
      // Shed before its address is counted: 192.0.2.4 still has its whole budget.
      expect((await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key) })).statusCode).toBe(200)

      clock.advance(500)
      const next = await keyless('192.0.2.4')
      expect(next.statusCode).toBe(401)
      expect(next.headers['x-ratelimit-remaining']).toBe('59')
    } finally {
      await app.close()
    }
  })
})
