import type { FastifyInstance, InjectOptions } from 'fastify'
import { sql } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import {
  createTestAdminApp,
  createTestApp,
  ADMIN_TOKEN,
  asAdmin,
  onEveryInstance,
  useTestAdminApp
} from '../helpers/app.js'
import { startServer, type RunningServer } from '../../harness/processes.js'
import { bearer, statuses, holdDatabaseClock } from '../helpers/traffic.js'

const context = useTestAdminApp({ api: { env: { BAN_AFTER: '2' } } })

const call = (options: InjectOptions) => asAdmin(context.admin).inject(options)
const created = async (url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) => {
  const response = await call({ method: 'POST', url, payload, headers })
  expect(response.statusCode, response.body).toBe(201)
  return response.json()
}
const newAccount = (payload: Record<string, unknown>, headers?: Record<string, string>) =>
  created('/admin/v1/accounts', payload, headers)
const newKey = (payload: Record<string, unknown>, headers?: Record<string, string>) =>
  created('/admin/v1/keys', payload, headers)
const events = async (query: string) => {
  const response = await call({ method: 'GET', url: `/admin/v1/events?${query}` })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<
    { action: string; actor: string; onBehalfOf: string | null; keyId: number | null; changes: object }[]
  >()
}

/** Moves an account's stored window back by `interval`, as if it had been counted that much earlier. */
async function moveWindowBack(accountId: bigint, window: string, interval: string) {
  await sql`
    UPDATE account_counters SET started_ats = (
      SELECT array_agg(CASE WHEN k."window" = ${window} THEN k.started_at - ${interval}::interval ELSE k.started_at END
        ORDER BY k.n)
      FROM unnest(windows, started_ats) WITH ORDINALITY AS k("window", started_at, n)
    )
    WHERE account_id = ${accountId}
  `.execute(context.database.db)
}

describe('accounts', () => {
  it('are made, read, listed by externalId and changed, each change with its event and actor', async () => {
    const account = await newAccount(
      { externalId: 'cus_Acme.1', name: 'Acme', plan: 'pro' },
      { 'x-audit-actor': 'signup:jane@acme.test' }
    )
    expect(account).toMatchObject({
      externalId: 'cus_Acme.1',
      name: 'Acme',
      plan: 'pro',
      perMinute: 300,
      perDay: 10000,
      closedAt: null
    })
    const read = await call({ method: 'GET', url: `/admin/v1/accounts/${account.id}` })
    expect(read.json()).toEqual(account)
    const listed = await call({ method: 'GET', url: '/admin/v1/accounts?externalId=cus_Acme.1' })
    expect(listed.json()).toEqual([account])

    const changed = await call({
      method: 'PATCH',
      url: `/admin/v1/accounts/${account.id}`,
      payload: { plan: 'enterprise', perMinute: 700, perDay: 9000 }
    })
    expect(changed.statusCode).toBe(200)
    expect(changed.json()).toMatchObject({ plan: 'enterprise', perMinute: 700, perDay: 9000 })

    const trail = await events(`accountId=${account.id}`)
    // The actor is who the token is (ADMIN_TOKEN: bootstrap); X-Audit-Actor is whom it acted for.
    expect(trail.map(({ action, actor, onBehalfOf }) => [action, actor, onBehalfOf])).toEqual([
      ['account.changed', 'bootstrap', null],
      ['account.created', 'bootstrap', 'signup:jane@acme.test']
    ])
    expect(trail[0]!.changes).toEqual({
      plan: { before: 'pro', after: 'enterprise' },
      perMinute: { before: 300, after: 700 },
      perDay: { before: 10000, after: 9000 },
      overrides: {
        before: [],
        after: [
          { window: 'minute', algorithm: 'fixed', limit: 700, burst: null, until: null },
          { window: 'day', algorithm: 'fixed', limit: 9000, burst: null, until: null }
        ]
      }
    })
  })

  it('start their months at their creation unless a cycleAnchor is given, and take a new one on PATCH', async () => {
    const plain = await newAccount({ plan: 'free' })
    expect(plain.cycleAnchor).toBe(plain.createdAt)
    const anchored = await newAccount({ plan: 'free', cycleAnchor: '2027-01-31T11:00:00+01:00' })
    expect(anchored.cycleAnchor).toBe('2027-01-31T10:00:00.000Z')
    const moved = await call({
      method: 'PATCH',
      url: `/admin/v1/accounts/${anchored.id}`,
      payload: { cycleAnchor: '2031-06-30T00:00:00Z' }
    })
    expect(moved.statusCode, moved.body).toBe(200)
    expect(moved.json()).toEqual({ ...anchored, cycleAnchor: '2031-06-30T00:00:00.000Z' })
    expect((await call({ method: 'GET', url: `/admin/v1/accounts/${anchored.id}` })).json().cycleAnchor).toBe(
      '2031-06-30T00:00:00.000Z'
    )
    const [event] = await events(`accountId=${anchored.id}`)
    expect(event).toMatchObject({
      action: 'account.changed',
      changes: { cycleAnchor: { before: '2027-01-31T10:00:00.000Z', after: '2031-06-30T00:00:00.000Z' } }
    })
    // Its months end elsewhere now: subscribers hear of it as of any change to its limits.
    const outbox = async () =>
      (
        await sql<{ type: string; data: unknown }>`
          SELECT type, data FROM webhook_events WHERE account_id = ${BigInt(anchored.id)} ORDER BY id
        `.execute(context.database.db)
      ).rows
    const written = await outbox()
    expect(written.at(-1)).toEqual({
      type: 'plan.changed',
      data: {
        account: { id: String(anchored.id), cycleAnchor: '2031-06-30T00:00:00.000Z' },
        plan: expect.objectContaining({ name: 'free' })
      }
    })
    const same = await call({
      method: 'PATCH',
      url: `/admin/v1/accounts/${anchored.id}`,
      payload: { cycleAnchor: '2031-06-30T02:00:00+02:00' }
    })
    expect(same.statusCode, same.body).toBe(200)
    expect(await outbox()).toEqual(written)
  })

  it.each(['2027-02-29T00:00:00Z', '2027-01-31', 'next month', '', '2027-01-31T24:00:00Z'])(
    'refuse the cycleAnchor %j with 400 naming it, and change nothing',
    async (cycleAnchor) => {
      const account = await newAccount({ plan: 'free' })
      for (const [method, url, payload] of [
        ['POST', '/admin/v1/accounts', { plan: 'free', externalId: 'cus_anchor_refused', cycleAnchor }],
        ['PATCH', `/admin/v1/accounts/${account.id}`, { cycleAnchor }]
      ] as const) {
        const response = await call({ method, url, payload })
        expect(response.statusCode, response.body).toBe(400)
        expect(response.json()).toEqual({
          code: 'invalid_request',
          message: expect.stringContaining('cycleAnchor'),
          status: 400
        })
      }
      expect((await call({ method: 'GET', url: '/admin/v1/accounts?externalId=cus_anchor_refused' })).json()).toEqual(
        []
      )
      expect((await call({ method: 'GET', url: `/admin/v1/accounts/${account.id}` })).json()).toEqual(account)
    }
  )

  it('refuse a taken externalId with 409 and a malformed one with 400', async () => {
    await newAccount({ externalId: 'cus_taken', plan: 'free' })
    const again = await call({
      method: 'POST',
      url: '/admin/v1/accounts',
      payload: { externalId: 'cus_taken', plan: 'free' }
    })
    expect(again.statusCode).toBe(409)
    expect(again.json().code).toBe('account_exists')
    const malformed = await call({
      method: 'POST',
      url: '/admin/v1/accounts',
      payload: { externalId: 'a b', plan: 'free' }
    })
    expect(malformed.statusCode).toBe(400)
  })

  it('give keys made in them their plan; a key made without one gets an account of its own', async () => {
    const account = await newAccount({ externalId: 'cus_keys', plan: 'business' })
    const byExternalId = await newKey({ account: 'cus_keys', name: 'web' })
    const byId = await newKey({ account: String(account.id), scopes: ['pets:read'] })
    expect(byExternalId).toMatchObject({ accountId: account.id, plan: 'business', perMinute: 1000 })
    expect(byId).toMatchObject({ accountId: account.id, scopes: ['pets:read'] })
    const alone = await newKey({ plan: 'free' })
    expect(alone.accountId).not.toBe(account.id)
    expect(alone.scopes).toEqual(['pets:read', 'pets:write'])

    const keys = await call({ method: 'GET', url: `/admin/v1/accounts/${account.id}/keys` })
    expect(keys.json().map((key: { id: number }) => key.id)).toEqual([byExternalId.id, byId.id])
    const planned = await call({ method: 'POST', url: '/admin/v1/keys', payload: { account: 'cus_keys', plan: 'pro' } })
    expect(planned.statusCode).toBe(400)
    const unknown = await call({ method: 'POST', url: '/admin/v1/keys', payload: { account: 'cus_nobody' } })
    expect(unknown.statusCode).toBe(400)
  })

  it('when closed, record the revoke of each key still usable as its own key.revoked, as a revoke of one key does', async () => {
    const account = await newAccount({ plan: 'free' })
    const first = await newKey({ accountId: account.id, name: 'first' })
    const second = await newKey({ accountId: account.id, scopes: ['pets:read'] })
    const earlier = await newKey({ accountId: account.id })
    expect((await call({ method: 'POST', url: `/admin/v1/keys/${earlier.id}/revoke` })).statusCode).toBe(200)
    const closed = await call({ method: 'POST', url: `/admin/v1/accounts/${account.id}/close` })
    expect(closed.statusCode, closed.body).toBe(200)

    for (const key of [first, second]) {
      const trail = await events(`keyId=${key.id}`)
      expect(trail.map((event) => event.action)).toEqual(['key.revoked', 'key.created'])
      expect(trail[0]).toMatchObject({
        action: 'key.revoked',
        actor: 'bootstrap',
        accountId: account.id,
        keyId: key.id,
        changes: { revokedAt: { before: null, after: expect.any(String) } }
      })
    }
    // The key revoked before is not revoked again.
    expect((await events(`keyId=${earlier.id}`)).map((event) => event.action)).toEqual(['key.revoked', 'key.created'])
    const [accountClosed] = await events(`accountId=${account.id}&limit=1`)
    expect(accountClosed).toMatchObject({
      action: 'account.closed',
      keyId: null,
      changes: { revokedKeys: { before: [], after: [String(first.id), String(second.id)] } }
    })

    const { rows } = await sql<{ type: string; data: unknown }>`
      SELECT type, data FROM webhook_events WHERE account_id = ${BigInt(account.id)} AND type = 'key.revoked'
      ORDER BY id`.execute(context.database.db)
    const keyData = (key: { id: number; prefix: string; name: string | null; scopes: string[] }) => ({
      key: { id: String(key.id), prefix: key.prefix, name: key.name, accountId: String(account.id), scopes: key.scopes }
    })
    expect(rows).toEqual([earlier, first, second].map((key) => ({ type: 'key.revoked', data: keyData(key) })))
  })

  it('never put a key in another customer because its externalId looks like an id', async () => {
    const business = await newAccount({ plan: 'business' })
    const free = await newAccount({ plan: 'free', externalId: String(business.id) })
    const ambiguous = await call({ method: 'POST', url: '/admin/v1/keys', payload: { account: String(business.id) } })
    expect(ambiguous.statusCode, ambiguous.body).toBe(400)
    expect(ambiguous.json().message).toMatch(/accountId or externalId/)
    const keys = await call({ method: 'GET', url: `/admin/v1/accounts/${business.id}/keys` })
    expect(keys.json()).toEqual([])

    const byExternalId = await newKey({ externalId: String(business.id) })
    expect(byExternalId).toMatchObject({ accountId: free.id, plan: 'free' })
    const byId = await newKey({ accountId: business.id })
    expect(byId).toMatchObject({ accountId: business.id, plan: 'business' })
    const both = await call({
      method: 'POST',
      url: '/admin/v1/keys',
      payload: { accountId: business.id, externalId: String(business.id) }
    })
    expect(both.statusCode).toBe(400)
    const unknownId = await call({ method: 'POST', url: '/admin/v1/keys', payload: { accountId: 987654321 } })
    expect(unknownId.statusCode).toBe(400)
  })

  it('report usage per UTC day, all keys together', async () => {
    const account = await newAccount({ plan: 'pro' })
    const first = await newKey({ account: String(account.id) })
    const second = await newKey({ account: String(account.id) })
    // The requests are counted in the day of the database's clock, and the usage's days end at the
    // admin app's: both on one held clock, so that a midnight while the test runs can neither split
    // the requests over two days nor leave them in the day before the read's.
    const clock = await holdDatabaseClock(context.database)
    for (const key of [first, first, second]) {
      expect((await context.api.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key.key) })).statusCode).toBe(
        200
      )
    }
    await context.api.close()
    context.api = await createTestApp(context.database, { env: { BAN_AFTER: '2' } })
    const admin = await createTestAdminApp(context.database, { clock })
    try {
      const url = `/admin/v1/accounts/${account.id}/usage?days=2`
      const usage = await asAdmin(admin).inject({ method: 'GET', url })
      expect(usage.json().days[0]).toMatchObject({ admitted: 3, refused: 0 })
      expect(usage.json().days[1]).toMatchObject({ admitted: 0, refused: 0 })
    } finally {
      await admin.close()
    }
  })
})

describe('shared windows', () => {
  it('count all of an account’s keys against its windows; the ban stays on the key that kept sending', async () => {
    // The window is the database's minute: held, it cannot end between the requests the test counts.
    await holdDatabaseClock(context.database)
    const account = await newAccount({ plan: 'enterprise', perMinute: 4, perDay: 1000 })
    const [noisy, quiet] = [
      await newKey({ account: String(account.id) }),
      await newKey({ account: String(account.id) })
    ]
    const send = async (key: string) =>
      (await context.api.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key) })).json().code ?? 'ok'
    const sent = []
    for (const key of [noisy, quiet, noisy, quiet]) sent.push(await send(key.key))
    expect(sent).toEqual(['ok', 'ok', 'ok', 'ok'])
    // The first 429, BAN_AFTER (2) more, then the ban: of the noisy key only.
    const refusals = []
    for (let i = 0; i < 4; i++) refusals.push(await send(noisy.key))
    expect(refusals).toEqual(['rate_limited', 'rate_limited', 'rate_limited', 'key_banned'])
    expect(await send(quiet.key)).toBe('rate_limited')
    const { rows } = await sql<{ api_key_id: string }>`
      SELECT api_key_id FROM api_key_bans WHERE banned_until > now()`.execute(context.database.db)
    expect(rows.map((row) => Number(row.api_key_id))).toEqual([noisy.id])
  })
})

describe('windows as they stand', () => {
  const windowsOf = (id: number | string) => call({ method: 'GET', url: `/admin/v1/accounts/${id}/windows` })
  const send = async (key: string) =>
    (await context.api.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key) })).json().code ?? 'ok'
  /** The windows at `now`, as GET /v1/rate_limit reports them: resets in Unix seconds. */
  const expected = (now: number, minute: [number, number], day: [number, number]) => [
    {
      name: 'minute',
      algorithm: 'fixed',
      limit: minute[0],
      used: minute[1],
      remaining: minute[0] - minute[1],
      reset: Math.ceil(now / 60_000) * 60,
      shadow: false
    },
    {
      name: 'day',
      algorithm: 'fixed',
      limit: day[0],
      used: day[1],
      remaining: day[0] - day[1],
      reset: Math.ceil(now / 86_400_000) * 86_400,
      shadow: false
    }
  ]

  it('count the requests of all of the account’s keys; a stored window of a past minute or day counts 0', async () => {
    // A free account's leases are one request, so its counts are exact to the request.
    const account = await newAccount({ plan: 'free' })
    const [first, second] = [
      await newKey({ account: String(account.id) }),
      await newKey({ account: String(account.id) })
    ]
    const untouched = await windowsOf(account.id)
    expect(untouched.statusCode).toBe(200)
    expect(untouched.json()).toEqual({ windows: expected(Date.now(), [60, 0], [1000, 0]), credits: null, bans: [] })

    const clock = await holdDatabaseClock(context.database)
    for (const key of [first, first, second]) expect(await send(key.key)).toBe('ok')
    const counted = await windowsOf(account.id)
    expect(counted.json()).toEqual({ windows: expected(clock(), [60, 3], [1000, 3]), credits: null, bans: [] })

    await moveWindowBack(account.id, 'minute', '1 minute')
    expect((await windowsOf(account.id)).json().windows).toEqual(expected(clock(), [60, 0], [1000, 3]))
    await moveWindowBack(account.id, 'day', '1 day')
    expect((await windowsOf(account.id)).json().windows).toEqual(expected(clock(), [60, 0], [1000, 0]))
  })

  it('name each banned key of the account with the end of its ban, and match GET /v1/rate_limit', async () => {
    const account = await newAccount({ plan: 'enterprise', perMinute: 2, perDay: 500 })
    const [noisy, quiet] = [
      await newKey({ account: String(account.id) }),
      await newKey({ account: String(account.id) })
    ]
    const clock = await holdDatabaseClock(context.database)
    expect([await send(noisy.key), await send(quiet.key)]).toEqual(['ok', 'ok'])
    const sentFrom = clock()
    const refusals = []
    for (let i = 0; i < 4; i++) refusals.push(await send(noisy.key))
    expect(refusals).toEqual(['rate_limited', 'rate_limited', 'rate_limited', 'key_banned'])
    const sentTo = clock()

    const response = await windowsOf(account.id)
    expect(response.statusCode).toBe(200)
    const { windows, bans } = response.json()
    // Refusals are not counted: the two admitted requests are.
    expect(windows).toEqual(expected(clock(), [2, 2], [500, 2]))
    expect(bans).toEqual([{ keyId: noisy.id, prefix: noisy.prefix, bannedUntil: expect.any(String) }])
    const ends = Date.parse(bans[0].bannedUntil)
    expect(ends).toBeGreaterThanOrEqual(sentFrom + 900_000)
    expect(ends).toBeLessThanOrEqual(sentTo + 900_000)

    const standing = await context.api.inject({ method: 'GET', url: '/v1/rate_limit', headers: bearer(quiet.key) })
    expect(standing.json().windows).toEqual(windows)
  })

  it('answer 404 for an unknown account, 400 for a malformed id, 401 without the token', async () => {
    const unknown = await windowsOf(987654321)
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json()).toEqual({ code: 'not_found', message: 'No account with id 987654321', status: 404 })
    expect((await windowsOf('abc')).statusCode).toBe(400)
    const account = await newAccount({ plan: 'free' })
    const anonymous = await context.admin.inject({ method: 'GET', url: `/admin/v1/accounts/${account.id}/windows` })
    expect(anonymous.statusCode).toBe(401)
  })
})

describe('across instances', () => {
  it('a plan change on the account reaches every key on every instance through the change channel', async () => {
    const second = await createTestApp(context.database)
    try {
      const account = await newAccount({ plan: 'pro' })
      const keys = [await newKey({ account: String(account.id) }), await newKey({ account: String(account.id) })]
      const limitOf = async (app: FastifyInstance, key: string) =>
        (await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key) })).headers['x-ratelimit-limit']
      for (const app of [context.api, second]) for (const key of keys) expect(await limitOf(app, key.key)).toBe('300')
      await call({ method: 'PATCH', url: `/admin/v1/accounts/${account.id}`, payload: { plan: 'business' } })
      await onEveryInstance([context.api, second], async (app) =>
        (await Promise.all(keys.map((key) => limitOf(app, key.key)))).every((limit) => limit === '1000')
      )
    } finally {
      await second.close()
    }
  })

  it('closing the account revokes all of its keys at once, on every instance through the change channel', async () => {
    const second = await createTestApp(context.database)
    try {
      const account = await newAccount({ plan: 'pro' })
      const keys = [await newKey({ account: String(account.id) }), await newKey({ account: String(account.id) })]
      const statusOf = async (app: FastifyInstance, key: string) =>
        (await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key) })).statusCode
      for (const app of [context.api, second]) for (const key of keys) expect(await statusOf(app, key.key)).toBe(200)
      const closed = await call({ method: 'POST', url: `/admin/v1/accounts/${account.id}/close` })
      expect(closed.statusCode).toBe(200)
      expect(closed.json().closedAt).not.toBeNull()
      await onEveryInstance([context.api, second], async (app) =>
        (await Promise.all(keys.map((key) => statusOf(app, key.key)))).every((status) => status === 401)
      )
      const listed = await call({ method: 'GET', url: `/admin/v1/accounts/${account.id}/keys` })
      expect(listed.json().every((key: { revokedAt: string | null }) => key.revokedAt !== null)).toBe(true)
      const [event] = await events(`accountId=${account.id}&limit=1`)
      expect(event).toMatchObject({ action: 'account.closed' })
      const more = await call({ method: 'POST', url: '/admin/v1/keys', payload: { account: String(account.id) } })
      expect(more.statusCode).toBe(409)
      expect(more.json().code).toBe('account_closed')
    } finally {
      await second.close()
    }
  })
})

describe('two keys of one free account on two running instances', () => {
  const servers: RunningServer[] = []
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
  })

  it('share 60 requests a minute between them', async () => {
    for (let i = 0; i < 2; i++) {
      servers.push(await startServer({ DATABASE_URL: context.database.url }))
    }
    const account = await newAccount({ plan: 'free' })
    const keys = [await newKey({ account: String(account.id) }), await newKey({ account: String(account.id) })]
    await holdDatabaseClock(context.database)
    const responses = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        fetch(`${servers[i % 2]!.url}/pets?limit=1`, { headers: bearer(keys[Math.floor(i / 2) % 2]!.key) })
      )
    )
    expect(statuses(responses.map((response) => ({ statusCode: response.status })))).toEqual({ 200: 60, 429: 40 })
    const { rows } = await sql<{ used: string }>`
      SELECT used FROM limit_counters WHERE account_id = ${account.id} AND "window" = 'minute'`.execute(
      context.database.db
    )
    expect(rows.map((row) => Number(row.used))).toEqual([60])
  }, 150_000)
})

describe('scopes', () => {
  it('let a pets:read key read (200) and refuse it a write with 403 and RFC 6750’s challenge, counted once', async () => {
    // The window is the database's minute: held, it cannot end between the requests the test counts.
    await holdDatabaseClock(context.database)
    const reader = await newKey({ plan: 'free', scopes: ['pets:read'] })
    const read = await context.api.inject({ method: 'GET', url: '/v1/pets', headers: bearer(reader.key) })
    expect(read.statusCode).toBe(200)
    expect(read.headers['x-ratelimit-remaining']).toBe('59')
    const write = await context.api.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: bearer(reader.key),
      payload: { name: 'Rex', categoryId: 1 }
    })
    expect(write.statusCode).toBe(403)
    expect(write.json()).toEqual({
      code: 'insufficient_scope',
      message: 'This API key lacks the scope pets:write',
      status: 403
    })
    expect(write.headers['www-authenticate']).toBe(
      'Bearer realm="animal-store", error="insufficient_scope", scope="pets:write"'
    )
    expect(write.headers['x-ratelimit-remaining']).toBe('58')
    const { rows } = await sql<{ count: string }>`SELECT count(*) FROM pets WHERE name = 'Rex'`.execute(
      context.database.db
    )
    expect(Number(rows[0]!.count)).toBe(0)
  })

  it('can be changed, and a pets:write key cannot list', async () => {
    const key = await newKey({ plan: 'free', scopes: ['pets:write'] })
    expect((await context.api.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key.key) })).statusCode).toBe(
      403
    )
    const changed = await call({ method: 'PATCH', url: `/admin/v1/keys/${key.id}`, payload: { scopes: ['pets:read'] } })
    expect(changed.json().scopes).toEqual(['pets:read'])
    await onEveryInstance([context.api], async (app) => {
      return (await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key.key) })).statusCode === 200
    })
    const [event] = await events(`keyId=${key.id}&limit=1`)
    expect(event).toMatchObject({
      action: 'key.changed',
      changes: { scopes: { before: ['pets:write'], after: ['pets:read'] } }
    })
    for (const scopes of [[], ['pets:delete']]) {
      const refused = await call({ method: 'PATCH', url: `/admin/v1/keys/${key.id}`, payload: { scopes } })
      expect(refused.statusCode).toBe(400)
    }
  })

  it('are stated per operation in the public OpenAPI document, with the 403', async () => {
    const document = (await context.api.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
    expect(document.paths['/pets'].post.security).toEqual([{ bearerAuth: ['pets:write'] }])
    expect(document.paths['/pets'].get.security).toEqual([{ bearerAuth: ['pets:read'] }])
    expect(document.paths['/pets'].post.responses['403']).toBeDefined()
  })
})

describe('the audit trail', () => {
  it('records every key change with its actor and request, never a secret, newest first', async () => {
    const actor = { 'x-audit-actor': 'ops:amir' }
    const key = await newKey({ plan: 'free', name: 'first' }, actor)
    const patch = await call({
      method: 'PATCH',
      url: `/admin/v1/keys/${key.id}`,
      payload: { name: 'second', expiresAt: '2099-01-01T00:00:00Z', plan: 'pro' },
      headers: actor
    })
    expect(patch.statusCode).toBe(200)
    const rotated = await call({ method: 'POST', url: `/admin/v1/keys/${key.id}/rotate`, headers: actor })
    await call({ method: 'POST', url: `/admin/v1/keys/${key.id}/revoke`, headers: actor })
    const response = await call({ method: 'GET', url: `/admin/v1/events?accountId=${key.accountId}` })
    const trail = response.json()
    expect(trail.map((event: { action: string }) => event.action)).toEqual([
      'key.revoked',
      'key.rotated',
      'key.changed',
      'account.changed',
      'key.created',
      'account.created'
    ])
    expect(trail.every((event: { actor: string }) => event.actor === 'bootstrap')).toBe(true)
    expect(trail.every((event: { onBehalfOf: string }) => event.onBehalfOf === 'ops:amir')).toBe(true)
    expect(trail.every((event: { requestId: string | null }) => typeof event.requestId === 'string')).toBe(true)
    expect(trail[2].changes).toEqual({
      name: { before: 'first', after: 'second' },
      expiresAt: { before: null, after: '2099-01-01T00:00:00.000Z' }
    })
    expect(trail[3].changes.plan).toEqual({ before: 'free', after: 'pro' })
    expect(response.body).not.toContain(key.key)
    expect(response.body).not.toContain(rotated.json().key)
    const ids = trail.map((event: { id: number }) => event.id)
    expect([...ids].sort((a, b) => b - a)).toEqual(ids)
  })

  it('pages newest first with a Link relative to the admin API, bound to its filter', async () => {
    const key = await newKey({ plan: 'free' })
    for (const name of ['a', 'b', 'c']) {
      await call({ method: 'PATCH', url: `/admin/v1/keys/${key.id}`, payload: { name } })
    }
    const first = await call({ method: 'GET', url: `/admin/v1/events?keyId=${key.id}&limit=2` })
    const link = first.headers.link as string
    expect(link).toMatch(new RegExp(`^</admin/v1/events\\?keyId=${key.id}&limit=2&cursor=[^>]+>; rel="next"$`))
    const next = link.slice(1, link.indexOf('>'))
    const second = await call({ method: 'GET', url: next })
    expect([...first.json(), ...second.json()].map((event: { action: string }) => event.action)).toEqual([
      'key.changed',
      'key.changed',
      'key.changed',
      'key.created'
    ])
    const cursor = new URL(next, 'http://admin.test').searchParams.get('cursor')
    const elsewhere = await call({ method: 'GET', url: `/admin/v1/events?limit=2&cursor=${cursor}` })
    expect(elsewhere.statusCode).toBe(400)
  })

  it('refuses an X-Audit-Actor with control characters, and changes nothing', async () => {
    const response = await call({
      method: 'POST',
      url: '/admin/v1/accounts',
      payload: { plan: 'free', externalId: 'cus_actor' },
      headers: { 'x-audit-actor': 'evil\u0007' }
    })
    expect(response.statusCode).toBe(400)
    expect((await call({ method: 'GET', url: '/admin/v1/accounts?externalId=cus_actor' })).json()).toEqual([])
  })

  it('deletes only events older than AUDIT_RETENTION_DAYS, and nothing while it is under the floor the owner set', async () => {
    const retaining = await createTestApp(context.database, { env: { AUDIT_RETENTION_DAYS: '30' } })
    try {
      // The floor is 400 days until the schema's owner lowers it.
      await expect(retaining.housekeeping.run()).rejects.toThrow('audit events are kept 400 days; 30 is fewer')
      await sql`UPDATE audit_retention SET days = 30`.execute(context.database.db)
      await sql`
        INSERT INTO audit_events (at, actor, action) VALUES
          (now() - interval '31 days', 'test', 'old'), (now() - interval '29 days', 'test', 'young')`.execute(
        context.database.db
      )
      expect((await retaining.housekeeping.run()).auditEvents).toBe(1)
      const { rows } = await sql<{ action: string }>`
        SELECT action FROM audit_events WHERE actor = 'test'`.execute(context.database.db)
      expect(rows).toEqual([{ action: 'young' }])
    } finally {
      await retaining.close()
    }
  })
})

describe('key lifecycle edges', () => {
  it.each([
    ['in the past', '2020-01-01T00:00:00Z', 'expiresAt must be in the future'],
    ['a leap second', '2016-12-31T23:59:60Z', 'expiresAt must be a real instant'],
    ['the 30th of February', '2099-02-30T00:00:00Z', 'expiresAt']
  ])('refuses an expiry %s with 400, at creation and in PATCH', async (_label, expiresAt, message) => {
    const create = await call({ method: 'POST', url: '/admin/v1/keys', payload: { plan: 'free', expiresAt } })
    expect(create.statusCode).toBe(400)
    expect(create.json().message).toContain(message)
    const key = await newKey({ plan: 'free' })
    const patch = await call({ method: 'PATCH', url: `/admin/v1/keys/${key.id}`, payload: { expiresAt } })
    expect(patch.statusCode).toBe(400)
    expect(patch.json().message).toContain(message)
  })

  it('answers PATCH and rotate of a revoked key with 409', async () => {
    const key = await newKey({ plan: 'free' })
    await call({ method: 'POST', url: `/admin/v1/keys/${key.id}/revoke` })
    const patch = await call({ method: 'PATCH', url: `/admin/v1/keys/${key.id}`, payload: { name: 'back' } })
    expect(patch.statusCode).toBe(409)
    expect(patch.json().code).toBe('key_revoked')
    const rotate = await call({ method: 'POST', url: `/admin/v1/keys/${key.id}/rotate` })
    expect(rotate.statusCode).toBe(409)
    expect(rotate.json().code).toBe('key_revoked')
  })

  it('applies PATCHes sent at once one after the other, never a 500', async () => {
    const key = await newKey({ plan: 'free' })
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call({
          method: 'PATCH',
          url: `/admin/v1/keys/${key.id}`,
          // Each names the key differently, so each is a change with its own event whatever the order.
          payload: { name: `name ${i}` }
        })
      )
    )
    expect(statuses(responses)).toEqual({ 200: 10 })
    expect((await events(`keyId=${key.id}&limit=100`)).length).toBe(11)
  })

  it.each([
    ['an ESC sequence', 'x\u001b[2Jy'],
    ['a C1 control', 'x\u009by'],
    ['a right-to-left override', 'x\u202Ey'],
    ['an isolate', 'x\u2066y']
  ])('refuses names with %s: of keys, accounts and pets', async (_label, name) => {
    expect((await call({ method: 'POST', url: '/admin/v1/keys', payload: { plan: 'free', name } })).statusCode).toBe(
      400
    )
    expect(
      (await call({ method: 'POST', url: '/admin/v1/accounts', payload: { plan: 'free', name } })).statusCode
    ).toBe(400)
    const key = await newKey({ plan: 'free' })
    const pet = await context.api.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: bearer(key.key),
      payload: { name, categoryId: 1 }
    })
    expect(pet.statusCode).toBe(400)
  })
})

describe('listings', () => {
  it('refuse a cursor of another listing', async () => {
    const key = await newKey({ plan: 'free' })
    for (let i = 0; i < 3; i++) {
      await context.api.inject({
        method: 'POST',
        url: '/v1/pets',
        headers: bearer(key.key),
        payload: { name: 'p', categoryId: 1 }
      })
    }
    const pets = await context.api.inject({ method: 'GET', url: '/v1/pets?limit=1', headers: bearer(key.key) })
    const petsCursor = new URL(/<([^>]+)>/.exec(pets.headers.link as string)![1]!).searchParams.get('cursor')
    const keys = await call({ method: 'GET', url: `/admin/v1/keys?limit=1&cursor=${petsCursor}` })
    expect(keys.statusCode).toBe(400)
    const keysPage = await call({ method: 'GET', url: '/admin/v1/keys?limit=1' })
    const keysCursor = new URL(/<([^>]+)>/.exec(keysPage.headers.link as string)![1]!, 'http://x').searchParams.get(
      'cursor'
    )
    const accounts = await call({ method: 'GET', url: `/admin/v1/accounts?limit=1&cursor=${keysCursor}` })
    expect(accounts.statusCode).toBe(400)
  })

  it('never copy the request’s Host into Link: a relative reference, or ADMIN_PUBLIC_URL', async () => {
    await newKey({ plan: 'free' })
    await newKey({ plan: 'free' })
    const relative = await call({ method: 'GET', url: '/admin/v1/keys?limit=1', headers: { host: 'evil.example' } })
    expect(relative.headers.link).toMatch(/^<\/admin\/v1\/keys\?limit=1&cursor=[^>]+>; rel="next"$/)
    const configured = await createTestAdminApp(context.database, {
      env: { ADMIN_PUBLIC_URL: 'https://admin.store.example' }
    })
    try {
      const response = await configured.inject({
        method: 'GET',
        url: '/admin/v1/accounts?limit=1',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, host: 'evil.example' }
      })
      expect(response.headers.link).toMatch(/^<https:\/\/admin\.store\.example\/admin\/v1\/accounts\?limit=1&cursor=/)
    } finally {
      await configured.close()
    }
  })
})
