import type { FastifyInstance, InjectOptions } from 'fastify'
import { describe, expect, it } from 'vitest'
import { createTestAdminApp, ADMIN_TOKEN, useTestAdminApp } from '../helpers/app.js'
import { lockWaiters } from '../helpers/database.js'

const context = useTestAdminApp()

const callOn = (app: FastifyInstance) => (options: InjectOptions) =>
  app.inject({ ...options, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...options.headers } })
const request = (options: InjectOptions) => callOn(context.admin)(options)

describe('webhook endpoints over the admin API', () => {
  it('are registered with a secret shown once, read, listed, changed, paused and deleted', async () => {
    const made = await request({
      method: 'POST',
      url: '/admin/v1/webhooks',
      payload: {
        url: 'https://hooks.example.com/in',
        events: ['key.created', 'usage.threshold'],
        description: 'Billing'
      }
    })
    expect(made.statusCode, made.body).toBe(201)
    const endpoint = made.json()
    expect(endpoint).toMatchObject({
      url: 'https://hooks.example.com/in',
      events: ['key.created', 'usage.threshold'],
      description: 'Billing',
      paused: false,
      pausedAt: null,
      previousSecretUntil: null
    })
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)

    const read = await request({ method: 'GET', url: `/admin/v1/webhooks/${endpoint.id}` })
    expect(read.statusCode).toBe(200)
    const { secret: _secret, ...shown } = endpoint
    expect(read.json()).toEqual(shown)
    expect(read.body).not.toContain('whsec_')
    const listed = await request({ method: 'GET', url: '/admin/v1/webhooks' })
    expect(listed.json()).toEqual([shown])

    const changed = await request({
      method: 'PATCH',
      url: `/admin/v1/webhooks/${endpoint.id}`,
      payload: { events: ['key.revoked'], paused: true }
    })
    expect(changed.statusCode, changed.body).toBe(200)
    expect(changed.json()).toMatchObject({ events: ['key.revoked'], paused: true })
    const resumed = await request({
      method: 'PATCH',
      url: `/admin/v1/webhooks/${endpoint.id}`,
      payload: { paused: false }
    })
    expect(resumed.json()).toMatchObject({ paused: false, pausedAt: null })

    const rotated = await request({
      method: 'POST',
      url: `/admin/v1/webhooks/${endpoint.id}/rotate-secret`,
      payload: { graceSeconds: 3600 }
    })
    expect(rotated.statusCode, rotated.body).toBe(200)
    expect(rotated.json().secret).toMatch(/^whsec_/)
    expect(rotated.json().secret).not.toBe(endpoint.secret)
    const graceEnds = Date.parse(rotated.json().previousSecretUntil)
    expect(graceEnds - Date.now()).toBeGreaterThan(3500_000)
    expect(graceEnds - Date.now()).toBeLessThan(3700_000)

    const audit = await request({ method: 'GET', url: '/admin/v1/events' })
    expect(audit.json().map((event: { action: string }) => event.action)).toEqual([
      'webhook.secret_rotated',
      'webhook.changed',
      'webhook.changed',
      'webhook.created'
    ])
    expect(audit.body).not.toContain('whsec_')

    const deleted = await request({ method: 'DELETE', url: `/admin/v1/webhooks/${endpoint.id}` })
    expect(deleted.statusCode).toBe(204)
    expect((await request({ method: 'GET', url: `/admin/v1/webhooks/${endpoint.id}` })).statusCode).toBe(404)
    expect((await request({ method: 'DELETE', url: `/admin/v1/webhooks/${endpoint.id}` })).statusCode).toBe(404)
  })

  it('refuses an unknown event type and an empty list', async () => {
    for (const events of [['key.exploded'], []]) {
      const response = await request({
        method: 'POST',
        url: '/admin/v1/webhooks',
        payload: { url: 'https://hooks.example.com/in', events }
      })
      expect(response.statusCode, response.body).toBe(400)
    }
  })

  it("refuses a deliveries' status it does not know, naming those it does", async () => {
    const made = await request({
      method: 'POST',
      url: '/admin/v1/webhooks',
      payload: { url: 'https://hooks.example.com/in', events: ['key.created'] }
    })
    const response = await request({
      method: 'GET',
      url: `/admin/v1/webhooks/${made.json().id}/deliveries?status=sent`
    })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toEqual({
      code: 'invalid_request',
      message: 'status must be one of pending, delivered, failed',
      status: 400
    })
  })

  const refusedUrl = async (app: FastifyInstance, url: string) => {
    const response = await callOn(app)({
      method: 'POST',
      url: '/admin/v1/webhooks',
      payload: { url, events: ['key.created'] }
    })
    expect(response.statusCode, `${url}: ${response.body}`).toBe(400)
    return response.json<{ message: string }>().message
  }
  const acceptedUrl = async (app: FastifyInstance, url: string) => {
    const response = await callOn(app)({
      method: 'POST',
      url: '/admin/v1/webhooks',
      payload: { url, events: ['key.created'] }
    })
    expect(response.statusCode, `${url}: ${response.body}`).toBe(201)
  }

  it('refuses http, credentials, and loopback, private, link-local and other addresses that are not public', async () => {
    expect(await refusedUrl(context.admin, 'http://hooks.example.com/in')).toMatch(/must be https.*WEBHOOKS_ALLOW_HTTP/)
    expect(await refusedUrl(context.admin, 'ftp://hooks.example.com/in')).toMatch(/must be https/)
    expect(await refusedUrl(context.admin, 'https://user:pw@hooks.example.com/in')).toMatch(/credentials/)
    expect(await refusedUrl(context.admin, 'not a url')).toMatch(/absolute URL/)
    expect(await refusedUrl(context.admin, 'https://127.0.0.1/in')).toMatch(/loopback/)
    expect(await refusedUrl(context.admin, 'https://[::1]/in')).toMatch(/loopback/)
    expect(await refusedUrl(context.admin, 'https://10.1.2.3/in')).toMatch(/private/)
    expect(await refusedUrl(context.admin, 'https://192.168.0.10/in')).toMatch(/private/)
    expect(await refusedUrl(context.admin, 'https://169.254.169.254/latest/meta-data')).toMatch(/linkLocal/)
    expect(await refusedUrl(context.admin, 'https://[fd00::1]/in')).toMatch(/uniqueLocal/)
    expect(await refusedUrl(context.admin, 'https://[::ffff:10.0.0.1]/in')).toMatch(/private/)
    expect(await refusedUrl(context.admin, 'https://100.64.0.1/in')).toMatch(/carrierGradeNat/)
    expect(await refusedUrl(context.admin, 'https://0.0.0.0/in')).toMatch(/unspecified/)
    await acceptedUrl(context.admin, 'https://93.184.215.14/in')
  })

  it('takes http and loopback with WEBHOOKS_ALLOW_HTTP, and private ranges that WEBHOOKS_ALLOWED_CIDRS names', async () => {
    const local = await createTestAdminApp(context.database, {
      env: { WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOWED_CIDRS: '10.20.0.0/16, fd00::/8' }
    })
    try {
      await acceptedUrl(local, 'http://127.0.0.1:8080/in')
      await acceptedUrl(local, 'http://localhost:8080/in')
      await acceptedUrl(local, 'https://10.20.3.4/in')
      await acceptedUrl(local, 'https://[fd00::1]/in')
      expect(await refusedUrl(local, 'https://10.21.0.1/in')).toMatch(/private/)
      expect(await refusedUrl(local, 'http://169.254.169.254/in')).toMatch(/linkLocal/)
    } finally {
      await local.close()
    }
  })
})

describe('an endpoint changed while it is deleted', () => {
  it('is 404 to the change that waited for the delete, and one audit event to the delete', async () => {
    const made = await request({
      method: 'POST',
      url: '/admin/v1/webhooks',
      payload: { url: 'https://hooks.example.com/race', events: ['key.created'] }
    })
    expect(made.statusCode, made.body).toBe(201)
    const id = made.json().id as string
    const events = async (action: string) =>
      (await request({ method: 'GET', url: '/admin/v1/events?limit=100' }))
        .json<{ action: string; changes: { endpointId?: { before: string | null } } }[]>()
        .filter((event) => event.action === action && event.changes.endpointId?.before === id).length
    // The delete holds the endpoint's row, as one under way does, while the change and a second delete start.
    const deleting = await context.database.pool.connect()
    try {
      await deleting.query('BEGIN')
      await deleting.query('DELETE FROM webhook_endpoints WHERE id = $1', [id])
      const change = request({ method: 'PATCH', url: `/admin/v1/webhooks/${id}`, payload: { paused: true } })
      const again = request({ method: 'DELETE', url: `/admin/v1/webhooks/${id}` })
      await lockWaiters(context.database, 2)
      await deleting.query('COMMIT')
      for (const response of [await change, await again]) {
        expect(response.statusCode, response.body).toBe(404)
        expect(response.json()).toMatchObject({ code: 'not_found', status: 404 })
      }
    } finally {
      deleting.release()
    }
    expect(await events('webhook.changed')).toBe(0)
    expect(await events('webhook.deleted')).toBe(0)
  })
})

describe('retrying a failed delivery', () => {
  it('needs an admin, and is an audit event naming the endpoint and the event', async () => {
    const made = await request({
      method: 'POST',
      url: '/admin/v1/webhooks',
      payload: { url: 'https://hooks.example.com/retried', events: ['key.created'] }
    })
    const endpoint = made.json()
    const event = await context.database.db
      .insertInto('webhook_events')
      .values({ type: 'key.created', account_id: null, data: '{}' })
      .returning('id')
      .executeTakeFirstOrThrow()
    // The event fans out to the endpoint; its delivery has failed.
    await context.database.db
      .updateTable('webhook_deliveries')
      .set({ status: 'failed', finished_at: new Date() })
      .where('endpoint_id', '=', BigInt(endpoint.id))
      .where('event_id', '=', event.id)
      .execute()
    const operator = await request({
      method: 'POST',
      url: '/admin/v1/operators',
      payload: { name: 'retrier', role: 'operator' }
    })
    const url = `/admin/v1/webhooks/${endpoint.id}/deliveries/${event.id}/retry`
    const refused = await context.admin.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${operator.json().token}` }
    })
    expect(refused.statusCode).toBe(403)
    expect(refused.json().code).toBe('insufficient_role')
    const status = () =>
      context.database.db
        .selectFrom('webhook_deliveries')
        .select('status')
        .where('endpoint_id', '=', BigInt(endpoint.id))
        .where('event_id', '=', event.id)
        .executeTakeFirstOrThrow()
    expect(await status()).toEqual({ status: 'failed' })

    const retried = await request({ method: 'POST', url, headers: { 'x-audit-actor': 'support-ticket-9' } })
    expect(retried.statusCode, retried.body).toBe(204)
    expect(await status()).toEqual({ status: 'pending' })
    const events = await request({ method: 'GET', url: '/admin/v1/events?limit=1' })
    expect(events.json()[0]).toMatchObject({
      actor: 'bootstrap',
      action: 'webhook.delivery_retried',
      onBehalfOf: 'support-ticket-9',
      changes: {
        endpointId: { before: String(endpoint.id), after: String(endpoint.id) },
        eventId: { before: String(event.id), after: String(event.id) },
        status: { before: 'failed', after: 'pending' }
      }
    })
  })
})
