import { setTimeout as sleep } from 'node:timers/promises'
import type { InjectOptions } from 'fastify'
import { sql } from 'kysely'
import { Registry } from 'prom-client'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { connectDedicated } from '../../src/db/connect.js'
import { parseAllowedCidrs, type AddressPolicy } from '../../src/webhooks/address-policy.js'
import { startWebhookWorker, type WebhookWorker } from '../../src/webhooks/worker.js'
import { createTestApp, manualClock, ADMIN_TOKEN, useTestAdminApp } from '../helpers/app.js'
import { startWebhookReceiver } from '../helpers/webhook-receiver.js'
import { addPlan } from '../helpers/plans.js'
const local: AddressPolicy = { allowHttp: true, allowedCidrs: [] }
const quiet = { warn: () => {}, info: () => {} }
const parseCidr = (text: string) => parseAllowedCidrs(text)[0]!

const context = useTestAdminApp({ admin: { env: { WEBHOOKS_ALLOW_HTTP: 'true' } } })

const call = async (options: InjectOptions, status = 200) => {
  const response = await context.admin.inject({ ...options, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  expect(response.statusCode, response.body).toBe(status)
  return response.statusCode === 204 ? undefined : response.json()
}
const register = (url: string, events: string[]) =>
  call({ method: 'POST', url: '/admin/v1/webhooks', payload: { url, events } }, 201)
const newKey = (name: string) => call({ method: 'POST', url: '/admin/v1/keys', payload: { plan: 'free', name } }, 201)

const workers: { worker: WebhookWorker; close: () => Promise<void> }[] = []
function worker(
  options: { policy?: AddressPolicy; concurrency?: number; registry?: Registry; random?: () => number } = {}
) {
  const dedicated = connectDedicated({
    url: context.database.url,
    max: 4,
    queryTimeoutMs: 10_000,
    applicationName: 'test-webhooks'
  })
  const started = startWebhookWorker({
    db: dedicated.db,
    policy: options.policy ?? local,
    timeoutMs: 2000,
    concurrency: options.concurrency ?? 2,
    pollMs: 50,
    log: quiet,
    registry: options.registry,
    random: options.random
  })
  workers.push({ worker: started, close: dedicated.close })
  return started
}
afterEach(async () => {
  for (const { worker: running, close } of workers.splice(0)) {
    await running.stop()
    await close()
  }
})
beforeEach(async () => {
  await context.database.db.deleteFrom('webhook_endpoints').execute()
})

const delivery = (endpointId: string) =>
  context.database.db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('endpoint_id', '=', BigInt(endpointId))
    .orderBy('event_id')
    .execute()

/** Makes the endpoint's pending deliveries due now, as the database's clock would when their retry came. */
const retryNow = (endpointId: string) =>
  sql`UPDATE webhook_deliveries SET next_attempt_at = clock_timestamp()
    WHERE endpoint_id = ${BigInt(endpointId)} AND status = 'pending'`.execute(context.database.db)

describe('webhook delivery', () => {
  it('sends key.created and key.rotated signed per Standard Webhooks, the payload {type, timestamp, data}', async () => {
    const receiver = await startWebhookReceiver()
    try {
      const endpoint = await register(receiver.url, ['key.created', 'key.rotated'])
      receiver.trust(endpoint.secret)
      const key = await newKey('Rex')
      await call({ method: 'POST', url: `/admin/v1/keys/${key.id}/rotate` })
      await call({ method: 'POST', url: `/admin/v1/keys/${key.id}/revoke` }) // not subscribed
      worker()
      await expect.poll(() => receiver.received.length === 2, { timeout: 10_000 }).toBe(true)
      const events = await context.database.db
        .selectFrom('webhook_events')
        .select(['id', 'at'])
        .where('type', 'in', ['key.created', 'key.rotated'])
        .orderBy('id')
        .execute()
      const rotated = await call({ method: 'GET', url: `/admin/v1/keys/${key.id}` })
      const keyData = (prefix: string) => ({
        key: { id: String(key.id), prefix, name: 'Rex', accountId: String(key.accountId), scopes: key.scopes }
      })
      expect(receiver.received).toEqual([
        {
          id: `evt_${events[0]!.id}`,
          type: 'key.created',
          timestamp: events[0]!.at.toISOString(),
          data: keyData(key.prefix),
          signature: expect.stringMatching(/^v1,[A-Za-z0-9+/=]+$/)
        },
        {
          id: `evt_${events[1]!.id}`,
          type: 'key.rotated',
          timestamp: events[1]!.at.toISOString(),
          data: { ...keyData(rotated.prefix), previousPrefix: key.prefix, previousSecretExpiresAt: null },
          signature: expect.stringMatching(/^v1,[A-Za-z0-9+/=]+$/)
        }
      ])
      expect(receiver.rejected).toEqual([])
      // The claim's transaction commits after the batch it sent.
      await expect
        .poll(async () => (await delivery(endpoint.id)).every((row) => row.status === 'delivered'), { timeout: 5000 })
        .toBe(true)
      const rows = await delivery(endpoint.id)
      expect(rows.map((row) => [row.status, row.attempts, row.last_status])).toEqual([
        ['delivered', 1, 204],
        ['delivered', 1, 204]
      ])
    } finally {
      await receiver.close()
    }
  })

  it('counts each attempt by outcome, and reads the backlog waiting and the age of its oldest', async () => {
    const receiver = await startWebhookReceiver()
    try {
      const endpoint = await register(receiver.url, ['key.created'])
      receiver.trust(endpoint.secret)
      receiver.answer(500)
      await newKey('first')
      await newKey('second')
      // The first has waited 1.1 s more than the second, on the database's clock.
      await sql`UPDATE webhook_deliveries SET created_at = created_at - interval '1.1 seconds'
        WHERE endpoint_id = ${BigInt(endpoint.id)}`.execute(context.database.db)
      const registry = new Registry()
      const running = worker({ registry })
      await expect.poll(async () => (await delivery(endpoint.id))[0]!.attempts >= 1, { timeout: 10_000 }).toBe(true)
      const figure = async (name: string, outcome?: string) =>
        (await registry.getSingleMetric(name)!.get()).values.find(
          (value) => outcome === undefined || value.labels.outcome === outcome
        )!.value
      // Read after the first round: both wait, the first for more than the second passed since it was made.
      await expect.poll(async () => (await figure('animal_store_webhook_backlog')) === 2, { timeout: 5000 }).toBe(true)
      expect(await figure('animal_store_webhook_oldest_pending_seconds')).toBeGreaterThan(1)
      expect(await figure('animal_store_webhook_endpoints_paused')).toBe(0)
      receiver.answer(204)
      await retryNow(endpoint.id)
      await expect.poll(() => receiver.received.length === 2, { timeout: 10_000 }).toBe(true)
      await running.stop()
      const attempts = (await delivery(endpoint.id)).reduce((sum, row) => sum + row.attempts, 0)
      expect(await figure('animal_store_webhook_deliveries_total', 'delivered')).toBe(2)
      expect(await figure('animal_store_webhook_deliveries_total', 'retried')).toBe(attempts - 2)
      expect(await figure('animal_store_webhook_deliveries_total', 'failed')).toBe(0)
    } finally {
      await receiver.close()
    }
  })

  it("signs with both secrets during a rotation's grace, and with the new one alone after it", async () => {
    const receiver = await startWebhookReceiver()
    try {
      const endpoint = await register(receiver.url, ['key.created'])
      const rotated = await call({
        method: 'POST',
        url: `/admin/v1/webhooks/${endpoint.id}/rotate-secret`,
        payload: { graceSeconds: 600 }
      })
      receiver.trust(endpoint.secret, rotated.secret) // each of them must verify the delivery on its own
      await newKey('during grace')
      const running = worker()
      await expect.poll(() => receiver.received.length === 1, { timeout: 10_000 }).toBe(true)
      expect(receiver.received[0]!.signature.split(' ')).toHaveLength(2)

      const again = await call({
        method: 'POST',
        url: `/admin/v1/webhooks/${endpoint.id}/rotate-secret`,
        payload: { graceSeconds: 0 }
      })
      expect(again.previousSecretUntil).toBeNull()
      receiver.trust(again.secret)
      await newKey('after grace')
      await expect.poll(() => receiver.received.length === 2, { timeout: 10_000 }).toBe(true)
      expect(receiver.received[1]!.signature.split(' ')).toHaveLength(1)
      await running.stop()
    } finally {
      await receiver.close()
    }
  })

  it('keeps every event through a receiver down for four retries, 1, 2, 4 and 8 s apart, and delivers them in order, each id once', async () => {
    const receiver = await startWebhookReceiver()
    try {
      const endpoint = await register(receiver.url, ['key.created'])
      receiver.trust(endpoint.secret)
      await receiver.down()
      // The middle of the ±25 % spread: each wait is exactly its base.
      worker({ random: () => 0.5 })
      for (let i = 0; i < 10; i++) await newKey(`outage ${i}`)
      // The outage's 15 s of waits pass on the database's clock: once an attempt has failed and its
      // next one is set, the delivery is made due at once, as it would be when that time came.
      const waits: number[] = []
      for (let attempt = 1; attempt <= 4; attempt++) {
        await expect
          .poll(async () => (await delivery(endpoint.id))[0]!.attempts >= attempt, { timeout: 10_000 })
          .toBe(true)
        const [head] = await delivery(endpoint.id)
        expect(head!.attempts).toBe(attempt)
        waits.push((head!.next_attempt_at.getTime() - head!.last_attempt_at!.getTime()) / 1000)
        await sql`UPDATE webhook_deliveries SET next_attempt_at = clock_timestamp()
          WHERE endpoint_id = ${BigInt(endpoint.id)} AND event_id = ${head!.event_id}`.execute(context.database.db)
      }
      await expect.poll(async () => (await delivery(endpoint.id))[0]!.attempts >= 5, { timeout: 10_000 }).toBe(true)
      const during = await delivery(endpoint.id)
      expect(waits.map((wait) => Math.round(wait * 10) / 10)).toEqual([1, 2, 4, 8])
      expect(during.every((row) => row.status === 'pending')).toBe(true)
      expect(during.slice(1).every((row) => row.attempts === 0)).toBe(true) // the rest wait behind the first
      expect(during[0]!.last_status).toBeNull()
      expect(during[0]!.last_response).toMatch(/ECONNREFUSED/)
      await receiver.up()
      // Up again: the head waits out its 16 s on the database's clock, then everything goes.
      await sql`UPDATE webhook_deliveries SET next_attempt_at = clock_timestamp()
        WHERE endpoint_id = ${BigInt(endpoint.id)} AND event_id = ${during[0]!.event_id}`.execute(context.database.db)
      await expect.poll(() => receiver.received.length === 10, { timeout: 40_000 }).toBe(true)
      const ids = during.map((row) => `evt_${row.event_id}`)
      expect(receiver.received.map((message) => message.id)).toEqual(ids)
      expect(receiver.received.map((message) => message.data.key)).toEqual(
        Array.from({ length: 10 }, (_, i) => expect.objectContaining({ name: `outage ${i}` }))
      )
    } finally {
      await receiver.close()
    }
  })

  it('delivers key.created, key.rotated and usage.threshold from real traffic through a receiver outage, each verified', async () => {
    const HOUR = 3_600_000
    // The requests fall within one UTC hour, so that both thresholds are of one window: the database's
    // clock, which decides the limits, stands still for them, at least a minute before an hour ends.
    const clock = manualClock(
      Math.min(Date.now(), Math.ceil(Date.now() / HOUR) * HOUR - 60_000),
      () => context.database
    )
    await clock.set(clock())
    await addPlan(context.database.db, 'metered', [
      ['minute', 1000],
      ['hour', 10]
    ])
    const receiver = await startWebhookReceiver()
    const api = await createTestApp(context.database, { clock })
    try {
      const endpoint = await register(receiver.url, ['key.created', 'key.rotated', 'usage.threshold'])
      receiver.trust(endpoint.secret)
      const key = await call(
        { method: 'POST', url: '/admin/v1/keys', payload: { plan: 'metered', name: 'meter' } },
        201
      )
      await receiver.down()
      worker()
      const rotated = await call({ method: 'POST', url: `/admin/v1/keys/${key.id}/rotate` })
      const admitted = []
      for (let i = 0; i < 12; i++) {
        const response = await api.inject({
          method: 'GET',
          url: '/v1/pets',
          headers: { authorization: `Bearer ${rotated.key}` }
        })
        admitted.push(response.statusCode)
      }
      expect(admitted).toEqual([...Array<number>(10).fill(200), 429, 429])
      // Down while the events are written and the first attempts fail. Each retry is made due at once,
      // as the database's clock would make it when its time came.
      await expect
        .poll(async () => (await delivery(endpoint.id)).some((row) => row.attempts >= 1), { timeout: 15_000 })
        .toBe(true)
      await retryNow(endpoint.id)
      await expect
        .poll(async () => (await delivery(endpoint.id)).some((row) => row.attempts >= 2), { timeout: 15_000 })
        .toBe(true)
      await receiver.up()
      await retryNow(endpoint.id)
      await expect.poll(() => receiver.received.length === 4, { timeout: 30_000 }).toBe(true)
      expect(receiver.rejected).toEqual([])
      expect(receiver.received.map((message) => message.type)).toEqual([
        'key.created',
        'key.rotated',
        'usage.threshold',
        'usage.threshold'
      ])
      const hour = new Date(Math.floor(clock() / HOUR) * HOUR).toISOString().replace('.000Z', 'Z')
      expect(receiver.received.slice(2).map((message) => message.data)).toEqual(
        [80, 100].map((percent) => ({
          account: { id: String(key.accountId) },
          window: 'hour',
          limit: 10,
          used: percent / 10,
          percent,
          windowStart: hour,
          windowEnd: new Date(Date.parse(hour) + HOUR).toISOString().replace('.000Z', 'Z')
        }))
      )
      const ids = receiver.received.map((message) => message.id)
      expect(new Set(ids).size).toBe(4)
      expect(ids).toEqual([...ids].sort((a, b) => Number(a.slice(4)) - Number(b.slice(4))))
    } finally {
      await clock.release()
      await api.close()
      await receiver.close()
    }
  }, 60_000)

  it('two workers at once never send to one endpoint twice at once, and each event arrives once, in order', async () => {
    const receivers = await Promise.all([0, 1, 2].map(() => startWebhookReceiver({ answerMs: 20 })))
    try {
      for (const receiver of receivers) {
        const endpoint = await register(receiver.url, ['key.created'])
        receiver.trust(endpoint.secret)
      }
      for (let i = 0; i < 15; i++) await newKey(`busy ${i}`)
      worker({ concurrency: 3 })
      worker({ concurrency: 3 })
      await expect
        .poll(() => receivers.every((receiver) => receiver.received.length >= 15), { timeout: 30_000 })
        .toBe(true)
      await sleep(300)
      for (const receiver of receivers) {
        expect(receiver.overlaps).toBe(0)
        expect(receiver.received.map((message) => message.data.key)).toEqual(
          Array.from({ length: 15 }, (_, i) => expect.objectContaining({ name: `busy ${i}` }))
        )
      }
    } finally {
      await Promise.all(receivers.map((receiver) => receiver.close()))
    }
  }, 60_000)

  it('gives a delivery up after 24 hours, with its last answer shown, and the next event goes on', async () => {
    const receiver = await startWebhookReceiver()
    try {
      const endpoint = await register(receiver.url, ['key.created'])
      receiver.trust(endpoint.secret)
      receiver.answer(500)
      await newKey('doomed')
      await sql`UPDATE webhook_deliveries SET created_at = created_at - interval '25 hours'`.execute(
        context.database.db
      )
      await newKey('next')
      worker()
      await expect
        .poll(async () => (await delivery(endpoint.id))[0]!.status === 'failed', { timeout: 10_000 })
        .toBe(true)
      receiver.answer(204)
      await expect.poll(() => receiver.received.length === 1, { timeout: 10_000 }).toBe(true)
      expect(receiver.received[0]!.data.key).toMatchObject({ name: 'next' })
      const failed = await call({ method: 'GET', url: `/admin/v1/webhooks/${endpoint.id}/deliveries?status=failed` })
      expect(failed).toEqual([
        expect.objectContaining({
          type: 'key.created',
          status: 'failed',
          attempts: 1,
          lastStatus: 500,
          lastResponse: 'not now'
        })
      ])
      // An operator sends it again.
      await call(
        { method: 'POST', url: `/admin/v1/webhooks/${endpoint.id}/deliveries/${failed[0].eventId}/retry` },
        204
      )
      await expect.poll(() => receiver.received.length === 2, { timeout: 10_000 }).toBe(true)
      expect(receiver.received[1]!.data.key).toMatchObject({ name: 'doomed' })
    } finally {
      await receiver.close()
    }
  })

  it('keeps an answer whose body holds a NUL byte, and sends the delivery it acknowledged once', async () => {
    const receiver = await startWebhookReceiver()
    try {
      const endpoint = await register(receiver.url, ['key.created'])
      receiver.trust(endpoint.secret)
      receiver.answer(200, 'ok\u0000')
      await newKey('Rex')
      worker()
      await expect
        .poll(async () => (await delivery(endpoint.id))[0]!.status === 'delivered', { timeout: 5000 })
        .toBe(true)
      const [row] = await delivery(endpoint.id)
      expect(row).toMatchObject({ attempts: 1, last_status: 200, last_response: 'ok\ufffd' })
      await sleep(300)
      expect(receiver.received).toHaveLength(1)
    } finally {
      await receiver.close()
    }
  })

  it('pauses an endpoint failing for an hour, and tells endpoint.paused to those that take it', async () => {
    const failing = await startWebhookReceiver()
    const watcher = await startWebhookReceiver()
    try {
      const endpoint = await register(failing.url, ['key.created'])
      failing.trust(endpoint.secret)
      failing.answer(503)
      const watching = await register(watcher.url, ['endpoint.paused'])
      watcher.trust(watching.secret)
      await newKey('first')
      worker()
      await expect.poll(async () => (await delivery(endpoint.id))[0]!.attempts >= 1, { timeout: 10_000 }).toBe(true)
      expect((await call({ method: 'GET', url: `/admin/v1/webhooks/${endpoint.id}` })).failingSince).not.toBeNull()
      await sql`UPDATE webhook_endpoints SET failing_since = failing_since - interval '61 minutes' WHERE id = ${BigInt(endpoint.id)}`.execute(
        context.database.db
      )
      await retryNow(endpoint.id)
      await expect.poll(() => watcher.received.length === 1, { timeout: 10_000 }).toBe(true)
      expect(watcher.received[0]).toMatchObject({
        type: 'endpoint.paused',
        data: { endpoint: { id: String(endpoint.id), url: failing.url }, lastStatus: 503, lastResponse: 'not now' }
      })
      const paused = await call({ method: 'GET', url: `/admin/v1/webhooks/${endpoint.id}` })
      expect(paused.paused).toBe(true)
      // Paused, it is sent nothing; resumed, what waited arrives.
      failing.answer(204)
      await newKey('second')
      await sleep(500)
      expect(failing.received).toEqual([])
      // After an hour of failures its next attempt may be up to 10 minutes away: resuming sends at once.
      await sql`UPDATE webhook_deliveries SET next_attempt_at = clock_timestamp() + interval '10 minutes'
        WHERE endpoint_id = ${BigInt(endpoint.id)} AND status = 'pending'`.execute(context.database.db)
      await call({ method: 'PATCH', url: `/admin/v1/webhooks/${endpoint.id}`, payload: { paused: false } })
      await expect.poll(() => failing.received.length === 2, { timeout: 10_000 }).toBe(true)
      expect(failing.received.map((message) => (message.data.key as { name: string }).name)).toEqual([
        'first',
        'second'
      ])
    } finally {
      await failing.close()
      await watcher.close()
    }
  })

  it('refuses at delivery a name that resolves to an address the policy refuses, before connecting', async () => {
    const receiver = await startWebhookReceiver()
    try {
      // A name, accepted when registered; at delivery it resolves to 127.0.0.1, which this policy refuses.
      const url = `https://localhost:${receiver.port}/hooks`
      const endpoint = await register(url, ['key.created'])
      await newKey('refused')
      const refusing = worker({ policy: { allowHttp: false, allowedCidrs: [] } })
      await expect.poll(async () => (await delivery(endpoint.id))[0]!.attempts >= 1, { timeout: 10_000 }).toBe(true)
      await refusing.stop()
      const [row] = await delivery(endpoint.id)
      expect(row!.status).toBe('pending')
      expect(row!.last_status).toBeNull()
      expect(row!.last_response).toMatch(/^localhost resolves to 127\.0\.0\.1 is a loopback address/)

      // WEBHOOKS_ALLOWED_CIDRS naming the range lets the connection go (here it fails at TLS: the receiver speaks http).
      await sql`UPDATE webhook_deliveries SET next_attempt_at = now()`.execute(context.database.db)
      const allowing = worker({ policy: { allowHttp: false, allowedCidrs: [parseCidr('127.0.0.0/8')] } })
      await expect.poll(async () => (await delivery(endpoint.id))[0]!.attempts >= 2, { timeout: 10_000 }).toBe(true)
      await allowing.stop()
      const [again] = await delivery(endpoint.id)
      expect(again!.last_response).not.toMatch(/loopback/)
      expect(again!.last_response).toMatch(/SSL|TLS|EPROTO|wrong version/i)
      expect(receiver.received).toEqual([])
    } finally {
      await receiver.close()
    }
  })
})
