import type { InjectOptions } from 'fastify'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { asAdmin, useTestAdminApp } from '../helpers/app.js'

const context = useTestAdminApp()

const call = (options: InjectOptions) => asAdmin(context.admin).inject(options)
const put = (name: string, payload: unknown, headers: Record<string, string> = {}) =>
  call({ method: 'PUT', url: `/admin/v1/plans/${name}`, payload: payload as object, headers })

/** Everything stored of plans: their rows, limits, costs, audit and webhook events. */
async function stored() {
  const { db } = context.database
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
    { window: 'month', limit: 20000, anchor: 'account' },
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
          { window: 'minute', algorithm: 'fixed', limit: 1000, burst: null, shadow: false },
          { window: 'day', algorithm: 'fixed', limit: 100000, burst: null, shadow: false }
        ],
        {}
      ],
      [
        'enterprise',
        [
          { window: 'minute', algorithm: 'fixed', limit: 1000, burst: null, shadow: false },
          { window: 'day', algorithm: 'fixed', limit: 100000, burst: null, shadow: false }
        ],
        {}
      ],
      [
        'free',
        [
          { window: 'minute', algorithm: 'fixed', limit: 60, burst: null, shadow: false },
          { window: 'day', algorithm: 'fixed', limit: 1000, burst: null, shadow: false }
        ],
        {}
      ],
      [
        'pro',
        [
          { window: 'minute', algorithm: 'fixed', limit: 300, burst: null, shadow: false },
          { window: 'day', algorithm: 'fixed', limit: 10000, burst: null, shadow: false }
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
        { window: 'minute', algorithm: 'bucket', limit: 60, burst: 120, shadow: false },
        { window: 'day', algorithm: 'fixed', limit: 1000, burst: null, shadow: false },
        { window: 'month', algorithm: 'fixed', limit: 20000, burst: null, anchor: 'account', shadow: false }
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
      {
        plan: 'growth',
        window: 'day',
        algorithm: 'fixed',
        limit: 1000,
        burst: null,
        shadow: false,
        anchor: 'calendar'
      },
      {
        plan: 'growth',
        window: 'minute',
        algorithm: 'bucket',
        limit: 60,
        burst: 120,
        shadow: false,
        anchor: 'calendar'
      },
      {
        plan: 'growth',
        window: 'month',
        algorithm: 'fixed',
        limit: 20000,
        burst: null,
        shadow: false,
        anchor: 'account'
      }
    ])
    expect(after.costs.filter((row) => row.plan === 'growth')).toEqual([
      { plan: 'growth', route: 'GET /v1/pets/{petId}', cost: 0 },
      { plan: 'growth', route: 'POST /v1/pets', cost: 5 }
    ])
    expect(after.audit.at(-1)).toEqual({
      action: 'plan.created',
      actor: 'bootstrap',
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
      limits: [{ window: 'hour', algorithm: 'fixed', limit: 500, burst: null, shadow: false }],
      costs: {}
    })
    const after = await stored()
    expect(after.limits.filter((row) => row.plan === 'swap')).toEqual([
      { plan: 'swap', window: 'hour', algorithm: 'fixed', limit: 500, burst: null, shadow: false, anchor: 'calendar' }
    ])
    expect(after.costs.filter((row) => row.plan === 'swap')).toEqual([])
    expect(after.audit.at(-1)).toMatchObject({
      action: 'plan.changed',
      actor: 'bootstrap',
      changes: {
        plan: { before: 'swap', after: 'swap' },
        limits: { after: [{ window: 'hour', algorithm: 'fixed', limit: 500, burst: null, shadow: false }] },
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
      {
        limits: [
          ...['second', 'minute', 'hour', 'day', 'month'].flatMap((window) => [
            { window, limit: 1 },
            { window, limit: 1, shadow: true }
          ]),
          { window: 'day', limit: 1 }
        ]
      },
      'limits must NOT have more than 10 items'
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
    [
      'bad',
      { limits: [{ window: 'day', limit: 5, anchor: 'account' }] },
      'limits[0].anchor account is for a fixed month; other windows follow the calendar'
    ],
    [
      'bad',
      { limits: [{ window: 'month', limit: 5, algorithm: 'bucket', anchor: 'account' }] },
      'limits[0].anchor account is for a fixed month'
    ],
    [
      'bad',
      { limits: [{ window: 'month', limit: 5, anchor: 'billing' }] },
      'limits.0.anchor must be one of calendar, account'
    ],
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
    [
      'bad',
      { limits: [{ window: 'day', limit: 5 }], costs: { 'get /v1/orders': 1 } },
      "costs names 'get /v1/orders', which is no route: a method in capitals, a space, a path from /"
    ],
    [
      'bad',
      { limits: [{ window: 'day', limit: 5 }], costs: { 'GET /v1/keys/{id}': 1 } },
      "costs names 'GET /v1/keys/{id}', which is no route of the public API"
    ],
    ['free', { limits: [{ window: 'day', limit: 5 }], extra: 1 }, "body has an unknown property 'extra'"]
  ])('refuses %s %j with 400 naming what is wrong, and changes nothing', async (name, body, message) => {
    const before = await stored()
    const response = await put(name, body)
    expect(response.statusCode, response.body).toBe(400)
    expect(response.headers['content-type']).toMatch(/^application\/json/)
    expect(response.json()).toEqual({ code: 'invalid_request', message: expect.stringContaining(message), status: 400 })
    expect(await stored()).toEqual(before)
  })

  it('takes costs for routes of other services, which decisions and authorize charge', async () => {
    const costs = { 'GET /v1/orders': 2, 'GET /v1/orders/{id}': 3, 'POST /reports': 10 }
    const response = await put('services', { limits: [{ window: 'minute', limit: 100 }], costs })
    expect(response.statusCode, response.body).toBe(201)
    expect(response.json().costs).toEqual({ 'GET /v1/orders': 2, 'GET /v1/orders/{id}': 3, 'POST /reports': 10 })
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
    expect((await context.admin.inject({ method: 'GET', url: '/admin/v1/plans' })).statusCode).toBe(401)
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
      (await sql<{ n: string }>`SELECT count(*) AS n FROM accounts`.execute(context.database.db)).rows[0]!.n
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

/** An account's stored overrides and credits, and its events. */
async function accountRows(id: number | string) {
  const { db } = context.database
  const accountId = BigInt(id)
  const [account, overrides, credits, audit, outbox] = await Promise.all([
    db.selectFrom('accounts').select(['plan']).where('id', '=', accountId).executeTakeFirst(),
    db
      .selectFrom('account_limit_overrides')
      .select(['window', 'algorithm', 'limit', 'burst', 'until'])
      .where('account_id', '=', accountId)
      .orderBy('window')
      .execute(),
    db
      .selectFrom('account_credits')
      .select(['remaining', 'refill_amount', 'refill_every'])
      .where('account_id', '=', accountId)
      .executeTakeFirst(),
    db
      .selectFrom('audit_events')
      .select(['action', 'changes'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute(),
    db.selectFrom('webhook_events').select(['type', 'data']).where('account_id', '=', accountId).orderBy('id').execute()
  ])
  return { account, overrides, credits, audit, outbox }
}

const newAccount = async (payload: Record<string, unknown>) => {
  const response = await call({ method: 'POST', url: '/admin/v1/accounts', payload })
  expect(response.statusCode, response.body).toBe(201)
  return response.json<{ id: number; overrides: unknown[]; credits: unknown; cycleAnchor: string }>()
}
const patch = (id: number, payload: unknown) =>
  call({ method: 'PATCH', url: `/admin/v1/accounts/${id}`, payload: payload as object })

describe('overrides', () => {
  it('replace the account’s limits for their windows, for good or until an instant, shown on its GET', async () => {
    const account = await newAccount({ plan: 'pro' })
    expect(account).toMatchObject({ plan: 'pro', perMinute: 300, perDay: 10000, overrides: [], credits: null })
    const response = await patch(account.id, {
      overrides: [
        { window: 'day', limit: 50000, until: '2099-01-01T00:00:00Z' },
        { window: 'minute', limit: 40, algorithm: 'bucket', burst: 80 }
      ]
    })
    expect(response.statusCode, response.body).toBe(200)
    const overrides = [
      { window: 'minute', algorithm: 'bucket', limit: 40, burst: 80, until: null },
      { window: 'day', algorithm: 'fixed', limit: 50000, burst: null, until: '2099-01-01T00:00:00.000Z' }
    ]
    expect(response.json()).toMatchObject({ plan: 'pro', perMinute: 40, perDay: 50000, overrides })
    const read = await call({ method: 'GET', url: `/admin/v1/accounts/${account.id}` })
    expect(read.json()).toEqual(response.json())

    const rows = await accountRows(account.id)
    expect(rows.overrides).toEqual([
      { window: 'day', algorithm: 'fixed', limit: 50000, burst: null, until: new Date('2099-01-01T00:00:00Z') },
      { window: 'minute', algorithm: 'bucket', limit: 40, burst: 80, until: null }
    ])
    expect(rows.audit.at(-1)).toEqual({
      action: 'account.changed',
      changes: {
        perMinute: { before: 300, after: 40 },
        perDay: { before: 10000, after: 50000 },
        overrides: { before: [], after: overrides }
      }
    })
    expect(rows.outbox.at(-1)).toEqual({
      type: 'plan.changed',
      data: {
        account: { id: String(account.id), cycleAnchor: account.cycleAnchor },
        plan: { name: 'pro', limits: overrides, costs: {} }
      }
    })

    // An empty list removes them; the plan's limits are back.
    const cleared = await patch(account.id, { overrides: [] })
    expect(cleared.json()).toMatchObject({ perMinute: 300, perDay: 10000, overrides: [] })
    expect((await accountRows(account.id)).overrides).toEqual([])
  })

  it('no longer apply past their until, by the database clock', async () => {
    const account = await newAccount({ plan: 'pro', overrides: [{ window: 'day', limit: 7 }] })
    expect(account).toMatchObject({ perDay: 7 })
    await sql`UPDATE account_limit_overrides SET until = now() - interval '1 second' WHERE account_id = ${BigInt(account.id)}`.execute(
      context.database.db
    )
    const read = await call({ method: 'GET', url: `/admin/v1/accounts/${account.id}` })
    expect(read.json()).toMatchObject({ perDay: 10000, overrides: [{ window: 'day', limit: 7 }] })
  })

  it('are what perMinute and perDay stand for, on any plan; a move to another plan drops them', async () => {
    const account = await newAccount({ plan: 'free', perMinute: 10 })
    expect(account).toMatchObject({
      plan: 'free',
      perMinute: 10,
      perDay: 1000,
      overrides: [{ window: 'minute', algorithm: 'fixed', limit: 10, burst: null, until: null }]
    })
    const enterprise = await newAccount({ plan: 'enterprise' })
    expect(enterprise).toMatchObject({ plan: 'enterprise', perMinute: 1000, perDay: 100000, overrides: [] })

    const day = await patch(account.id, { perDay: 20 })
    expect(day.json()).toMatchObject({ perMinute: 10, perDay: 20 })
    const moved = await patch(account.id, { plan: 'pro' })
    expect(moved.json()).toMatchObject({ plan: 'pro', perMinute: 300, perDay: 10000, overrides: [] })
    expect((await accountRows(account.id)).outbox.at(-1)).toMatchObject({
      type: 'plan.changed',
      data: { account: { id: String(account.id) }, plan: { name: 'pro' } }
    })
    const kept = await patch(account.id, { plan: 'business', overrides: [{ window: 'hour', limit: 5 }] })
    expect(kept.json()).toMatchObject({ plan: 'business', overrides: [{ window: 'hour', limit: 5 }] })
  })

  it.each([
    [{ overrides: [{ window: 'day', limit: 5 }], perMinute: 5 }, 'Give overrides, or perMinute and perDay, not both'],
    [
      {
        overrides: [
          { window: 'day', limit: 5 },
          { window: 'day', limit: 6 }
        ]
      },
      'overrides has two limits for the day; one per window'
    ],
    [
      { overrides: [{ window: 'day', limit: 5, until: '2020-01-01T00:00:00Z' }] },
      'overrides[0].until must be in the future'
    ],
    [
      { overrides: [{ window: 'day', limit: 5, until: '2099-02-30T00:00:00Z' }] },
      'overrides.0.until must be a real instant'
    ],
    [{ overrides: [{ window: 'day', limit: 5, until: 'tomorrow' }] }, 'overrides.0.until must be a real instant'],
    [
      { overrides: [{ window: 'week', limit: 5 }] },
      'overrides.0.window must be one of second, minute, hour, day, month'
    ],
    [{ overrides: [{ window: 'day', limit: 0 }] }, 'overrides.0.limit must be an integer from 1 to 2000000000'],
    [{ overrides: [{ window: 'day', limit: 5, burst: 9 }] }, 'overrides[0].burst is for a bucket'],
    [{ overrides: [{ window: 'month', limit: 5, anchor: 'account' }] }, "body has an unknown property 'anchor'"],
    [
      { overrides: ['second', 'minute', 'hour', 'day', 'month', 'day'].map((window) => ({ window, limit: 1 })) },
      'overrides must NOT have more than 5 items'
    ]
  ])('refuse %j with 400 naming what is wrong, and change nothing', async (body, message) => {
    const account = await newAccount({ plan: 'pro', overrides: [{ window: 'minute', limit: 9 }] })
    const before = await accountRows(account.id)
    const response = await patch(account.id, body)
    expect(response.statusCode, response.body).toBe(400)
    expect(response.json()).toEqual({ code: 'invalid_request', message: expect.stringContaining(message), status: 400 })
    expect(await accountRows(account.id)).toEqual(before)
  })
})

describe('credits', () => {
  const credits = (id: number, payload: unknown, headers: Record<string, string> = {}) =>
    call({ method: 'POST', url: `/admin/v1/accounts/${id}/credits`, payload: payload as object, headers })

  it('start a balance with add, add to it, set it and its refill, each an audit event; shown on the account', async () => {
    const account = await newAccount({ plan: 'pro' })
    const started = await credits(account.id, { add: 100 }, { 'x-audit-actor': 'billing' })
    expect(started.statusCode, started.body).toBe(200)
    expect(started.json()).toEqual({ remaining: 100, refill: null, refilledAt: expect.any(String) })
    const added = await credits(account.id, { add: 50, refill: { amount: 1000, every: 'month' } })
    expect(added.json()).toMatchObject({ remaining: 150, refill: { amount: 1000, every: 'month' } })
    const set = await credits(account.id, { set: 7 })
    expect(set.json()).toMatchObject({ remaining: 7, refill: { amount: 1000, every: 'month' } })
    const read = await call({ method: 'GET', url: `/admin/v1/accounts/${account.id}` })
    expect(read.json().credits).toEqual(set.json())

    const rows = await accountRows(account.id)
    expect(rows.credits).toEqual({ remaining: 7n, refill_amount: 1000n, refill_every: 'month' })
    expect(rows.audit.filter((event) => event.action === 'account.credits').map((event) => event.changes)).toEqual([
      { remaining: { before: null, after: '100' } },
      {
        remaining: { before: '100', after: '150' },
        refill: { before: null, after: { amount: '1000', every: 'month' } }
      },
      { remaining: { before: '150', after: '7' } }
    ])

    const noRefill = await credits(account.id, { refill: null })
    expect(noRefill.json()).toMatchObject({ remaining: 7, refill: null })
    const removed = await call({ method: 'DELETE', url: `/admin/v1/accounts/${account.id}/credits` })
    expect(removed.statusCode).toBe(204)
    expect(removed.body).toBe('')
    expect((await accountRows(account.id)).credits).toBeUndefined()
    expect((await call({ method: 'GET', url: `/admin/v1/accounts/${account.id}` })).json().credits).toBeNull()
  })

  it('count every add sent at once: each one is a single upsert', async () => {
    const account = await newAccount({ plan: 'pro' })
    const responses = await Promise.all(Array.from({ length: 20 }, () => credits(account.id, { add: 3 })))
    expect(responses.map((response) => response.statusCode)).toEqual(Array(20).fill(200))
    expect((await accountRows(account.id)).credits).toMatchObject({ remaining: 60n })
    const second = await Promise.all(Array.from({ length: 10 }, () => credits(account.id, { add: 1 })))
    expect(second.map((response) => response.json().remaining).sort((a, b) => a - b)).toEqual([
      61, 62, 63, 64, 65, 66, 67, 68, 69, 70
    ])
  })

  it.each([
    [{}, 'must NOT have fewer than 1 properties'],
    [{ add: 1, set: 2 }, 'Give add or set, not both'],
    [{ add: 0 }, 'add must be an integer from 1 to 1000000000000'],
    [{ set: -1 }, 'set must be an integer from 0 to 1000000000000'],
    [{ add: '5' }, 'add must be an integer'],
    [{ refill: { amount: 5, every: 'day' } }, 'The account has no credits; a refill needs a balance'],
    [{ add: 5, refill: { amount: 5, every: 'week' } }, 'refill.every must be one of day, month'],
    [{ add: 5, refill: { amount: 0, every: 'day' } }, 'refill.amount must be an integer from 1'],
    [{ add: 5, spend: 1 }, "body has an unknown property 'spend'"]
  ])('refuse %j with 400 naming what is wrong, and change nothing', async (body, message) => {
    const account = await newAccount({ plan: 'pro' })
    const before = await accountRows(account.id)
    const response = await credits(account.id, body)
    expect(response.statusCode, response.body).toBe(400)
    expect(response.json()).toEqual({ code: 'invalid_request', message: expect.stringContaining(message), status: 400 })
    expect(await accountRows(account.id)).toEqual(before)
  })

  it('answer 404 for an unknown account and 409 for a closed one, changing nothing', async () => {
    const missing = await credits(999999, { add: 1 })
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toEqual({ code: 'not_found', message: 'No account with id 999999', status: 404 })
    const account = await newAccount({ plan: 'pro' })
    await call({ method: 'POST', url: `/admin/v1/accounts/${account.id}/close` })
    const before = await accountRows(account.id)
    const closed = await credits(account.id, { add: 1 })
    expect(closed.statusCode).toBe(409)
    expect(closed.json()).toMatchObject({ code: 'account_closed' })
    expect(await accountRows(account.id)).toEqual(before)
  })
})
