import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../harness/processes.js'
import { startOtlpReceiver, type ReceivedSpan } from '../harness/otlp-receiver.js'
import { freePort } from '../src/db/embedded.js'
import { issueApiKey } from '../src/repositories/api-keys.js'
import { ADMIN_TOKEN } from './helpers/app.js'
import { holdDatabaseClock } from './helpers/traffic.js'
import { createTestDatabase, whilePetsLocked, type TestDatabase } from './helpers/database.js'
import { startWebhookReceiver } from './helpers/webhook-receiver.js'

// The built server with tracing on, sending to a real OTLP/HTTP endpoint in JSON.
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>
let database: TestDatabase
let server: RunningServer
let key: string
let oneAMinute: string
let adminUrl: string

const SERVER = 2
const ERROR = 2

beforeAll(async () => {
  receiver = await startOtlpReceiver()
  database = await createTestDatabase()
  await database.pool.query(`INSERT INTO pets (name, category_id, status) VALUES ('Rex', 1, 'available')`)
  key = (await issueApiKey(database.db, { plan: 'pro' })).key
  oneAMinute = (await issueApiKey(database.db, { plan: 'free', limits: { perMinute: 1, perDay: 1000 } })).key
  const adminPort = await freePort()
  adminUrl = `http://127.0.0.1:${adminPort}/admin/v1`
  server = await startServer({
    DATABASE_URL: database.url,
    ADMIN_TOKEN,
    ADMIN_PORT: String(adminPort),
    WEBHOOKS_ALLOW_HTTP: 'true',
    // A query held by a lock fails at this bound with 503.
    DATABASE_TIMEOUT_MS: '500',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'animal-store-traced',
    OTEL_TRACES_SAMPLER: 'parentbased_always_on',
    OTEL_BSP_SCHEDULE_DELAY: '50'
  })
})
afterAll(async () => {
  await server?.stop()
  await database?.drop()
  await receiver?.close()
})

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** The server span of the request whose caller sent `traceId`, once the exporter has sent it. */
async function serverSpanOf(traceId: string): Promise<ReceivedSpan> {
  await expect
    .poll(() => receiver.spans.find((span) => span.traceId === traceId && span.kind === SERVER), { timeout: 10_000 })
    .toBeDefined()
  return receiver.spans.find((span) => span.traceId === traceId && span.kind === SERVER)!
}

const childrenOf = (parent: ReceivedSpan) => receiver.spans.filter((span) => span.parentSpanId === parent.spanId)
const queryText = (span: ReceivedSpan) =>
  String(span.attributes['db.query.text'] ?? span.attributes['db.statement'] ?? '')

/** A W3C traceparent of a sampled trace this caller started. */
function callerContext() {
  const traceId = randomBytes(16).toString('hex')
  const spanId = randomBytes(8).toString('hex')
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` }
}

describe('tracing with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  it("sends a keyed GET /v1/pets as a server span under the caller's traceparent, its statements as children", async () => {
    const caller = callerContext()
    const response = await fetch(`${server.url}/pets?limit=5&status=available`, {
      headers: { ...bearer(key), traceparent: caller.traceparent }
    })
    expect(response.status).toBe(200)

    const span = await serverSpanOf(caller.traceId)
    expect(span.parentSpanId).toBe(caller.spanId)
    expect(span.name).toBe('GET /v1/pets')
    expect(span.service).toBe('animal-store-traced')
    expect(span.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/v1/pets',
      'http.response.status_code': 200,
      'url.path': '/v1/pets',
      'ratelimit.outcome': 'admitted'
    })
    expect(span.attributes['ratelimit.policy']).toMatch(/"minute";q=\d+;w=60/)
    expect(span.status.code ?? 0).toBe(0)

    // The key's first request is found and counted in one statement, then the page is read.
    await expect.poll(() => childrenOf(span).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2)
    const texts = childrenOf(span).map(queryText)
    expect(texts.some((text) => /count_units|api_keys/.test(text))).toBe(true)
    expect(texts.some((text) => /from "pets"/i.test(text))).toBe(true)
    for (const child of childrenOf(span)) expect(child.traceId).toBe(caller.traceId)
  })

  it('leaves the status of a 429 unset and names the refusal', async () => {
    await holdDatabaseClock(database)
    const first = callerContext()
    expect(
      (await fetch(`${server.url}/pets`, { headers: { ...bearer(oneAMinute), traceparent: first.traceparent } })).status
    ).toBe(200)
    const second = callerContext()
    const refused = await fetch(`${server.url}/pets`, {
      headers: { ...bearer(oneAMinute), traceparent: second.traceparent }
    })
    expect(refused.status).toBe(429)

    const span = await serverSpanOf(second.traceId)
    expect(span.name).toBe('GET /v1/pets')
    expect(span.attributes).toMatchObject({ 'http.response.status_code': 429, 'ratelimit.outcome': 'rate_limited' })
    expect(span.attributes['ratelimit.policy']).toContain('"minute";q=1;w=60')
    expect(span.status.code ?? 0).toBe(0)
  })

  it('sets Error on the span of a 5xx', async () => {
    const caller = callerContext()
    await whilePetsLocked(database, 'ACCESS EXCLUSIVE', async () => {
      const response = await fetch(`${server.url}/pets`, {
        headers: { ...bearer(key), traceparent: caller.traceparent }
      })
      expect(response.status).toBe(503)
    })
    const span = await serverSpanOf(caller.traceId)
    expect(span.attributes['http.response.status_code']).toBe(503)
    expect(span.status.code).toBe(ERROR)
  })

  it("starts a trace of its own for a request without a traceparent, and never records a key or a query's values", async () => {
    const secret = 'a-secret-in-the-query'
    const before = receiver.spans.length
    const response = await fetch(`${server.url}/pets?limit=2&cursor=${secret}`, { headers: bearer(key) })
    expect(response.status).toBe(400)
    await expect
      .poll(() => receiver.spans.slice(before).find((span) => span.kind === SERVER), { timeout: 10_000 })
      .toBeDefined()
    const span = receiver.spans.slice(before).find((candidate) => candidate.kind === SERVER)!
    expect(span.parentSpanId).toBeUndefined()
    expect(span.attributes['url.path']).toBe('/v1/pets')

    const recorded = JSON.stringify(receiver.spans)
    expect(recorded).not.toContain(secret)
    expect(recorded).not.toContain(key)
    expect(recorded).not.toContain(oneAMinute)
    expect(recorded).not.toContain('Bearer')
  })

  it('passes the traceparent of the request that made a webhook event on to its delivery', async () => {
    const receiver = await startWebhookReceiver()
    try {
      const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }
      const registered = await fetch(`${adminUrl}/webhooks`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ url: receiver.url, events: ['key.created'] })
      })
      expect(registered.status).toBe(201)
      receiver.trust(((await registered.json()) as { secret: string }).secret)

      const caller = callerContext()
      const created = await fetch(`${adminUrl}/keys`, {
        method: 'POST',
        headers: { ...admin, traceparent: caller.traceparent },
        body: JSON.stringify({ plan: 'free', name: 'traced' })
      })
      expect(created.status).toBe(201)
      const span = await serverSpanOf(caller.traceId)
      expect(span.name).toBe('POST /admin/v1/keys')

      await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(1)
      expect(receiver.received[0]!.type).toBe('key.created')
      expect(receiver.received[0]!.traceparent).toBe(`00-${caller.traceId}-${span.spanId}-01`)
    } finally {
      await receiver.close()
    }
  })
})
