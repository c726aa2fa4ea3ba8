import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startNginxAuthRequest, type Nginx } from '../../harness/programs.js'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { ADMIN_TOKEN, createTestAdminApp, createTestApp } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { describeWith } from '../helpers/requirements.js'
import { bearer, holdDatabaseClock } from '../helpers/traffic.js'

// Debian's nginx running deploy/nginx-auth-request.conf in front of a service that knows nothing of
// keys, asking two instances of the store on one database before each request.
let database: TestDatabase
let a: FastifyInstance
let b: FastifyInstance
let service: Server
let lb: Nginx
/** What reached the service behind nginx. */
const reached: { method: string; url: string; headers: IncomingHttpHeaders }[] = []

const LIMIT = 5
const BAN_SECONDS = 600

async function listen(app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return (app.server.address() as AddressInfo).port
}

/** Requests with a valid key each instance counted, admitted and refused, for the plan `gate`. */
async function counted(app: FastifyInstance) {
  const text = await app.metrics.registry.metrics()
  const figure = (outcome: string) =>
    Number(
      new RegExp(`^animal_store_key_requests_total\\{plan="gate",outcome="${outcome}"\\} (\\d+)$`, 'm').exec(
        text
      )?.[1] ?? 0
    )
  return figure('admitted') + figure('refused')
}

describeWith('nginx')('nginx auth_request in front of another service', () => {
  beforeAll(async () => {
    database = await createTestDatabase()
    const admin = await createTestAdminApp(database)
    const plan = await admin.inject({
      method: 'PUT',
      url: '/admin/v1/plans/gate',
      headers: bearer(ADMIN_TOKEN),
      payload: { limits: [{ window: 'minute', limit: LIMIT }], costs: { 'POST /orders': 5 } }
    })
    expect(plan.statusCode, plan.body).toBe(201)
    await admin.close()
    // nginx asks from 127.0.0.1, the one peer whose X-Forwarded-For the instances believe.
    const env = { TRUST_PROXY: '127.0.0.1', BAN_AFTER: '3', BAN_SECONDS: String(BAN_SECONDS) }
    ;[a, b] = await Promise.all([createTestApp(database, { env }), createTestApp(database, { env })])
    service = createServer((request, response) => {
      reached.push({ method: request.method!, url: request.url!, headers: request.headers })
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"orders":[]}')
    })
    await new Promise<void>((done) => service.listen(0, '127.0.0.1', done))
    lb = await startNginxAuthRequest([await listen(a), await listen(b)], (service.address() as AddressInfo).port)
  })
  afterAll(async () => {
    await lb?.stop()
    await new Promise((done) => service?.close(done))
    await Promise.all([a?.close(), b?.close()])
    await database?.drop()
  })

  it("passes an admitted request on with the key's account, id and scopes, never the key, and the rate-limit headers back", async () => {
    await holdDatabaseClock(database)
    const key = await issueApiKey(database.db, { plan: 'gate', scopes: ['pets:read'] })
    reached.length = 0
    const response = await fetch(`${lb.url}/orders/7?expand=items`, { headers: bearer(key.key) })
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ orders: [] })
    expect(response.headers.get('ratelimit-policy')).toBe(`"minute";q=${LIMIT};w=60`)
    expect(response.headers.get('ratelimit')).toMatch(new RegExp(`^"minute";r=${LIMIT - 1};t=\\d+$`))
    expect(reached).toHaveLength(1)
    expect(reached[0]).toMatchObject({ method: 'GET', url: '/orders/7?expand=items' })
    expect(reached[0]!.headers).toMatchObject({
      'x-account-id': String(key.accountId),
      'x-key-id': String(key.id),
      'x-scopes': 'pets:read'
    })
    expect(reached[0]!.headers.authorization).toBeUndefined()
  })

  it('answers 401 with the challenge and the Error body without a valid key, and the service never hears of it', async () => {
    reached.length = 0
    for (const [headers, challenge] of [
      [{}, 'Bearer realm="animal-store"'],
      [bearer('ask_not-a-key'), 'Bearer realm="animal-store", error="invalid_token"']
    ] as const) {
      const response = await fetch(`${lb.url}/orders`, { headers })
      expect(response.status).toBe(401)
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
      // Once: nginx's own copy of the challenge and the one it adds would be joined with a comma.
      expect(response.headers.get('www-authenticate')).toBe(challenge)
      expect(await response.json()).toEqual({
        code: 'unauthorized',
        message: 'A valid API key is required: send Authorization: Bearer <key>',
        status: 401
      })
    }
    expect(reached).toHaveLength(0)
  })

  it('admits exactly the limit across two instances, and carries the 429 and its Retry-After to the client', async () => {
    const clock = await holdDatabaseClock(database)
    const key = await issueApiKey(database.db, { plan: 'gate' })
    const before = (await counted(a)) + (await counted(b))
    reached.length = 0
    const responses = await Promise.all(
      Array.from({ length: LIMIT + 7 }, () => fetch(`${lb.url}/orders`, { headers: bearer(key.key) }))
    )
    const byStatus = responses.map((response) => response.status).sort()
    expect(byStatus).toEqual([...Array(LIMIT).fill(200), ...Array(7).fill(429)])
    expect(reached).toHaveLength(LIMIT)
    // Both instances decided some of them: nginx balanced the checks.
    expect([await counted(a), await counted(b)].every((figure) => figure > 0)).toBe(true)
    expect((await counted(a)) + (await counted(b)) - before).toBe(LIMIT + 7)

    const refused = responses.find((response) => response.status === 429)!
    const secondsLeft = Math.ceil((60_000 - (clock() % 60_000)) / 1000)
    expect(refused.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(secondsLeft - 1)
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(secondsLeft)
    expect(refused.headers.get('ratelimit')).toMatch(/^"minute";r=0;t=\d+$/)
    expect(await refused.json()).toMatchObject({
      code: expect.stringMatching(/^(rate_limited|key_banned)$/),
      status: 429
    })
  })

  it("charges a route's cost from the plan, and bans a key that keeps sending while refused", async () => {
    await holdDatabaseClock(database)
    const key = await issueApiKey(database.db, { plan: 'gate' })
    const send = () => fetch(`${lb.url}/orders`, { method: 'POST', headers: bearer(key.key) })
    // POST /orders costs the whole minute.
    expect((await send()).status).toBe(200)
    const codes: string[] = []
    for (let i = 0; i < 5; i++) {
      const response = await send()
      expect(response.status).toBe(429)
      codes.push(((await response.json()) as { code: string }).code)
    }
    // The first refusal, BAN_AFTER (3) more, then the ban.
    expect(codes).toEqual(['rate_limited', 'rate_limited', 'rate_limited', 'rate_limited', 'key_banned'])
    const banned = await fetch(`${lb.url}/orders`, { headers: bearer(key.key) })
    expect(banned.status).toBe(429)
    expect(Number(banned.headers.get('retry-after'))).toBeGreaterThanOrEqual(BAN_SECONDS - 1)
    expect(Number(banned.headers.get('retry-after'))).toBeLessThanOrEqual(BAN_SECONDS + 1)
    expect(await banned.json()).toEqual({
      code: 'key_banned',
      message: 'This API key is banned for sending requests while rate limited',
      status: 429
    })
  })

  it('answers 403 for a key used from an address it does not allow', async () => {
    const key = await issueApiKey(database.db, { plan: 'gate', allowedAddresses: ['203.0.113.0/24'] })
    const response = await fetch(`${lb.url}/orders`, { headers: bearer(key.key) })
    expect(response.status).toBe(403)
    expect(await response.json()).toEqual({
      code: 'address_not_allowed',
      message: 'This API key may not be used from this address',
      status: 403
    })
  })
})
