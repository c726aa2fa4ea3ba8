import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config.js'
import { loggerOptions, scrubSecrets } from '../src/logging.js'
import { createTestApp, issueTestKey, logCapture } from './helpers/app.js'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'

let database: TestDatabase
let app: FastifyInstance
const logs = logCapture()

beforeAll(async () => {
  database = await createTestDatabase()
  app = await createTestApp(database, { logStream: logs.stream })
})
afterAll(async () => {
  await app.close()
  await database.drop()
})

describe('request logs', () => {
  it('write one line per request: method, route, status, duration, key prefix and request id, no header', async () => {
    const key = await issueTestKey(database)
    const response = await app.inject({
      method: 'GET',
      url: '/v1/pets/1?limit=2',
      headers: {
        authorization: `Bearer ${key}`,
        cookie: 'session=cookie-secret-1',
        'x-api-key': 'xkey-secret-2',
        'user-agent': 'probe-agent/1.0'
      }
    })
    expect(response.statusCode).toBe(404)
    const id = response.headers['x-request-id']
    const lines = logs.lines.filter((line) => line.reqId === id)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toEqual({
      level: 30,
      time: expect.any(Number),
      pid: process.pid,
      hostname: expect.any(String),
      reqId: id,
      method: 'GET',
      route: '/v1/pets/:petId',
      status: 404,
      responseTime: expect.any(Number),
      keyPrefix: key.slice(0, 12),
      remoteAddress: '127.0.0.1',
      msg: 'request completed'
    })
    for (const secret of [key, 'cookie-secret-1', 'xkey-secret-2', 'probe-agent']) {
      expect(logs.text()).not.toContain(secret)
    }
  })

  it('never write a key sent in the query string or in the path of an unmatched route', async () => {
    const key = await issueTestKey(database)
    const secret = key.slice(13)
    const inQuery = await app.inject({ method: 'GET', url: `/v1/pets?access_token=${key}&limit=1` })
    expect(inQuery.statusCode).toBe(401)
    const unmatched = await app.inject({ method: 'GET', url: `/v1/nowhere/${key}?access_token=${key}` })
    expect(unmatched.statusCode).toBeGreaterThanOrEqual(400)
    const routes = logs.lines
      .filter((line) => [inQuery, unmatched].some((response) => response.headers['x-request-id'] === line.reqId))
      .map((line) => line.route)
    expect(routes).toEqual(['/v1/pets', `/v1/nowhere/${key.slice(0, 12)}_[redacted]`])
    expect(logs.text()).not.toContain(secret)
    expect(logs.text()).not.toContain('access_token')
  })

  it("never write an operator's token in the path of an unmatched route", async () => {
    const token = `aso_Op3rat0r_${'S3cret'.repeat(5)}xy`
    const unmatched = await app.inject({ method: 'GET', url: `/admin/v1/operators/${token}/nowhere` })
    expect(unmatched.statusCode).toBe(404)
    const routes = logs.lines
      .filter((line) => line.reqId === unmatched.headers['x-request-id'])
      .map((line) => line.route)
    expect(routes).toEqual([`/admin/v1/operators/aso_Op3rat0r_[redacted]/nowhere`])
    expect(logs.text()).not.toContain('S3cretS3cret')
  })

  it('are JSON with a level and a time outside development', () => {
    const line = logs.lines.find((entry) => entry.msg === 'request completed')!
    expect(line).toMatchObject({ level: 30, reqId: expect.any(String) })
    expect(typeof line.time).toBe('number')
  })
})

describe('request loggers', () => {
  it('write nothing for a quiet request at warn, and tag the lines of a failing one with its request id', async () => {
    const own = await createTestDatabase()
    const quiet = logCapture()
    const warnApp = await createTestApp(own, { logStream: quiet.stream, env: { LOG_LEVEL: 'warn' } })
    try {
      const key = await issueTestKey(own)
      const ok = await warnApp.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })
      expect(ok.statusCode).toBe(200)
      expect(quiet.lines).toEqual([])

      await sql`ALTER TABLE pets RENAME COLUMN category_id TO category`.execute(own.db)
      const failed = await warnApp.inject({
        method: 'GET',
        url: '/v1/pets',
        headers: { authorization: `Bearer ${key}` }
      })
      expect(failed.statusCode).toBe(500)
      expect(quiet.lines).toHaveLength(1)
      expect(quiet.lines[0]).toMatchObject({ level: 50, reqId: failed.headers['x-request-id'] })
    } finally {
      await warnApp.close()
      await own.drop()
    }
  })

  it("keep to a route's own log level: the health probes log nothing at info", async () => {
    const before = logs.lines.length
    const response = await app.inject({ method: 'GET', url: '/health/live' })
    expect(response.statusCode).toBe(200)
    expect(logs.lines.slice(before)).toEqual([])
    await app.inject({ method: 'GET', url: '/v1/pets' })
    expect(logs.lines.slice(before).map((line) => line.msg)).toEqual(['request completed'])
  })
})

describe('redaction', () => {
  it('censors secret-named fields at any of the first three levels and credential headers', () => {
    app.log.info(
      {
        key: 'ask_live_top',
        apiKey: 'ask_live_camel',
        secret: 's3cr3t-top',
        password: 'pw-top',
        token: 'tok-top',
        user: { password: 'pw-nested', name: 'visible-name' },
        plan: { limits: { secret: 's3cr3t-deep', key: 'ask_live_deep' } },
        upstream: { headers: { authorization: 'Bearer ask_live_header', 'x-api-key': 'ask_live_xheader' } },
        config: { DATABASE_URL: 'postgres://app:db-pass-1@db:5432/app' }
      },
      'redaction probe'
    )
    const line = logs.lines.find((entry) => entry.msg === 'redaction probe')!
    expect(line).toMatchObject({
      key: '[redacted]',
      apiKey: '[redacted]',
      secret: '[redacted]',
      password: '[redacted]',
      token: '[redacted]',
      user: { password: '[redacted]', name: 'visible-name' },
      plan: { limits: { secret: '[redacted]', key: '[redacted]' } },
      upstream: { headers: { authorization: '[redacted]', 'x-api-key': '[redacted]' } },
      config: { DATABASE_URL: '[redacted]' }
    })
    for (const secret of ['ask_live', 's3cr3t', 'pw-top', 'pw-nested', 'tok-top', 'db-pass-1']) {
      expect(logs.text()).not.toContain(secret)
    }
  })

  it('masks the password of a database URL inside an error message and stack', () => {
    const error = new Error('connect failed for postgres://animal:hunter2-db@10.0.0.5:5432/animal_store')
    app.log.error({ err: error }, 'connection probe')
    const line = logs.lines.find((entry) => entry.msg === 'connection probe') as {
      err: { message: string; stack: string }
    }
    expect(line.err.message).toBe('connect failed for postgres://animal:[redacted]@10.0.0.5:5432/animal_store')
    expect(line.err.stack).toContain('postgres://animal:[redacted]@10.0.0.5')
    expect(logs.text()).not.toContain('hunter2-db')
  })

  it('scrubs credentials from any URL in free text and leaves other text alone', () => {
    expect(scrubSecrets('a postgresql://u:p%40ss@h/db and https://x:y@example.test/path')).toBe(
      'a postgresql://u:[redacted]@h/db and https://x:[redacted]@example.test/path'
    )
    expect(scrubSecrets('postgres://host:5432/db, user@example.test')).toBe(
      'postgres://host:5432/db, user@example.test'
    )
  })
})

describe('output format', () => {
  const config = (NODE_ENV: string) => loadConfig({ NODE_ENV, LOG_LEVEL: 'debug' })

  it('is pino-pretty only in development at a terminal', () => {
    expect(loggerOptions(config('development'), { isTTY: true }).transport).toMatchObject({ target: 'pino-pretty' })
    expect(loggerOptions(config('development'), { isTTY: false }).transport).toBeUndefined()
    expect(loggerOptions(config('production'), { isTTY: true }).transport).toBeUndefined()
    expect(loggerOptions(config('test'), { isTTY: true }).transport).toBeUndefined()
    expect(loggerOptions(config('production'), { isTTY: false }).level).toBe('debug')
  })
})
