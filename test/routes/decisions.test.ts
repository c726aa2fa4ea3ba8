import type { FastifyInstance, InjectOptions } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueApiKey, revokeApiKey, type IssuedApiKey } from '../../src/repositories/api-keys.js'
import { ADMIN_TOKEN, createTestAdminApp, createTestApp } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { bearer, holdDatabaseClock } from '../helpers/traffic.js'

// Two instances on one database, and the admin app that makes the plan and the operators.
let database: TestDatabase
let a: FastifyInstance
let b: FastifyInstance
let admin: FastifyInstance
const tokens = { service: '', viewer: '' }

const ENV = { BAN_AFTER: '2', BAN_SECONDS: '300' }
/** Five units a minute; orders cost 2 by the plan, one order 3 by its template. */
const TIGHT = {
  limits: [{ window: 'minute', limit: 5 }],
  costs: { 'GET /v1/orders': 2, 'GET /v1/orders/{id}': 3, 'GET /v1/pets': 1 }
}

beforeAll(async () => {
  database = await createTestDatabase()
  admin = await createTestAdminApp(database)
  const plan = await admin.inject({
    method: 'PUT',
    url: '/admin/v1/plans/tight',
    headers: bearer(ADMIN_TOKEN),
    payload: TIGHT
  })
  expect(plan.statusCode, plan.body).toBe(201)
  for (const role of ['service', 'viewer'] as const) {
    const made = await admin.inject({
      method: 'POST',
      url: '/admin/v1/operators',
      headers: bearer(ADMIN_TOKEN),
      payload: { name: `${role}-caller`, role }
    })
    expect(made.statusCode, made.body).toBe(201)
    tokens[role] = made.json().token
  }
  ;[a, b] = await Promise.all([createTestApp(database, { env: ENV }), createTestApp(database, { env: ENV })])
})
afterAll(async () => {
  await Promise.all([a?.close(), b?.close(), admin?.close()])
  await database?.drop()
})

const tightKey = (options: Parameters<typeof issueApiKey>[1] = {}) =>
  issueApiKey(database.db, { plan: 'tight', name: 'customer', ...options })

const decide = (app: FastifyInstance, payload: object, token = tokens.service) =>
  app.inject({ method: 'POST', url: '/v1/decisions', headers: bearer(token), payload })

const ask = (key: IssuedApiKey | string, extra: object = {}) => ({
  key: typeof key === 'string' ? key : key.key,
  method: 'GET',
  path: '/v1/orders',
  ...extra
})

describe('POST /v1/decisions', () => {
  it("admits and charges the plan's cost for the route, and refuses with the headers the pets API would send", async () => {
    const clock = await holdDatabaseClock(database)
    const key = await tightKey({ metadata: { customer: 'c-42' } })
    const first = await decide(a, ask(key))
    expect(first.statusCode, first.body).toBe(200)
    expect(first.json()).toEqual({
      admitted: true,
      code: null,
      accountId: Number(key.accountId),
      keyId: Number(key.id),
      scopes: ['pets:read', 'pets:write'],
      metadata: { customer: 'c-42' },
      headers: {
        'ratelimit-policy': '"minute";q=5;w=60',
        ratelimit: expect.stringMatching(/^"minute";r=3;t=\d+$/),
        'retry-after': null
      }
    })
    // The pets API charges the same account: 2 + 1 + 2 = 5 units, then nothing is left.
    const pets = await a.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key.key) })
    expect(pets.headers['x-ratelimit-remaining']).toBe('2')
    expect((await decide(b, ask(key))).json()).toMatchObject({
      admitted: true,
      headers: { ratelimit: expect.stringMatching(/r=0;/) }
    })
    const refused = await decide(a, ask(key))
    const secondsLeft = Math.ceil((60_000 - (clock() % 60_000)) / 1000)
    expect(refused.json()).toMatchObject({
      admitted: false,
      code: 'rate_limited',
      headers: {
        'ratelimit-policy': '"minute";q=5;w=60',
        ratelimit: `"minute";r=0;t=${secondsLeft}`,
        'retry-after': String(secondsLeft)
      }
    })
    const petsRefused = await a.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key.key) })
    expect(petsRefused.statusCode).toBe(429)
    expect(petsRefused.headers['retry-after']).toBe(String(secondsLeft))
  })

  it('charges a given cost, a template of the costs, or 1 for a route the plan does not name', async () => {
    await holdDatabaseClock(database)
    const key = await tightKey()
    const remaining = async (extra: object) => (await decide(a, ask(key, extra))).json().headers.ratelimit as string
    expect(await remaining({ path: '/v1/orders/42?expand=items' })).toMatch(/r=2;/)
    expect(await remaining({ path: '/v1/anything', method: 'DELETE' })).toMatch(/r=1;/)
    expect(await remaining({ cost: 0 })).toMatch(/r=1;/)
    expect(await remaining({ cost: 1 })).toMatch(/r=0;/)
    expect((await decide(a, ask(key, { cost: 1 }))).json().code).toBe('rate_limited')
  })

  it('is exact across instances: a limit of 5 admits 5 of 12 sent at once to two instances', async () => {
    await holdDatabaseClock(database)
    const key = await tightKey()
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => decide(i % 2 === 0 ? a : b, ask(key, { cost: 1 })))
    )
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(12).fill(200))
    expect(answers.filter((answer) => answer.json().admitted === true)).toHaveLength(5)
  })

  it("bans the customer's key that keeps asking while refused, on the pets API too", async () => {
    await holdDatabaseClock(database)
    const key = await tightKey()
    const codes: (string | null)[] = []
    for (let i = 0; i < 9; i++) codes.push((await decide(a, ask(key, { cost: 1 }))).json().code)
    // 5 admitted, the first refusal, BAN_AFTER (2) more, then the ban.
    expect(codes).toEqual([null, null, null, null, null, 'rate_limited', 'rate_limited', 'rate_limited', 'key_banned'])
    const banned = await decide(b, ask(key))
    // BAN_SECONDS from the ban's instant, as this instance measures the database's clock.
    expect(banned.json()).toMatchObject({
      admitted: false,
      code: 'key_banned',
      headers: { 'retry-after': expect.stringMatching(/^(300|301)$/) }
    })
    const pets = await b.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key.key) })
    expect(pets.statusCode).toBe(429)
    expect(pets.json().code).toBe('key_banned')
  })

  it('answers invalid_key, and nothing more, for an unknown, revoked, expired or malformed key', async () => {
    const revoked = await tightKey()
    await revokeApiKey(database.db, revoked.id)
    const expired = await tightKey()
    await sql`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = ${expired.id}`.execute(
      database.db
    )
    await a.keyCache.caughtUp()
    const live = await tightKey()
    // Well formed, its checksum right, and no key: one character changed in a live key's secret.
    const unknown = live.key.replace(/_(.)/, (_m, c: string) => `_${c === 'a' ? 'b' : 'a'}`)
    for (const key of [revoked.key, expired.key, unknown, 'ask_not-a-key', 'x']) {
      const answer = await decide(a, ask(key))
      expect(answer.statusCode, key).toBe(200)
      expect(answer.json(), key).toEqual({ admitted: false, code: 'invalid_key' })
    }
  })

  it('admits a key with allowed addresses only from one of them, and charges nothing otherwise', async () => {
    await holdDatabaseClock(database)
    const key = await tightKey({ allowedAddresses: ['203.0.113.0/24'] })
    for (const extra of [{}, { address: '198.51.100.7' }, { address: 'nonsense' }]) {
      expect((await decide(a, ask(key, extra))).json()).toMatchObject({
        admitted: false,
        code: 'address_not_allowed',
        keyId: Number(key.id),
        headers: { 'ratelimit-policy': null, ratelimit: null, 'retry-after': null }
      })
    }
    expect((await decide(a, ask(key, { address: '203.0.113.9' }))).json()).toMatchObject({
      admitted: true,
      headers: { ratelimit: expect.stringMatching(/r=3;/) }
    })
  })

  it('needs an operator token of the role service: without one 401, with another role 403, a customer key 401', async () => {
    const key = await tightKey()
    const cases: [InjectOptions['headers'], number, object, string | undefined][] = [
      [{}, 401, { code: 'unauthorized' }, 'Bearer realm="animal-store"'],
      [bearer(key.key), 401, { code: 'unauthorized' }, 'Bearer realm="animal-store", error="invalid_token"'],
      [bearer(ADMIN_TOKEN), 401, { code: 'unauthorized' }, 'Bearer realm="animal-store", error="invalid_token"'],
      [
        bearer(tokens.viewer),
        403,
        { code: 'insufficient_role', message: 'This needs the role service; viewer-caller is viewer' },
        undefined
      ]
    ]
    for (const [headers, status, body, challenge] of cases) {
      const response = await a.inject({ method: 'POST', url: '/v1/decisions', headers, payload: ask(key) })
      expect(response.statusCode, response.body).toBe(status)
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(response.json()).toMatchObject({ ...body, status })
      expect(response.headers['www-authenticate']).toBe(challenge)
    }
    // Nothing was charged to the customer's key by those.
    expect((await decide(a, ask(key, { cost: 5 }))).json().admitted).toBe(true)
  })

  it("gives the service's token nothing else: the pets API answers 401, the admin API 403", async () => {
    const pets = await a.inject({ method: 'GET', url: '/v1/pets', headers: bearer(tokens.service) })
    expect(pets.statusCode).toBe(401)
    expect(pets.json()).toMatchObject({ code: 'unauthorized', status: 401 })
    for (const [url, role] of [
      ['/admin/v1/keys', 'viewer'],
      ['/admin/v1/operators', 'admin']
    ]) {
      const response = await admin.inject({ method: 'GET', url: url!, headers: bearer(tokens.service) })
      expect(response.statusCode).toBe(403)
      expect(response.json()).toEqual({
        code: 'insufficient_role',
        message: `This needs the role ${role}; service-caller is service`,
        status: 403
      })
    }
  })

  it('refuses a malformed body with 400, and other methods with 405, to the service alone', async () => {
    const key = await tightKey()
    for (const payload of [
      { key: key.key, method: 'get', path: '/v1/orders' },
      { key: key.key, method: 'GET', path: 'v1' },
      { key: key.key, method: 'GET', path: '/', cost: 1001 },
      { key: key.key, method: 'GET', path: '/', other: 1 }
    ]) {
      const response = await decide(a, payload)
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json()).toMatchObject({ code: 'invalid_request', status: 400 })
    }
    const other = await a.inject({ method: 'GET', url: '/v1/decisions', headers: bearer(tokens.service) })
    expect(other.statusCode).toBe(405)
    expect(other.headers.allow).toBe('POST')
    const anonymous = await a.inject({ method: 'GET', url: '/v1/decisions' })
    expect(anonymous.statusCode).toBe(401)
  })
})

describe('GET /v1/authorize', () => {
  const authorize = (app: FastifyInstance, key: string | undefined, uri: string, method = 'GET') =>
    app.inject({
      method: 'GET',
      url: '/v1/authorize',
      headers: { ...(key === undefined ? {} : bearer(key)), 'x-original-method': method, 'x-original-uri': uri }
    })

  it("answers 200 with the key's account, id and scopes in headers, charged at the original route's cost", async () => {
    await holdDatabaseClock(database)
    const key = await tightKey({ scopes: ['pets:read'] })
    const response = await authorize(a, key.key, '/v1/orders/7?x=1')
    expect(response.statusCode, response.body).toBe(200)
    expect(response.headers['x-account-id']).toBe(String(key.accountId))
    expect(response.headers['x-key-id']).toBe(String(key.id))
    expect(response.headers['x-scopes']).toBe('pets:read')
    expect(response.headers['ratelimit-policy']).toBe('"minute";q=5;w=60')
    expect(response.headers['x-ratelimit-remaining']).toBe('2')
    expect(response.json()).toEqual({ accountId: Number(key.accountId), keyId: Number(key.id), scopes: ['pets:read'] })
  })

  it('refuses with 429, Retry-After and the code in X-Error-Code once the limit is spent', async () => {
    const clock = await holdDatabaseClock(database)
    const key = await tightKey()
    expect((await authorize(b, key.key, '/v1/orders')).statusCode).toBe(200)
    expect((await authorize(a, key.key, '/v1/orders')).statusCode).toBe(200)
    const refused = await authorize(a, key.key, '/v1/orders')
    const secondsLeft = Math.ceil((60_000 - (clock() % 60_000)) / 1000)
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBe(String(secondsLeft))
    expect(refused.headers['x-error-code']).toBe('rate_limited')
    expect(refused.headers['x-account-id']).toBeUndefined()
    expect(refused.json()).toEqual({
      code: 'rate_limited',
      message: `Rate limit exceeded: 5 a minute; retry in ${secondsLeft} s`,
      status: 429
    })
  })

  it('answers 401 with the challenge without a valid key, and 400 without the original request', async () => {
    const missing = await authorize(a, undefined, '/v1/orders')
    expect(missing.statusCode).toBe(401)
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="animal-store"')
    expect(missing.headers['x-error-code']).toBe('unauthorized')
    expect(missing.json()).toMatchObject({ code: 'unauthorized', status: 401 })
    const key = await tightKey()
    for (const headers of [
      { 'x-original-uri': '/v1/orders' },
      { 'x-original-method': 'GET' },
      { 'x-original-method': 'GET', 'x-original-uri': 'orders' }
    ]) {
      const response = await a.inject({
        method: 'GET',
        url: '/v1/authorize',
        headers: { ...bearer(key.key), ...headers }
      })
      expect(response.statusCode).toBe(400)
      expect(response.headers['x-error-code']).toBe('invalid_request')
      expect(response.json()).toEqual({
        code: 'invalid_request',
        message: expect.stringMatching(/^X-Original-(Method|URI) must /),
        status: 400
      })
    }
  })

  it('answers another method with 405 and the code in X-Error-Code, charged 1 as any request, whatever it names', async () => {
    await holdDatabaseClock(database)
    const key = await tightKey()
    for (const headers of [{}, { 'x-original-method': 'GET', 'x-original-uri': '/v1/orders/7' }]) {
      const response = await a.inject({
        method: 'POST',
        url: '/v1/authorize',
        headers: { ...bearer(key.key), ...headers }
      })
      expect(response.statusCode).toBe(405)
      expect(response.headers.allow).toBe('GET, HEAD')
      expect(response.headers['x-error-code']).toBe('method_not_allowed')
      expect(response.json()).toMatchObject({ code: 'method_not_allowed', status: 405 })
    }
    // Two of the five units are spent, one by each; an order costs 2, so two fit.
    expect((await authorize(a, key.key, '/v1/orders')).headers['x-ratelimit-remaining']).toBe('1')
  })

  it('answers 403 address_not_allowed for a key used from elsewhere', async () => {
    const key = await tightKey({ allowedAddresses: ['203.0.113.0/24'] })
    const response = await authorize(a, key.key, '/v1/orders')
    expect(response.statusCode).toBe(403)
    expect(response.headers['x-error-code']).toBe('address_not_allowed')
    expect(response.json()).toEqual({
      code: 'address_not_allowed',
      message: 'This API key may not be used from 127.0.0.1',
      status: 403
    })
  })
})

describe("/v1/authorize/{path}, for a proxy that appends the request's own path (Envoy's ext_authz)", () => {
  const check = (method: string, path: string, key?: string) =>
    a.inject({
      method: method as 'GET',
      url: `/v1/authorize${path}`,
      headers: { ...(key === undefined ? {} : bearer(key)), 'content-length': '0' }
    })

  it("charges the request's own method and the path after the prefix, at its cost, as GET /v1/authorize does", async () => {
    await holdDatabaseClock(database)
    const key = await tightKey({ scopes: ['pets:read'] })
    const read = await check('GET', '/v1/orders/7?x=1', key.key)
    expect(read.statusCode, read.body).toBe(200)
    expect(read.headers).toMatchObject({
      'x-account-id': String(key.accountId),
      'x-key-id': String(key.id),
      'x-scopes': 'pets:read',
      'ratelimit-policy': '"minute";q=5;w=60',
      'x-ratelimit-remaining': '2'
    })
    expect(read.json()).toEqual({ accountId: Number(key.accountId), keyId: Number(key.id), scopes: ['pets:read'] })
    // The plan names no cost for these: 1 each, and HEAD's answer has no body.
    expect((await check('POST', '/v1/orders', key.key)).headers['x-ratelimit-remaining']).toBe('1')
    const head = await check('HEAD', '/v1/orders/7', key.key)
    expect([head.statusCode, head.body, head.headers['x-ratelimit-remaining']]).toEqual([200, '', '0'])
    const refused = await check('DELETE', '/v1/orders/7', key.key)
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['x-error-code']).toBe('rate_limited')
    expect(refused.headers['retry-after']).toBeDefined()
    expect(refused.json()).toMatchObject({ code: 'rate_limited', status: 429 })
  })

  it('answers 401 with the challenge and X-Error-Code without a valid key, whatever the method', async () => {
    for (const method of ['GET', 'PATCH']) {
      const refused = await check(method, '/v1/orders', method === 'GET' ? undefined : 'ask_not-a-key')
      expect(refused.statusCode).toBe(401)
      expect(refused.headers['www-authenticate']).toMatch(/^Bearer realm="animal-store"/)
      expect(refused.headers['x-error-code']).toBe('unauthorized')
      expect(refused.json()).toMatchObject({ code: 'unauthorized', status: 401 })
    }
  })
})
