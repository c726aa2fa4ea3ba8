import { readFile } from 'node:fs/promises'
import { connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT } from '../harness/processes.js'
import { ConfigError, loadConfig } from '../src/config.js'
import { createTestApp, issueTestKey } from './helpers/app.js'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'

let database: TestDatabase
let app: FastifyInstance
let port: number
let key: string

beforeAll(async () => {
  database = await createTestDatabase()
  app = await createTestApp(database, {
    env: {
      HEADERS_TIMEOUT_MS: '400',
      REQUEST_TIMEOUT_MS: '800',
      KEEP_ALIVE_TIMEOUT_MS: '300',
      CONNECTION_TIMEOUT_MS: '2000'
    }
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  port = (app.server.address() as AddressInfo).port
  key = await issueTestKey(database)
})
afterAll(async () => {
  await app.close()
  await database.drop()
})

/** Opens a connection, sends `chunks` one every `everyMs`, and reports what came back and when it closed. */
function trickle(chunks: string[], everyMs: number) {
  const started = Date.now()
  const socket = connect(port, '127.0.0.1')
  let received = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => (received += chunk))
  socket.on('error', () => {})
  let sent = 0
  const timer = setInterval(() => {
    if (sent < chunks.length && !socket.destroyed) socket.write(chunks[sent++]!)
  }, everyMs)
  return new Promise<{ received: string; afterMs: number }>((resolve) =>
    socket.on('close', () => {
      clearInterval(timer)
      resolve({ received, afterMs: Date.now() - started })
    })
  )
}

describe('server timeouts', () => {
  it('answers 408 and drops a client that trickles its headers past HEADERS_TIMEOUT_MS', async () => {
    const headerLines = [
      'GET /v1/pets HTTP/1.1\r\n',
      'Host: slow\r\n',
      ...Array.from({ length: 40 }, (_, i) => `X-Slow-${i}: 1\r\n`)
    ]
    const { received, afterMs } = await trickle(headerLines, 100)
    expect(received).toMatch(/^HTTP\/1\.1 408 /)
    expect(afterMs).toBeGreaterThanOrEqual(350)
    expect(afterMs).toBeLessThan(2500)
  })

  it('drops a client that trickles its body past REQUEST_TIMEOUT_MS', async () => {
    const head = `POST /v1/pets HTTP/1.1\r\nHost: slow\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n`
    const { received, afterMs } = await trickle([head, ...Array.from({ length: 39 }, () => ' ')], 100)
    expect(received).toMatch(/^HTTP\/1\.1 408 /)
    expect(afterMs).toBeGreaterThanOrEqual(750)
    expect(afterMs).toBeLessThan(3000)
  })

  it('closes an idle keep-alive connection after KEEP_ALIVE_TIMEOUT_MS', async () => {
    const { received, afterMs } = await trickle(['GET /health/live HTTP/1.1\r\nHost: idle\r\n\r\n'], 10)
    expect(received).toMatch(/^HTTP\/1\.1 200 /)
    expect(afterMs).toBeGreaterThanOrEqual(250)
    // Node may add up to a second of its own to the timeout it announces.
    expect(afterMs).toBeLessThan(2500)
  })

  it('refuses a headers timeout longer than the request timeout, naming both', () => {
    expect(() => loadConfig({ HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '1000' })).toThrow(ConfigError)
    expect(() => loadConfig({ HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '1000' })).toThrow(
      'HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS'
    )
  })

  it('serves by default with idle connections that outlive nginx’s upstream ones, and headers, requests and silence bounded', async () => {
    const nginx = await readFile(join(ROOT, 'deploy/nginx.conf'), 'utf8')
    const upstreamIdle = /upstream animal_store \{[^}]*\n\s*keepalive_timeout (\d+)s;/.exec(nginx)
    expect(upstreamIdle, 'the keepalive_timeout of deploy/nginx.conf’s upstream').not.toBeNull()
    const defaults = loadConfig({})
    const served = await createTestApp(database)
    try {
      const { server } = served
      // nginx, never the app, closes an idle upstream connection: no request is sent on one being closed.
      expect(server.keepAliveTimeout).toBe(defaults.KEEP_ALIVE_TIMEOUT_MS)
      expect(server.keepAliveTimeout).toBeGreaterThan(Number(upstreamIdle![1]) * 1000)
      expect(server.headersTimeout).toBe(defaults.HEADERS_TIMEOUT_MS)
      expect(server.requestTimeout).toBe(defaults.REQUEST_TIMEOUT_MS)
      expect(server.headersTimeout).toBeLessThanOrEqual(server.requestTimeout)
      expect(server.timeout).toBe(defaults.CONNECTION_TIMEOUT_MS)
      expect(server.timeout).toBeGreaterThan(0)
    } finally {
      await served.close()
    }
  })
})
