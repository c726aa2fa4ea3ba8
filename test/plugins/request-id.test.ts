import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, issueTestKey, logCapture } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

let database: TestDatabase
let authorization: string
const apps: FastifyInstance[] = []

beforeAll(async () => {
  database = await createTestDatabase()
  authorization = `Bearer ${await issueTestKey(database)}`
})
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()))
  await database.drop()
})

async function appWith(env: Record<string, string> = {}, logStream?: ReturnType<typeof logCapture>['stream']) {
  const app = await createTestApp(database, { env, logStream })
  apps.push(app)
  return app
}

describe('X-Request-Id', () => {
  it('is generated when none is sent and echoed on success, validation errors, 404s and malformed URLs', async () => {
    const app = await appWith()
    const responses = await Promise.all([
      app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization } }),
      app.inject({ method: 'GET', url: '/v1/pets?limit=0', headers: { authorization } }),
      app.inject({ method: 'GET', url: '/v1/no-such-thing', headers: { authorization } }),
      app.inject({ method: 'GET', url: '/nowhere', headers: { authorization } }),
      app.inject({ method: 'GET', url: '/v1/pets/%E0%A4%A', headers: { authorization } }),
      app.inject({ method: 'GET', url: '/health/live', headers: { authorization } })
    ])
    expect(responses.map((response) => response.statusCode)).toEqual([200, 400, 404, 404, 400, 200])
    const ids = responses.map((response) => response.headers['x-request-id'])
    for (const id of ids) expect(id).toMatch(UUID)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('ignores the header when TRUST_PROXY does not trust the sender', async () => {
    const untrusting = await appWith({ TRUST_PROXY: 'false' })
    const elsewhere = await appWith({ TRUST_PROXY: '10.0.0.0/8' })
    for (const app of [untrusting, elsewhere]) {
      const response = await app.inject({
        method: 'GET',
        url: '/v1/pets',
        headers: { authorization, 'x-request-id': 'lb-1234' }
      })
      expect(response.headers['x-request-id']).toMatch(UUID)
    }
  })

  it('keeps the load balancer’s id when TRUST_PROXY trusts it, on errors too', async () => {
    for (const trust of ['loopback', '127.0.0.1', '127.0.0.0/8, 10.0.0.1']) {
      const app = await appWith({ TRUST_PROXY: trust })
      const ok = await app.inject({
        method: 'GET',
        url: '/v1/pets',
        headers: { authorization, 'x-request-id': 'lb-5f2c9a' }
      })
      expect(ok.headers['x-request-id']).toBe('lb-5f2c9a')
      const missing = await app.inject({
        method: 'GET',
        url: '/v1/pets/77',
        headers: { authorization, 'x-request-id': 'lb-77' }
      })
      expect(missing.statusCode).toBe(404)
      expect(missing.headers['x-request-id']).toBe('lb-77')
    }
  })

  it('replaces a malformed id even from a trusted proxy', async () => {
    const app = await appWith({ TRUST_PROXY: 'loopback' })
    for (const offered of ['a'.repeat(129), 'two words', 'inject"{}', '']) {
      const response = await app.inject({
        method: 'GET',
        url: '/v1/pets',
        headers: { authorization, 'x-request-id': offered }
      })
      expect(response.headers['x-request-id']).toMatch(UUID)
    }
  })

  it('is on every log line of the request', async () => {
    const logs = logCapture()
    const app = await appWith({ TRUST_PROXY: 'loopback' }, logs.stream)
    const response = await app.inject({
      method: 'GET',
      url: '/v1/pets/12',
      headers: { authorization, 'x-request-id': 'trace-abc' }
    })
    expect(response.statusCode).toBe(404)
    const requestLines = logs.lines.filter((line) => line.route !== undefined)
    expect(requestLines.map((line) => [line.msg, line.reqId])).toEqual([['request completed', 'trace-abc']])
  })
})
