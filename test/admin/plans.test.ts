import type { FastifyInstance, InjectOptions } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestAdminApp } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

const ADMIN_TOKEN = 'admin-token-of-the-tests-0123456789abcdef'

let database: TestDatabase
let admin: FastifyInstance
beforeAll(async () => {
  database = await createTestDatabase()
  admin = await createTestAdminApp(database, { env: { ADMIN_TOKEN } })
})
afterAll(async () => {
  await admin?.close()
  await database?.drop()
})

const call = (options: InjectOptions) =>
  admin.inject({ ...options, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...options.headers } })
const put = (name: string, payload: unknown, headers: Record<string, string> = {}) =>
  call({ method: 'PUT', url: `/admin/v1/plans/${name}`, payload: payload as object, headers })

/** Everything stored of plans: their rows, limits, costs, audit and webhook events. */
async function stored() {
  const { db } = database
  const [plans, limits, costs, audit, outbox] = await Promise.all([
    db.selectFrom('plans').select(['name', 'updated_at']).orderBy('name').execute(),
    db.selectFrom('plan_limits').selectAll().orderBy(['plan', 'window']).execute(),
    db.selectFrom('plan_costs').selectAll().orderBy(['plan', 'route']).execute(),
    db.selectFrom('audit_events').select(['action', 'actor', 'changes']).orderBy('id').execute(),
    db.selectFrom('webhook_events').select(['type', 'account_id', 'data']).orderBy('id').execute()
  ])
  return { plans, limits, costs, audit, outbox }
}

const GROWTH = {
  limits: [
    { window: 'month', limit: 20000 },
    { window: 'minute', limit: 60, algorithm: 'bucket', burst: 120 },
    { window: 'day', limit: 1000 }
  ],
  costs: { 'POST /v1/pets': 5, 'GET /v1/pets/{petId}': 0 }
}

describe('the seed plans', () => {
  it('are listed in name order with their limits, and none has costs', async () => {
    const response = await call({ method: 'GET', url: '/admin/v1/plans' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^application\/json/)
    const plans = response.json<{ name: string; limits: unknown[]; costs: object }[]>()
    expect(plans.map((plan) => [plan.name, plan.limits, plan.costs])).toEqual([
      [
        'business',
        [
          { window: 'minute', algorithm: 'fixed', limit: 1000, burst: null },
          { window: 'day', algorithm: 'fixed', limit: 100000, burst: null }
        ],
        {}
      ],
      [
        'enterprise',
        [
          { window: 'minute', algorithm: 'fixed', limit: 1000, burst: null },
          { window: 'day', algorithm: 'fixed', limit: 100000, burst: null }
        ],
        {}
      ],
      [
        'free',
        [
          { window: 'minute', algorithm: 'fixed', limit: 60, burst: null },
          { window: 'day', algorithm: 'fixed', limit: 1000, burst: null }
        ],
        {}
      ],
      [
        'pro',
        [
          { window: 'minute', algorithm: 'fixed', limit: 300, burst: null },
          { window: 'day', algorithm: 'fixed', limit: 10000, burst: null }
        ],
        {}
      ]
    ])
  })
})

describe('PUT /admin/v1/plans/{name}', () => {
  it('makes a plan (201), then reads it back, with an audit event naming it and a plan.changed event', async () => {
    const response = await put('growth', GROWTH, { 'x-audit-actor': 'billing' })
    expect(response.statusCode, response.body).toBe(201)
    const plan = response.json()
    expect(plan).toEqual({
      name: 'growth',
      limits: [
        { window: 'minute', algorithm: 'bucket', limit: 60, burst: 120 },
        { window: 'day', algorithm: 'fixed', limit: 1000, burst: null },
        { window: 'month', algorithm: 'fixed', limit: 20000, burst: null }
      ],
      costs: { 'GET /v1/pets/{petId}': 0, 'POST /v1/pets': 5 },
      createdAt: expect.any(String),
      updatedAt: expect.any(String)
    })
    const read = await call({ method: 'GET', url: '/admin/v1/plans/growth' })
    expect(read.statusCode).toBe(200)
    expect(read.json()).toEqual(plan)

    const after = await stored()
    expect(after.limits.filter((row) => row.plan === 'growth')).toEqual([
      { plan: 'growth', window: 'day', algorithm: 'fixed', limit: 1000, burst: null },
      { plan: 'growth', window: 'minute', algorithm: 'bucket', limit: 60, burst: 120 },
      { plan: 'growth', window: 'month', algorithm: 'fixed', limit: 20000, burst: null }
    ])
    expect(after.costs.filter((row) => row.plan === 'growth')).toEqual([
      { plan: 'growth', route: 'GET /v1/pets/{petId}', cost: 0 },
      { plan: 'growth', route: 'POST /v1/pets', cost: 5 }
    ])
    expect(after.audit.at(-1)).toEqual({
      action: 'plan.created',
      actor: 'billing',
      changes: {
        plan: { before: null, after: 'growth' },
        limits: { before: null, after: plan.limits },
        costs: { before: null, after: plan.costs }
      }
    })
    expect(after.outbox.at(-1)).toEqual({
      type: 'plan.changed',
      account_id: null,
      data: { plan: { name: 'growth', limits: plan.limits, costs: plan.costs } }
    })
  })

  it('replaces a plan whole (200), records the change, and records nothing for the same plan put again', async () => {
    expect((await put('swap', GROWTH)).statusCode).toBe(201)
    const changed = await put('swap', { limits: [{ window: 'hour', limit: 500 }] })
    expect(changed.statusCode, changed.body).toBe(200)
    expect(changed.json()).toMatchObject({
      name: 'swap',
      limits: [{ window: 'hour', algorithm: 'fixed', limit: 500, burst: null }],
      costs: {}
    })
    const after = await stored()
    expect(after.limits.filter((row) => row.plan === 'swap')).toEqual([
      { plan: 'swap', window: 'hour', algorithm: 'fixed', limit: 500, burst: null }
    ])
    expect(after.costs.filter((row) => row.plan === 'swap')).toEqual([])
    expect(after.audit.at(-1)).toMatchObject({
      action: 'plan.changed',
      actor: 'admin',
      changes: {
        plan: { before: 'swap', after: 'swap' },
        limits: { after: [{ window: 'hour', algorithm: 'fixed', limit: 500, burst: null }] },
        costs: { before: { 'GET /v1/pets/{petId}': 0, 'POST /v1/pets': 5 }, after: {} }
      }
    })
    expect(after.outbox.at(-1)).toMatchObject({ type: 'plan.changed', data: { plan: { name: 'swap' } } })

    const again = await put('swap', { limits: [{ window: 'hour', limit: 500, algorithm: 'fixed' }], costs: {} })
    expect(again.statusCode).toBe(200)
    expect(again.json()).toEqual(changed.json())
    expect(await stored()).toEqual(after)
  })

  it('changes a seed plan, as any other', async () => {
    const response = await put('free', {
      limits: [
        { window: 'minute', limit: 60 },
        { window: 'day', limit: 1000 },
        { window: 'month', limit: 20000 }
      ]
    })
    expect(response.statusCode).toBe(200)
    expect(response.json().limits).toHaveLength(3)
  })

  it.each([
    ['Gold', GROWTH, "A plan's name is 1 to 40 lowercase letters, digits and hyphens, not 'Gold'"],
    ['a'.repeat(41), GROWTH, "A plan's name is 1 to 40 lowercase letters, digits and hyphens"],
    ['bad', { limits: [] }, 'limits must NOT have fewer than 1 items'],
    [
      'bad',
      { limits: ['second', 'minute', 'hour', 'day', 'month', 'day'].map((window) => ({ window, limit: 1 })) },
      'limits must NOT have more than 5 items'
    ],
    [
      'bad',
      {
        limits: [
          { window: 'day', limit: 5 },
          { window: 'day', limit: 6 }
        ]
      },
      'limits has two limits for the day; one per window'
    ],
    [
      'bad',
      { limits: [{ window: 'week', limit: 5 }] },
      'limits.0.window must be one of second, minute, hour, day, month'
    ],
    ['bad', { limits: [{ window: 'day', limit: 0 }] }, 'limits.0.limit must be an integer from 1 to 2000000000'],
    [
      'bad',
      { limits: [{ window: 'day', limit: 2_000_000_001 }] },
      'limits.0.limit must be an integer from 1 to 2000000000'
    ],
    ['bad', { limits: [{ window: 'day', limit: 1.5 }] }, 'limits.0.limit must be an integer'],
    ['bad', { limits: [{ window: 'day', limit: 5, algorithm: 'sliding' }] }, 'limits.0.algorithm'],
    ['bad', { limits: [{ window: 'day', limit: 5, burst: 10 }] }, 'limits[0].burst is for a bucket'],
    ['bad', { limits: [{ window: 'day', limit: 5, cost: 10 }] }, "body has an unknown property 'cost'"],
    ['bad', { limits: [{ limit: 5 }] }, "body is missing the required property 'window'"],
    ['bad', { costs: {} }, "body is missing the required property 'limits'"],
    [
      'bad',
      { limits: [{ window: 'day', limit: 5 }], costs: { 'DELETE /v1/pets/{petId}': 1 } },
      "costs names 'DELETE /v1/pets/{petId}', which is no route of the public API"
    ],
    [
      'bad',
      { limits: [{ window: 'day', limit: 5 }], costs: { 'GET /v1/pets/:petId': 1 } },
      "costs names 'GET /v1/pets/:petId', which is no route of the public API"
    ],
    [
      'bad',
      { limits: [{ window: 'day', limit: 5 }], costs: { 'POST /v1/pets': 1001 } },
      'must be an integer from 0 to 1000'
    ],
    [
      'bad',
      { limits: [{ window: 'day', limit: 5 }], costs: { 'POST /v1/pets': -1 } },
      'must be an integer from 0 to 1000'
    ],
    ['bad', { limits: [{ window: 'day', limit: 5 }], costs: { '/v1/pets': 1 } }, "costs names '/v1/pets'"],
    ['free', { limits: [{ window: 'day', limit: 5 }], extra: 1 }, "body has an unknown property 'extra'"]
  ])('refuses %s %j with 400 naming what is wrong, and changes nothing', async (name, body, message) => {
    const before = await stored()
    const response = await put(name, body)
    expect(response.statusCode, response.body).toBe(400)
    expect(response.headers['content-type']).toMatch(/^application\/json/)
    expect(response.json()).toEqual({ code: 'invalid_request', message: expect.stringContaining(message), status: 400 })
    expect(await stored()).toEqual(before)
  })

  it('applies PUTs of one new plan sent at once one after the other: one 201, the others 200, never a 500', async () => {
    const responses = await Promise.all(
      [1, 2, 3, 4].map((n) => put('racing', { limits: [{ window: 'minute', limit: n }] }))
    )
    expect(responses.map((response) => response.statusCode).sort()).toEqual([200, 200, 200, 201])
    const { limits, audit } = await stored()
    expect(limits.filter((row) => row.plan === 'racing')).toHaveLength(1)
    expect(
      audit.filter((event) => (event.changes as { plan?: { after?: string } }).plan?.after === 'racing')
    ).toHaveLength(4)
  })
})

describe('GET /admin/v1/plans/{name}', () => {
  it.each(['gold', 'Not-A-Name!'])('answers 404 for %s', async (name) => {
    const response = await call({ method: 'GET', url: `/admin/v1/plans/${encodeURIComponent(name)}` })
    expect(response.statusCode).toBe(404)
    expect(response.json()).toEqual({ code: 'not_found', message: `No plan is named '${name}'`, status: 404 })
  })

  it('answers 401 without the token', async () => {
    expect((await admin.inject({ method: 'GET', url: '/admin/v1/plans' })).statusCode).toBe(401)
  })
})

describe('a plan name on accounts and keys', () => {
  it('may be any existing plan; an unknown one is 400 "No plan is named" and makes nothing', async () => {
    expect((await put('starter', { limits: [{ window: 'day', limit: 100 }] })).statusCode).toBe(201)
    const account = await call({ method: 'POST', url: '/admin/v1/accounts', payload: { plan: 'starter' } })
    expect(account.statusCode, account.body).toBe(201)
    expect(account.json()).toMatchObject({
      plan: 'starter',
      perMinute: null,
      perDay: 100,
      overrides: [],
      credits: null
    })
    const count = async () =>
      (await sql<{ n: string }>`SELECT count(*) AS n FROM accounts`.execute(database.db)).rows[0]!.n
    const before = await count()
    for (const [method, url, payload] of [
      ['POST', '/admin/v1/accounts', { plan: 'gold' }],
      ['POST', '/admin/v1/keys', { plan: 'gold' }],
      ['PATCH', `/admin/v1/accounts/${account.json().id}`, { plan: 'gold' }]
    ] as const) {
      const response = await call({ method, url, payload })
      expect(response.statusCode, `${method} ${url}`).toBe(400)
      expect(response.json()).toEqual({ code: 'invalid_request', message: "No plan is named 'gold'", status: 400 })
    }
    expect(await count()).toBe(before)
    const read = await call({ method: 'GET', url: `/admin/v1/accounts/${account.json().id}` })
    expect(read.json().plan).toBe('starter')
  })
})
