import { connect, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inject } from 'vitest'
import { createTestApp, issueTestKey } from '../helpers/app.js'
import { createTestDatabase, lockWaiters, type TestDatabase } from '../helpers/database.js'

let database: TestDatabase

beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(async () => {
  await database.drop()
})

async function asAdmin(statement: string) {
  const client = new pg.Client({ connectionString: inject('adminDatabaseUrl') })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

/** Refuses every new connection to the test database and ends the open ones, as an outage would. */
async function cutDatabaseOff() {
  await asAdmin(`ALTER DATABASE ${database.name} ALLOW_CONNECTIONS false`)
  await asAdmin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${database.name}'`)
}

/** A gauge's value as a scrape would read it now. */
async function gauge(app: FastifyInstance, name: string) {
  const metric = await app.metrics.registry.getSingleMetric(name)!.get()
  return metric.values[0]?.value
}

async function restoreDatabase() {
  await asAdmin(`ALTER DATABASE ${database.name} ALLOW_CONNECTIONS true`)
}

describe('health endpoints', () => {
  let app: FastifyInstance
  beforeAll(async () => {
    app = await createTestApp(database, { env: { DATABASE_TIMEOUT_MS: '1000' } })
  })
  afterAll(async () => {
    await restoreDatabase()
    await app.close()
  })

  it('GET /health/live answers 200 JSON, outside /v1 and with no credentials', async () => {
    const response = await app.inject({ method: 'GET', url: '/health/live' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(response.json()).toEqual({ status: 'ok' })
    const key = await issueTestKey(database)
    const underV1 = await app.inject({
      method: 'GET',
      url: '/v1/health/live',
      headers: { authorization: `Bearer ${key}` }
    })
    expect(underV1.statusCode).toBe(404)
  })

  it('GET /health/ready answers 200 while the database answers', async () => {
    const response = await app.inject({ method: 'GET', url: '/health/ready' })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ status: 'ok' })
  })

  it('answers another method on either probe with 405 and an Allow header', async () => {
    for (const url of ['/health/live', '/health/ready']) {
      const response = await app.inject({ method: 'POST', url, payload: { status: 'ok' } })
      expect(response.statusCode).toBe(405)
      expect(response.headers.allow).toBe('GET, HEAD')
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(response.json()).toEqual({
        code: 'method_not_allowed',
        message: 'POST is not allowed here; use GET, HEAD',
        status: 405
      })
    }
  })

  it('turns 503 when the database stops answering, and back to 200 when it returns', async () => {
    expect(await gauge(app, 'animal_store_ready')).toBe(1)
    expect(await gauge(app, 'animal_store_db_up')).toBe(1)
    await cutDatabaseOff()
    try {
      const down = await app.inject({ method: 'GET', url: '/health/ready' })
      // The gauges say what the last probe found.
      expect(await gauge(app, 'animal_store_ready')).toBe(0)
      expect(await gauge(app, 'animal_store_db_up')).toBe(0)
      expect(down.statusCode).toBe(503)
      expect(down.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(down.headers['retry-after']).toBe('5')
      expect(down.json()).toEqual({
        code: 'service_unavailable',
        message: 'The service cannot reach its database; retry later',
        status: 503
      })
      // The process itself is still alive.
      expect((await app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200)
    } finally {
      await restoreDatabase()
    }
    const up = await app.inject({ method: 'GET', url: '/health/ready' })
    expect(up.statusCode).toBe(200)
    expect(up.json()).toEqual({ status: 'ok' })
    expect(await gauge(app, 'animal_store_ready')).toBe(1)
    expect(await gauge(app, 'animal_store_db_up')).toBe(1)
  })
})

/** Sends raw bytes on a socket and collects everything the server answers until it closes. */
function rawConnection(port: number) {
  const socket: Socket = connect(port, '127.0.0.1')
  let received = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => (received += chunk))
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(received)))
  const opened = new Promise<void>((resolve) => socket.once('connect', () => resolve()))
  return { socket, opened, closed }
}

describe('graceful shutdown', () => {
  it('turns readiness 503 once closing starts, lets in-flight requests finish and refuses new connections', async () => {
    const app = await createTestApp(database)
    await app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = app.server.address() as AddressInfo

    // A request stuck behind a table lock is in flight when shutdown begins.
    const key = await issueTestKey(database)
    const locker = await database.pool.connect()
    await locker.query('BEGIN')
    await locker.query('LOCK TABLE pets IN ACCESS EXCLUSIVE MODE')
    const inFlight = fetch(`http://127.0.0.1:${port}/v1/pets`, { headers: { authorization: `Bearer ${key}` } })
    // A load balancer's connection that has started, but not finished, sending its next request.
    const probe = rawConnection(port)
    await probe.opened
    probe.socket.write('GET /health/ready HTTP/1.1\r\nHost: replica\r\n')
    await lockWaiters(database)

    const closing = app.close()
    // The database still answers; the instance is not ready all the same.
    await expect.poll(() => gauge(app, 'animal_store_ready')).toBe(0)
    expect(await gauge(app, 'animal_store_db_up')).toBe(1)
    probe.socket.write('\r\n')
    const answer = await probe.closed
    expect(answer).toMatch(/^HTTP\/1\.1 503 /)
    expect(answer.toLowerCase()).toContain('connection: close')
    expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).toBe(
      JSON.stringify({ code: 'service_unavailable', message: 'The service is shutting down', status: 503 })
    )

    const refused = await fetch(`http://127.0.0.1:${port}/health/live`).then(
      () => 'accepted',
      (error: Error & { cause?: { code?: string } }) => error.cause?.code
    )
    expect(refused).toBe('ECONNREFUSED')

    let closed = false
    void closing.then(() => (closed = true))
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(closed).toBe(false)

    await locker.query('COMMIT')
    locker.release()
    const response = await inFlight
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual([])
    expect(response.headers.get('connection')).toBe('close')
    await closing
    expect((await sql<{ n: number }>`SELECT 1 AS n`.execute(database.db)).rows).toEqual([{ n: 1 }])
  })
})
