import { sql } from 'kysely'
import { describe, expect, it, vi } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { ApiKeyCache } from '../../src/auth/key-cache.js'
import { freePort } from '../../src/db/embedded.js'
import { createTestApp, issueTestKey, manualClock, useTestApp } from '../helpers/app.js'
import { bearer, statuses } from '../helpers/traffic.js'

const context = useTestApp()

const heldNow = async (app: FastifyInstance) =>
  (await app.metrics.registry.getSingleMetric('animal_store_shed_held')!.get()).values[0]!.value

async function scrape(url: string) {
  const response = await fetch(url)
  expect(response.status).toBe(200)
  return response.text()
}

const countRows = async () =>
  Number((await sql<{ n: string }>`SELECT count(*) AS n FROM limit_counters`.execute(context.database.db)).rows[0]!.n)

describe('requests without a valid key', () => {
  it('from 20,000 addresses behind a trusted proxy write nothing to the database, and keyed traffic alongside is served', async () => {
    // The flood keeps this process's event loop busy on purpose: a database answer waiting behind it on
    // a loaded machine is not what this test judges, so neither load shedding nor a 2 s timeout applies.
    const app = await createTestApp(context.database, {
      env: {
        TRUST_PROXY: 'loopback',
        UNAUTHENTICATED_PER_SECOND: '1000000',
        OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
        DATABASE_TIMEOUT_MS: '10000'
      }
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

  it("past the instance's ceiling per second are shed with 429 and Retry-After after the hold, while keyed requests are served", async () => {
    const clock = manualClock(Date.parse('2027-02-01T08:00:00.500Z'))
    const app = await createTestApp(context.database, {
      clock,
      env: { UNAUTHENTICATED_PER_SECOND: '30', SHED_HOLD_MS: '600' }
    })
    try {
      const key = await issueTestKey(context.database)
      const keyless = (address: string) => app.inject({ method: 'GET', url: '/v1/pets', remoteAddress: address })
      const first = []
      for (const address of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) first.push(await keyless(address))
      const started = performance.now()
      first.push(await keyless('192.0.2.4'))
      expect(performance.now() - started).toBeGreaterThanOrEqual(299)
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

      // A thirtieth of a second later the ceiling admits one more.
      await clock.advance(34)
      const next = await keyless('192.0.2.4')
      expect(next.statusCode).toBe(401)
      expect(next.headers['x-ratelimit-remaining']).toBe('59')
    } finally {
      await app.close()
    }
  })

  it('with made-up well-formed keys past the ceiling are shed without a key lookup', async () => {
    const clock = manualClock(Date.parse('2027-02-01T08:00:00.500Z'))
    const app = await createTestApp(context.database, {
      clock,
      env: { UNAUTHENTICATED_PER_SECOND: '20', UNAUTHENTICATED_PER_MINUTE: '1000', SHED_HOLD_MS: '0' }
    })
    const lookUp = vi.spyOn(ApiKeyCache.prototype, 'lookUp')
    try {
      const made = (i: number) => `ask_${String(i).padStart(8, '0')}_${'x'.repeat(24)}${String(i).padStart(8, '0')}`
      const answers = []
      for (let i = 0; i < 300; i++) {
        answers.push(
          await app.inject({ method: 'GET', url: '/v1/pets', remoteAddress: '192.0.2.50', headers: bearer(made(i)) })
        )
      }
      const counted = statuses(answers)
      expect(counted[401]! + counted[429]!).toBe(300)
      expect(counted[429]).toBeGreaterThan(250)
      // Only what the ceiling admitted may cost a lookup, never what it shed.
      expect(lookUp.mock.calls.length).toBeLessThanOrEqual(counted[401]!)
    } finally {
      lookUp.mockRestore()
      await app.close()
    }
  })

  describe('without a token, over a real socket', () => {
    /** A listening app whose ceiling admits one request and never refills (the clock stands still). */
    async function listening(env: Record<string, string>) {
      const app = await createTestApp(context.database, {
        clock: manualClock(Date.parse('2027-02-01T08:00:00.000Z')),
        env: { UNAUTHENTICATED_PER_SECOND: '10', METRICS_PORT: String(await freePort()), ...env }
      })
      const origin = await app.listen({ host: '127.0.0.1', port: 0 })
      const metricsUrl = (await app.metrics.listen())!
      return { app, origin, metricsUrl }
    }
    const timed = async (send: Promise<Response>) => {
      const started = performance.now()
      const response = await send
      return { response, body: await response.text(), ms: performance.now() - started }
    }
    const headersOf = (headers: Record<string, unknown>) =>
      Object.keys(headers)
        .map((name) => name.toLowerCase())
        .filter((name) => !['date', 'connection', 'keep-alive'].includes(name))
        .sort()

    it('are shed before routing after the hold, with the same status, body and headers as the guard sheds', async () => {
      // Held for 1 to 2 s: time for a keyed request and a scrape on a busy machine.
      const { app, origin, metricsUrl } = await listening({ SHED_HOLD_MS: '2000' })
      try {
        const key = await issueTestKey(context.database)
        expect((await fetch(`${origin}/v1/pets`)).status).toBe(401)

        let answeredShed = false
        const shedding = timed(fetch(`${origin}/v1/pets?limit=1`)).finally(() => (answeredShed = true))
        // While it is held, keyed requests are served, and the metrics show it held.
        await vi.waitFor(async () => expect(await heldNow(app)).toBe(1))
        const keyed = await timed(fetch(`${origin}/v1/pets?limit=1`, { headers: bearer(key) }))
        expect(keyed.response.status).toBe(200)
        expect(answeredShed).toBe(false)
        expect(await scrape(metricsUrl)).toContain('\nanimal_store_shed_held 1\n')

        const shed = await shedding
        expect(shed.ms).toBeGreaterThanOrEqual(999)
        expect(shed.response.status).toBe(429)
        expect(JSON.parse(shed.body)).toEqual({
          code: 'rate_limited',
          message: 'Too many requests without a valid API key; retry in 1 s',
          status: 429
        })
        const headers = Object.fromEntries(shed.response.headers)
        expect(headers).toMatchObject({
          'retry-after': '1',
          'cache-control': 'no-store',
          'content-type': 'application/json; charset=utf-8',
          'x-content-type-options': 'nosniff',
          'content-security-policy': expect.stringContaining("default-src 'none'")
        })
        expect(headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
        // Never routed: Fastify's request count has no 429 for it.
        const routed429 = '\nanimal_store_http_requests_total{method="GET",route="/v1/pets",status="429"} 1\n'
        expect(await scrape(metricsUrl)).not.toContain('status="429"')

        // A token that is no key is shed by the guard once it is known to be none: the same answer.
        const routed = await app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: 'Bearer nope' } })
        expect(routed.statusCode).toBe(429)
        expect(routed.json()).toEqual(JSON.parse(shed.body))
        expect(headersOf(headers)).toEqual(headersOf(routed.headers))

        const metrics = await scrape(metricsUrl)
        expect(metrics).toContain('\nanimal_store_rate_limit_refusals_total{reason="shed"} 2\n')
        expect(metrics).toContain('\nanimal_store_shed_held 0\n')
        expect(metrics).toContain(routed429)
      } finally {
        await app.close()
      }
    })

    it('past SHED_HOLD_MAX are answered at once', async () => {
      const { app, origin } = await listening({ SHED_HOLD_MS: '60000', SHED_HOLD_MAX: '2' })
      try {
        expect((await fetch(`${origin}/v1/pets`)).status).toBe(401)
        const held = [fetch(`${origin}/v1/pets`), fetch(`${origin}/v1/pets`)]
        await vi.waitFor(async () => expect(await heldNow(app)).toBe(2))
        const past = await Promise.all([fetch(`${origin}/v1/pets`), fetch(`${origin}/v1/pets`)])
        expect(past.map((response) => response.status)).toEqual([429, 429])
        expect(await heldNow(app)).toBe(2)
        // Closing answers what is held rather than waiting out the hold.
        const closing = app.close()
        expect((await Promise.all(held)).map((response) => response.status)).toEqual([429, 429])
        await closing
      } finally {
        await app.close()
      }
    })
  })
})
