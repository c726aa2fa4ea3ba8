import type { InjectOptions } from 'fastify'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { freePort } from '../../src/db/embedded.js'
import { createTestApp, ADMIN_TOKEN, asAdmin, onEveryInstance, useTestAdminApp } from '../helpers/app.js'
import { startServer } from '../../harness/processes.js'
import { bearer, holdDatabaseClock } from '../helpers/traffic.js'

const context = useTestAdminApp({ api: {} })

const call = (options: InjectOptions) => asAdmin(context.admin).inject(options)
const create = async (body: Record<string, unknown>) => {
  const response = await call({ method: 'POST', url: '/admin/v1/keys', payload: body })
  expect(response.statusCode, response.body).toBe(201)
  return response.json()
}
const status = async (key: string) =>
  (await context.api.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key) })).statusCode

describe('the admin token', () => {
  it.each([
    ['none', undefined, 'Bearer realm="animal-store-admin"'],
    [
      'a wrong one',
      `Bearer ${'x'.repeat(ADMIN_TOKEN.length)}`,
      'Bearer realm="animal-store-admin", error="invalid_token"'
    ],
    ['another scheme', `Basic ${ADMIN_TOKEN}`, 'Bearer realm="animal-store-admin", error="invalid_token"']
  ])('answers %s with 401, the Error body and a challenge', async (_label, authorization, challenge) => {
    const response = await context.admin.inject({
      method: 'GET',
      url: '/admin/v1/keys',
      headers: authorization === undefined ? {} : { authorization }
    })
    expect(response.statusCode).toBe(401)
    expect(response.json()).toEqual({
      code: 'unauthorized',
      message: 'The admin API needs Authorization: Bearer <operator token or ADMIN_TOKEN>',
      status: 401
    })
    expect(response.headers['www-authenticate']).toBe(challenge)
  })

  it('must be at least 32 characters, or start-up fails naming ADMIN_TOKEN', () => {
    expect(() => loadConfig({ ADMIN_TOKEN: 'short' })).toThrow(/ADMIN_TOKEN/)
    expect(loadConfig({ ADMIN_TOKEN }).ADMIN_TOKEN).toBe(ADMIN_TOKEN)
  })
})

describe('an id left empty', () => {
  it.each([
    ['GET', '/admin/v1/keys/'],
    ['PATCH', '/admin/v1/accounts/'],
    ['GET', '/admin/v1/plans/'],
    ['DELETE', '/admin/v1/webhooks/']
  ])('answers %s %s with 404 not_found as no such route', async (method, url) => {
    const response = await call({ method, url, payload: {} })
    expect(response.statusCode).toBe(404)
    expect(response.json()).toEqual({ code: 'not_found', message: `No route ${method} ${url}`, status: 404 })
  })
})

describe('security headers', () => {
  it.each([
    ['a listing', () => call({ method: 'GET', url: '/admin/v1/keys' }), 200],
    ['a new secret', () => call({ method: 'POST', url: '/admin/v1/keys', payload: { plan: 'free' } }), 201],
    ['a refusal', () => context.admin.inject({ method: 'GET', url: '/admin/v1/keys' }), 401]
  ])('are on %s: nosniff, no-store, no framing, no referrer', async (_label, send, statusCode) => {
    const response = await send()
    expect(response.statusCode).toBe(statusCode)
    expect(response.headers['x-content-type-options']).toBe('nosniff')
    expect(response.headers['cache-control']).toBe('no-store')
    expect(response.headers['content-security-policy']).toContain("frame-ancestors 'none'")
    expect(response.headers['content-security-policy']).toContain("default-src 'none'")
    expect(response.headers['x-frame-options']).toBe('DENY')
    expect(response.headers['referrer-policy']).toBe('no-referrer')
  })
})

describe('keys', () => {
  it('issues a key with the fields of `keys create --json`; the secret works at once and is never shown again', async () => {
    const created = await create({ plan: 'pro', name: 'Acme' })
    expect(Object.keys(created).sort()).toEqual(
      [
        'accountId',
        'createdAt',
        'expiresAt',
        'id',
        'key',
        'name',
        'perDay',
        'perMinute',
        'plan',
        'prefix',
        'revokedAt',
        'scopes',
        'previousPrefix',
        'previousSecretExpiresAt',
        'allowedAddresses',
        'metadata'
      ].sort()
    )
    expect(created).toMatchObject({
      plan: 'pro',
      name: 'Acme',
      perMinute: 300,
      perDay: 10000,
      expiresAt: null,
      previousPrefix: null,
      previousSecretExpiresAt: null,
      allowedAddresses: null,
      metadata: {}
    })
    expect(created.key).toMatch(/^ask_[0-9A-Za-z]{8}_[0-9A-Za-z]{32}_[0-9A-Za-z]{6}$/)
    expect(await status(created.key)).toBe(200)

    const read = await call({ method: 'GET', url: `/admin/v1/keys/${created.id}` })
    expect(read.statusCode).toBe(200)
    const { key: _secret, ...withoutSecret } = created
    expect(read.json()).toEqual(withoutSecret)
    expect(read.body).not.toContain(created.key)
  })

  it('issues enterprise keys with their own limits and an expiry', async () => {
    const created = await create({
      plan: 'enterprise',
      perMinute: 5000,
      perDay: 2000000,
      expiresAt: '2099-01-01T00:00:00Z'
    })
    expect(created).toMatchObject({
      plan: 'enterprise',
      perMinute: 5000,
      perDay: 2000000,
      expiresAt: '2099-01-01T00:00:00.000Z'
    })
  })

  it.each([
    [{}, 'A key needs a plan, or an account whose plan it shares'],
    [{ plan: 'gold' }, "No plan is named 'gold'"],
    [{ plan: 'Gold' }, 'plan must match pattern'],
    [{ plan: 'enterprise', perMinute: 0, perDay: 5 }, 'perMinute must be an integer from 1 to 2000000000'],
    [{ plan: 'enterprise', perMinute: 5, perDay: 2147483648 }, 'perDay must be an integer from 1 to 2000000000'],
    [{ plan: 'pro', expiresAt: 'soon' }, 'expiresAt must be a real instant in RFC 3339'],
    [{ plan: 'pro', secret: 'mine' }, "body has an unknown property 'secret'"]
  ])('refuses %j with 400 naming what is wrong, and issues nothing', async (body, message) => {
    const count = async () =>
      (await sql<{ count: bigint }>`SELECT count(*) FROM api_keys`.execute(context.database.db)).rows[0]!.count
    const before = await count()
    const response = await call({ method: 'POST', url: '/admin/v1/keys', payload: body })
    expect(response.statusCode).toBe(400)
    expect(response.json().code).toBe('invalid_request')
    expect(response.json().message).toContain(message)
    expect(await count()).toBe(before)
  })

  it('lists keys a page at a time with Link: rel="next", never a secret', async () => {
    for (let i = 0; i < 5; i++) await create({ plan: 'free', name: `page-${i}` })
    const seen: { id: number; name: string }[] = []
    let url: string | undefined = '/admin/v1/keys?limit=2'
    let pages = 0
    while (url) {
      const response = await call({ method: 'GET', url })
      expect(response.statusCode).toBe(200)
      expect(response.body).not.toMatch(/"key":/)
      const page = response.json<{ id: number; name: string }[]>()
      expect(page.length).toBeLessThanOrEqual(2)
      seen.push(...page)
      pages++
      const link = response.headers.link as string | undefined
      // A reference relative to the admin API's own URL.
      const next =
        link === undefined ? undefined : new URL(/^<([^>]+)>; rel="next"$/.exec(link)![1]!, 'http://admin.test')
      url = next && next.pathname + next.search
    }
    const ids = seen.map((key) => key.id)
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
    expect(new Set(ids).size).toBe(ids.length)
    const { rows } = await sql<{ count: bigint }>`SELECT count(*) FROM api_keys`.execute(context.database.db)
    expect(BigInt(ids.length)).toBe(rows[0]!.count)
    expect(pages).toBe(Math.ceil(ids.length / 2))
    expect((await call({ method: 'GET', url: '/admin/v1/keys?cursor=forged.cursor' })).statusCode).toBe(400)
  })

  it('changes a key: plan, limits, name and expiry, keeping what is not named', async () => {
    const created = await create({ plan: 'free', name: 'before' })
    const toEnterprise = await call({
      method: 'PATCH',
      url: `/admin/v1/keys/${created.id}`,
      payload: { plan: 'enterprise', perMinute: 7, perDay: 70 }
    })
    expect(toEnterprise.statusCode).toBe(200)
    expect(toEnterprise.json()).toMatchObject({ plan: 'enterprise', perMinute: 7, perDay: 70, name: 'before' })
    const renamed = await call({
      method: 'PATCH',
      url: `/admin/v1/keys/${created.id}`,
      payload: { name: 'after', perDay: 90 }
    })
    expect(renamed.json()).toMatchObject({ plan: 'enterprise', perMinute: 7, perDay: 90, name: 'after' })
    // An expiry must lie ahead (a past one is a 400): one a second away, then polled until it has passed.
    const soon = new Date(Date.now() + 1000)
    const expiring = await call({
      method: 'PATCH',
      url: `/admin/v1/keys/${created.id}`,
      payload: { expiresAt: soon.toISOString(), name: null }
    })
    expect(expiring.json()).toMatchObject({ expiresAt: soon.toISOString(), name: null })
    await expect.poll(() => status(created.key), { timeout: 10_000, interval: 50 }).toBe(401)
    const toPro = await call({
      method: 'PATCH',
      url: `/admin/v1/keys/${created.id}`,
      payload: { plan: 'pro', expiresAt: null }
    })
    expect(toPro.json()).toMatchObject({ plan: 'pro', perMinute: 300, perDay: 10000, expiresAt: null })
  })

  it.each([
    [{}, 'must NOT have fewer than 1 properties'],
    [{ plan: 'gold' }, "No plan is named 'gold'"],
    [{ name: '' }, 'name must NOT have fewer than 1 characters']
  ])('refuses the change %j with 400', async (body, message) => {
    const created = await create({ plan: 'pro' })
    const response = await call({ method: 'PATCH', url: `/admin/v1/keys/${created.id}`, payload: body })
    expect(response.statusCode).toBe(400)
    expect(response.json().message).toContain(message)
    expect((await call({ method: 'GET', url: `/admin/v1/keys/${created.id}` })).json()).toMatchObject({ plan: 'pro' })
  })

  it('revokes and rotates; the new secret is shown once and the old one stops working', async () => {
    const rotated = await create({ plan: 'pro' })
    const rotation = await call({ method: 'POST', url: `/admin/v1/keys/${rotated.id}/rotate` })
    expect(rotation.statusCode).toBe(200)
    expect(rotation.json().key).not.toBe(rotated.key)
    expect(rotation.json().id).toBe(rotated.id)
    expect(await status(rotated.key)).toBe(401)
    expect(await status(rotation.json().key)).toBe(200)

    const revoked = await create({ plan: 'pro' })
    const revocation = await call({ method: 'POST', url: `/admin/v1/keys/${revoked.id}/revoke` })
    expect(revocation.statusCode).toBe(200)
    expect(revocation.json().revokedAt).toEqual(expect.any(String))
    expect(await status(revoked.key)).toBe(401)
    const again = await call({ method: 'POST', url: `/admin/v1/keys/${revoked.id}/rotate` })
    expect(again.statusCode).toBe(409)
    expect(again.json().message).toBe(`Key ${revoked.id} is revoked; a revoked key cannot be rotated`)
  })

  it.each([
    ['GET', '/admin/v1/keys/999999'],
    ['PATCH', '/admin/v1/keys/999999'],
    ['POST', '/admin/v1/keys/999999/revoke'],
    ['POST', '/admin/v1/keys/999999/rotate'],
    ['GET', '/admin/v1/keys/999999/usage']
  ] as const)('answers %s %s for an unknown id with 404 not_found', async (method, url) => {
    const response = await call({ method, url, ...(method === 'PATCH' ? { payload: { name: 'x' } } : {}) })
    expect(response.statusCode).toBe(404)
    expect(response.json().code).toBe('not_found')
  })

  it('answers an id that is not an int64 with 400', async () => {
    const response = await call({ method: 'GET', url: '/admin/v1/keys/abc' })
    expect(response.statusCode).toBe(400)
    expect(response.json().message).toContain('id')
  })
})

describe('usage', () => {
  it('gives the requests admitted and refused on each of the last days, today first', async () => {
    const created = await create({ plan: 'enterprise', perMinute: 2, perDay: 100 })
    await holdDatabaseClock(context.database)
    const answers = await Promise.all(Array.from({ length: 5 }, () => status(created.key)))
    expect(answers.sort()).toEqual([200, 200, 429, 429, 429])
    const response = await call({ method: 'GET', url: `/admin/v1/keys/${created.id}/usage?days=3` })
    expect(response.statusCode).toBe(200)
    const day = (ago: number) => new Date(Date.now() - ago * 86_400_000).toISOString().slice(0, 10)
    expect(response.json()).toEqual({
      days: [
        { date: day(0), admitted: 2, refused: 3 },
        { date: day(1), admitted: 0, refused: 0 },
        { date: day(2), admitted: 0, refused: 0 }
      ]
    })
    expect((await call({ method: 'GET', url: `/admin/v1/keys/${created.id}/usage` })).json().days).toHaveLength(30)
    expect((await call({ method: 'GET', url: `/admin/v1/keys/${created.id}/usage?days=401` })).statusCode).toBe(400)
  })

  it.each([
    ['/admin/v1/keys/{id}/usage?days=0x3', 'days'],
    ['/admin/v1/keys/{id}/usage?days=3.0', 'days'],
    ['/admin/v1/keys?limit=1e1', 'limit'],
    ['/admin/v1/events?limit=%205', 'limit']
  ])('refuses %s, a number not written in decimal digits alone, with 400', async (url, field) => {
    const created = await create({ plan: 'free' })
    const response = await call({ method: 'GET', url: url.replace('{id}', String(created.id)) })
    expect(response.statusCode, response.body).toBe(400)
    expect(response.json()).toMatchObject({ code: 'invalid_request', status: 400 })
    expect(response.json().message).toContain(field)
  })
})

describe('the OpenAPI document', () => {
  it('is served at /admin/v1/openapi.json and describes every operation', async () => {
    const response = await call({ method: 'GET', url: '/admin/v1/openapi.json' })
    expect(response.statusCode).toBe(200)
    const document = response.json()
    expect(document.openapi).toBe('3.1.0')
    const operations = Object.values(document.paths as Record<string, Record<string, { operationId: string }>>)
      .flatMap((path) => Object.values(path))
      .map((operation) => operation.operationId)
      .sort()
    expect(operations).toEqual(
      [
        'accountUsage',
        'accountWindows',
        'changeAccount',
        'changeCredits',
        'changeKey',
        'closeAccount',
        'createAccount',
        'createKey',
        'getAccount',
        'getKey',
        'getPlan',
        'keyUsage',
        'listAccountKeys',
        'listAccounts',
        'listEvents',
        'listKeys',
        'listPlans',
        'putPlan',
        'removeCredits',
        'reportLeakedKeys',
        'revokeKey',
        'rotateKey',
        'createOperator',
        'listOperators',
        'revokeOperator',
        'whoami',
        'changeWebhook',
        'createWebhook',
        'deleteWebhook',
        'exportUsage',
        'getWebhook',
        'listWebhookDeliveries',
        'listWebhooks',
        'retryWebhookDelivery',
        'rotateWebhookSecret'
      ].sort()
    )
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(['Key', 'IssuedKey', 'NewKey', 'Usage', 'AccountWindows', 'Plan', 'Override', 'Credits'])
    )

    // A rotation's body may be left out (no grace); a key's may not.
    const paths = document.paths as Record<string, Record<string, { requestBody?: { required: boolean } }>>
    expect(paths['/admin/v1/keys/{id}/rotate']!.post!.requestBody?.required).toBe(false)
    expect(paths['/admin/v1/webhooks/{id}/rotate-secret']!.post!.requestBody?.required).toBe(false)
    expect(paths['/admin/v1/keys']!.post!.requestBody?.required).toBe(true)
  })
})

describe('changes across instances', () => {
  it('reach every instance through the change channel', async () => {
    const second = await createTestApp(context.database)
    try {
      const created = await create({ plan: 'pro' })
      for (const app of [context.api, second]) {
        expect(
          (await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(created.key) })).headers[
            'x-ratelimit-limit'
          ]
        ).toBe('300')
      }
      await call({ method: 'PATCH', url: `/admin/v1/keys/${created.id}`, payload: { plan: 'business' } })
      await onEveryInstance(
        [context.api, second],
        async (app) =>
          (await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(created.key) })).headers[
            'x-ratelimit-limit'
          ] === '1000'
      )
    } finally {
      await second.close()
    }
  })
})

describe('the built server', () => {
  it('serves the admin API on ADMIN_PORT only when ADMIN_TOKEN is set, never on the public port', async () => {
    const adminPort = await freePort()
    const server = await startServer({
      DATABASE_URL: context.database.url,
      ADMIN_PORT: String(adminPort),
      ADMIN_TOKEN
    })
    try {
      const adminKeys = await fetch(`http://127.0.0.1:${adminPort}/admin/v1/keys`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` }
      })
      expect(adminKeys.status).toBe(200)
      const publicPort = new URL(server.url).origin
      const onPublic = await fetch(`${publicPort}/admin/v1/keys`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` }
      })
      expect(onPublic.status).toBe(404)
    } finally {
      expect(await server.stop('SIGTERM')).toBe(0)
    }
    const withoutToken = await startServer({
      DATABASE_URL: context.database.url,
      ADMIN_PORT: String(adminPort)
    })
    try {
      await expect(fetch(`http://127.0.0.1:${adminPort}/admin/v1/keys`)).rejects.toThrow()
    } finally {
      await withoutToken.stop('SIGTERM')
    }
  })
})
