import type { InjectOptions } from 'fastify'
import { describe, expect, it } from 'vitest'
import { connectDedicated } from '../../src/db/connect.js'
import { startWebhookWorker } from '../../src/webhooks/worker.js'
import { useTestAdminApp, ADMIN_TOKEN } from '../helpers/app.js'
import { recordQueries } from '../helpers/database.js'
import { startWebhookReceiver } from '../helpers/webhook-receiver.js'

// A worker that listens (src/server.ts starts it so) waits for an announcement instead of polling.
const quiet = { warn: () => {}, info: () => {} }

const context = useTestAdminApp({ admin: { env: { WEBHOOKS_ALLOW_HTTP: 'true' } } })

const call = async (options: InjectOptions, status = 200) => {
  const response = await context.admin.inject({ ...options, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  expect(response.statusCode, response.body).toBe(status)
  return response.json()
}

describe('a listening webhook worker', () => {
  it('sends a delivery as soon as it is added, and asks the database nothing while idle', async () => {
    const receiver = await startWebhookReceiver()
    const endpoint = await call(
      { method: 'POST', url: '/admin/v1/webhooks', payload: { url: receiver.url, events: ['key.created'] } },
      201
    )
    receiver.trust(endpoint.secret)
    const dedicated = connectDedicated({
      url: context.database.url,
      max: 2,
      queryTimeoutMs: 10_000,
      applicationName: 'wake'
    })
    const queries = recordQueries(context.database.name)
    const worker = startWebhookWorker({
      db: dedicated.db,
      policy: { allowHttp: true, allowedCidrs: [] },
      timeoutMs: 2000,
      concurrency: 2,
      // Without its listener it would claim every 50 ms, ten times in the half second watched below.
      pollMs: 50,
      listenUrl: context.database.url,
      log: quiet
    })
    try {
      // Past its first look: it asks when the next delivery falls due only while it listens, and idles.
      await expect
        .poll(() => queries.texts.some((text) => text.includes('min(head.next_attempt_at)')), { timeout: 10_000 })
        .toBe(true)
      queries.texts.length = 0
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(queries.texts.filter((text) => /webhook_deliveries/.test(text))).toEqual([])
      const asked = Date.now()
      await call({ method: 'POST', url: '/admin/v1/keys', payload: { plan: 'free', name: 'woken' } }, 201)
      await expect.poll(() => receiver.received.length, { timeout: 5_000, interval: 20 }).toBe(1)
      expect(Date.now() - asked).toBeLessThan(2_000)
      expect(receiver.received[0]).toMatchObject({ type: 'key.created', data: { key: { name: 'woken' } } })
    } finally {
      queries.stop()
      await worker.stop()
      await dedicated.close()
      await receiver.close()
    }
  })

  it('wakes when a failed delivery falls due again, with no announcement', async () => {
    const receiver = await startWebhookReceiver()
    const dedicated = connectDedicated({
      url: context.database.url,
      max: 2,
      queryTimeoutMs: 10_000,
      applicationName: 'wake'
    })
    receiver.answer(500)
    const worker = startWebhookWorker({
      db: dedicated.db,
      policy: { allowHttp: true, allowedCidrs: [] },
      timeoutMs: 2000,
      concurrency: 1,
      listenUrl: context.database.url,
      log: quiet,
      // The first retry comes after 0.75 to 1.25 s: the middle.
      random: () => 0.5
    })
    try {
      const endpoint = await call(
        { method: 'POST', url: '/admin/v1/webhooks', payload: { url: receiver.url, events: ['key.created'] } },
        201
      )
      receiver.trust(endpoint.secret)
      await call({ method: 'POST', url: '/admin/v1/keys', payload: { plan: 'free', name: 'retried' } }, 201)
      const attempts = async () =>
        (
          await context.database.db
            .selectFrom('webhook_deliveries')
            .select('attempts')
            .where('endpoint_id', '=', BigInt(endpoint.id))
            .executeTakeFirst()
        )?.attempts
      await expect.poll(attempts, { timeout: 5_000, interval: 20 }).toBe(1)
      receiver.answer(204)
      // Due again about a second after it failed: no announcement, and well before the idle look at 30 s.
      await expect.poll(() => receiver.received.length, { timeout: 5_000, interval: 20 }).toBe(1)
      // Recorded as the claim's transaction commits, after the send.
      await expect.poll(attempts, { timeout: 5_000, interval: 20 }).toBe(2)
    } finally {
      await worker.stop()
      await dedicated.close()
      await receiver.close()
    }
  })
})
