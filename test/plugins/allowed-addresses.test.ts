import type { FastifyInstance, InjectOptions } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestAdminApp, createTestApp, asAdmin } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { bearer, holdDatabaseClock } from '../helpers/traffic.js'

let database: TestDatabase
let admin: FastifyInstance
let api: FastifyInstance
let proxied: FastifyInstance
beforeAll(async () => {
  database = await createTestDatabase()
  admin = await createTestAdminApp(database)
  api = await createTestApp(database)
  // Behind a load balancer at 10.0.0.2: the client address is X-Forwarded-For's, from it only.
  proxied = await createTestApp(database, { env: { TRUST_PROXY: '10.0.0.2' } })
})
afterAll(async () => {
  await Promise.all([admin?.close(), api?.close(), proxied?.close()])
  await database?.drop()
})

const call = (options: InjectOptions) => asAdmin(admin).inject(options)

async function newKey(body: Record<string, unknown>) {
  const response = await call({ method: 'POST', url: '/admin/v1/keys', payload: { plan: 'free', ...body } })
  expect(response.statusCode, response.body).toBe(201)
  return response.json<{ id: number; accountId: number; key: string; allowedAddresses: string[] | null }>()
}

const from = (remoteAddress: string, key: string, url = '/v1/pets', headers: Record<string, string> = {}) =>
  api.inject({ method: 'GET', url, remoteAddress, headers: { ...bearer(key), ...headers } })

/** What the database counted for the account: units in its windows, and the key's hours of usage. */
async function counted(accountId: number, keyId: number) {
  const windows = await sql<{ window: string; used: string }>`
    SELECT "window", used FROM limit_counters WHERE account_id = ${accountId} ORDER BY "window"`.execute(database.db)
  const usage = await sql<{ admitted: string; refused: string }>`
    SELECT coalesce(sum(admitted), 0) AS admitted, coalesce(sum(refused), 0) AS refused
    FROM api_key_usage WHERE api_key_id = ${keyId}`.execute(database.db)
  return {
    used: Object.fromEntries(windows.rows.map((row) => [row.window, Number(row.used)])),
    admitted: Number(usage.rows[0]!.admitted),
    refused: Number(usage.rows[0]!.refused)
  }
}

describe('a key with allowed addresses', () => {
  it('answers a request from elsewhere with 403 address_not_allowed and spends nothing of the key', async () => {
    // An instance of this test's own: closing it reports the usage it has tallied.
    const app = await createTestApp(database)
    const from = (remoteAddress: string, key: string, url = '/v1/pets') =>
      app.inject({ method: 'GET', url, remoteAddress, headers: bearer(key) })
    const issued = await newKey({ allowedAddresses: ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7'] })
    expect(issued.allowedAddresses).toEqual(['203.0.113.0/24', '2001:db8::/32', '198.51.100.7/32'])
    await holdDatabaseClock(database)

    for (const elsewhere of ['192.0.2.1', '198.51.100.8', '2001:db9::1', '::ffff:192.0.2.1']) {
      const refused = await from(elsewhere, issued.key)
      expect(refused.statusCode, elsewhere).toBe(403)
      expect(refused.json()).toEqual({
        code: 'address_not_allowed',
        message: `This API key may not be used from ${elsewhere}`,
        status: 403
      })
      // The headers of the address's budget, as a request without a valid key gets: never the key's.
      expect(refused.headers['x-ratelimit-limit']).toBe('60')
    }
    // GET /v1/rate_limit too: from elsewhere the key reveals nothing.
    expect((await from('192.0.2.1', issued.key, '/v1/rate_limit')).statusCode).toBe(403)

    const admitted = []
    for (const allowed of ['203.0.113.9', '2001:db8::7', '198.51.100.7', '::ffff:203.0.113.10']) {
      admitted.push(await from(allowed, issued.key))
    }
    expect(admitted.map((response) => response.statusCode)).toEqual([200, 200, 200, 200])
    // The free plan's 60 a minute, less these four alone.
    expect(admitted.map((response) => response.headers['x-ratelimit-remaining'])).toEqual(['59', '58', '57', '56'])
    await app.close()
    expect(await counted(issued.accountId, issued.id)).toEqual({ used: { day: 4, minute: 4 }, admitted: 4, refused: 0 })
  })

  it('checks the client address TRUST_PROXY names, never a header from an untrusted peer', async () => {
    const issued = await newKey({ allowedAddresses: ['203.0.113.0/24'] })
    const via = (remoteAddress: string, forwardedFor: string) =>
      proxied.inject({
        method: 'GET',
        url: '/v1/pets',
        remoteAddress,
        headers: { ...bearer(issued.key), 'x-forwarded-for': forwardedFor }
      })
    expect((await via('10.0.0.2', '203.0.113.5')).statusCode).toBe(200)
    expect((await via('10.0.0.2', '192.0.2.1')).statusCode).toBe(403)
    // A client that is not the load balancer cannot claim an allowed address.
    expect((await via('192.0.2.1', '203.0.113.5')).statusCode).toBe(403)
    expect((await from('192.0.2.1', issued.key, '/v1/pets', { 'x-forwarded-for': '203.0.113.5' })).statusCode).toBe(403)
  })

  it('takes a change to its list on every instance within a second; null lets any address in', async () => {
    const issued = await newKey({})
    expect((await from('192.0.2.1', issued.key)).statusCode).toBe(200)
    const limited = await call({
      method: 'PATCH',
      url: `/admin/v1/keys/${issued.id}`,
      payload: { allowedAddresses: ['203.0.113.0/24'] }
    })
    expect(limited.json().allowedAddresses).toEqual(['203.0.113.0/24'])
    await expect.poll(async () => (await from('192.0.2.1', issued.key)).statusCode, { timeout: 1_000 }).toBe(403)
    expect((await from('203.0.113.1', issued.key)).statusCode).toBe(200)

    for (const any of [null, []]) {
      await call({ method: 'PATCH', url: `/admin/v1/keys/${issued.id}`, payload: { allowedAddresses: ['10.0.0.0/8'] } })
      const opened = await call({
        method: 'PATCH',
        url: `/admin/v1/keys/${issued.id}`,
        payload: { allowedAddresses: any }
      })
      expect(opened.json().allowedAddresses).toBeNull()
      await expect.poll(async () => (await from('192.0.2.1', issued.key)).statusCode, { timeout: 1_000 }).toBe(200)
    }
    const trail = (await call({ method: 'GET', url: `/admin/v1/events?keyId=${issued.id}` })).json()
    expect(trail.at(-2)).toMatchObject({
      action: 'key.changed',
      changes: { allowedAddresses: { before: null, after: ['203.0.113.0/24'] } }
    })
  })

  it.each([
    [{ allowedAddresses: ['10.0.0.0/33'] }, "allowedAddresses[0]: '10.0.0.0/33' needs a prefix length from 0 to 32"],
    [
      { allowedAddresses: ['10.0.0.0/8', '10.1.2.3/16'] },
      "allowedAddresses[1]: '10.1.2.3/16' has bits set past its /16 prefix: the range is 10.1.0.0/16"
    ],
    [{ allowedAddresses: ['example.com'] }, "'example.com' is not an IPv4 or IPv6 address or CIDR range"],
    [{ allowedAddresses: ['010.0.0.1'] }, "'010.0.0.1' is not an IPv4 or IPv6 address or CIDR range"],
    [
      { allowedAddresses: Array.from({ length: 21 }, (_, index) => `10.0.${index}.0/24`) },
      'allowedAddresses must NOT have more than 20 items'
    ],
    [{ allowedAddresses: '10.0.0.0/8' }, 'allowedAddresses must be']
  ])('refuses %j with 400 on create and change, and changes nothing', async (body, message) => {
    const keys = async () =>
      Number((await sql<{ count: string }>`SELECT count(*) FROM api_keys`.execute(database.db)).rows[0]!.count)
    const before = await keys()
    const created = await call({ method: 'POST', url: '/admin/v1/keys', payload: { plan: 'free', ...body } })
    expect(created.statusCode).toBe(400)
    expect(created.json().code).toBe('invalid_request')
    expect(created.json().message).toContain(message)
    expect(await keys()).toBe(before)

    const issued = await newKey({ allowedAddresses: ['203.0.113.0/24'] })
    const changed = await call({ method: 'PATCH', url: `/admin/v1/keys/${issued.id}`, payload: body })
    expect(changed.statusCode).toBe(400)
    expect(changed.json().message).toContain(message)
    expect((await call({ method: 'GET', url: `/admin/v1/keys/${issued.id}` })).json().allowedAddresses).toEqual([
      '203.0.113.0/24'
    ])
  })

  it('is in the public OpenAPI document: every keyed operation may answer 403 address_not_allowed', async () => {
    const document = (await api.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
    const keyed = [
      ['/pets', 'get'],
      ['/pets', 'post'],
      ['/pets/{petId}', 'get'],
      ['/rate_limit', 'get']
    ] as const
    for (const [path, method] of keyed) {
      expect(document.paths[path][method].responses['403'].description, `${method} ${path}`).toContain(
        'address_not_allowed'
      )
    }
    expect(document.paths['/pets'].get.responses['403'].description).toContain('insufficient_scope')
  })
})
