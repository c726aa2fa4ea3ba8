import { randomBytes } from 'node:crypto'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { createTestAdminApp, createTestApp, logCapture, manualClock, asAdmin } from '../helpers/app.js'
import { createTestDatabase, recordQueries, type TestDatabase } from '../helpers/database.js'
import { bearer } from '../helpers/traffic.js'

// A rotation's grace on the database's clock, which the manual clock moves: two instances, one of
// which held the old secret cached when the key was rotated.
const START = Date.parse('2027-03-01T10:00:05Z')

let database: TestDatabase
const clock = manualClock(START, () => database)
let admin: FastifyInstance
let first: FastifyInstance
let second: FastifyInstance
beforeAll(async () => {
  database = await createTestDatabase()
  await clock.set(START)
  admin = await createTestAdminApp(database)
  first = await createTestApp(database, { clock })
  second = await createTestApp(database, { clock })
})
afterAll(async () => {
  await Promise.all([admin?.close(), first?.close(), second?.close()])
  await clock.release()
  await database?.drop()
})
beforeEach(async () => {
  await clock.set(START)
})

const call = (options: InjectOptions) => asAdmin(admin).inject(options)

/** A key of a free plan's account (60 a minute): each instance counts it request by request, so its headers are exact. */
async function freeKey(): Promise<{ id: number; accountId: number; prefix: string; key: string }> {
  const response = await call({ method: 'POST', url: '/admin/v1/keys', payload: { plan: 'free', name: 'rotated' } })
  expect(response.statusCode, response.body).toBe(201)
  return response.json()
}

const rotate = (id: number, payload?: Record<string, unknown>) =>
  call({ method: 'POST', url: `/admin/v1/keys/${id}/rotate`, ...(payload === undefined ? {} : { payload }) })

const pets = (app: FastifyInstance, key: string) => app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key) })

/** The status and the minute's remaining units of a request. */
async function answer(app: FastifyInstance, key: string) {
  const response = await pets(app, key)
  return [response.statusCode, response.headers['x-ratelimit-remaining']]
}

/**
 * Waits until `app` has looked `key` up again since the last change: its cached record was made stale
 * by the change's NOTIFY. GET /v1/rate_limit authenticates without counting.
 */
async function lookedUpAgain(app: FastifyInstance, key: string) {
  const queries = recordQueries(database.name)
  try {
    await vi.waitFor(
      async () => {
        await app.inject({ method: 'GET', url: '/v1/rate_limit', headers: bearer(key) })
        if (!queries.texts.some((text) => text.includes('"k"."previous_secret_hash" = $'))) {
          throw new Error('the instance did not look the key up again within 5 s')
        }
      },
      { timeout: 5_000, interval: 20 }
    )
  } finally {
    queries.stop()
  }
}

const minuteUsed = async (accountId: number) => {
  const { rows } = await sql<{ used: string }>`
    SELECT used FROM limit_counters WHERE account_id = ${accountId} AND "window" = 'minute'`.execute(database.db)
  return Number(rows[0]?.used ?? 0)
}

describe('a rotation with a grace period', () => {
  it('keeps the old secret working on every instance, in the same windows, until the grace ends and not after', async () => {
    const issued = await freeKey()
    // The first instance holds the old secret cached from before the rotation.
    expect(await answer(first, issued.key)).toEqual([200, '59'])

    const rotation = await rotate(issued.id, { graceSeconds: 30 })
    expect(rotation.statusCode, rotation.body).toBe(200)
    const rotated = rotation.json()
    expect(rotated).toMatchObject({
      id: issued.id,
      accountId: issued.accountId,
      previousPrefix: issued.prefix,
      // By the database's clock, which the test holds at START.
      previousSecretExpiresAt: '2027-03-01T10:00:35.000Z'
    })
    expect(rotated.prefix).not.toBe(issued.prefix)
    expect(rotated.key).not.toBe(issued.key)
    await lookedUpAgain(first, issued.key)

    // Either secret, on either instance, counts in the account's one minute window.
    expect(await answer(first, issued.key)).toEqual([200, '58'])
    expect(await answer(second, issued.key)).toEqual([200, '57'])
    expect(await answer(second, rotated.key)).toEqual([200, '56'])
    expect(await answer(first, rotated.key)).toEqual([200, '55'])
    expect(await minuteUsed(issued.accountId)).toBe(5)
    expect((await call({ method: 'GET', url: `/admin/v1/keys/${issued.id}` })).json()).toMatchObject({
      prefix: rotated.prefix,
      previousPrefix: issued.prefix,
      previousSecretExpiresAt: '2027-03-01T10:00:35.000Z'
    })

    await clock.advance(29_999)
    expect(await answer(first, issued.key)).toEqual([200, '54'])
    expect(await answer(second, issued.key)).toEqual([200, '53'])

    // At the end of the grace: no announcement, yet the instance that holds it cached refuses it too.
    await clock.advance(1)
    for (const app of [first, second]) {
      const refused = await pets(app, issued.key)
      expect(refused.statusCode).toBe(401)
      expect(refused.json().code).toBe('unauthorized')
      expect(await answer(app, rotated.key)).toEqual([200, app === first ? '52' : '51'])
    }
    expect(await minuteUsed(issued.accountId)).toBe(9)
    expect((await call({ method: 'GET', url: `/admin/v1/keys/${issued.id}` })).json()).toMatchObject({
      previousPrefix: null,
      previousSecretExpiresAt: null
    })
    await clock.advance(60_000)
    expect((await pets(first, issued.key)).statusCode).toBe(401)
  })

  it('with a grace of 0, or none given, stops the old secret at once, as before', async () => {
    for (const payload of [{ graceSeconds: 0 }, {}, undefined]) {
      const issued = await freeKey()
      expect((await pets(first, issued.key)).statusCode).toBe(200)
      const rotation = await rotate(issued.id, payload)
      expect(rotation.statusCode, rotation.body).toBe(200)
      expect(rotation.json()).toMatchObject({ previousPrefix: null, previousSecretExpiresAt: null })
      // The instance without it cached refuses it at its first request; the other once the change arrives.
      expect((await pets(second, issued.key)).statusCode).toBe(401)
      await expect.poll(async () => (await pets(first, issued.key)).statusCode, { timeout: 1_000 }).toBe(401)
      expect((await pets(first, rotation.json().key)).statusCode).toBe(200)
    }
  })

  it('keeps only the newest previous secret when rotated again during a grace; a grace of 0 ends every old one', async () => {
    const a = await freeKey()
    const b = (await rotate(a.id, { graceSeconds: 600 })).json()
    const c = (await rotate(a.id, { graceSeconds: 600 })).json()
    expect(c).toMatchObject({ previousPrefix: b.prefix, previousSecretExpiresAt: '2027-03-01T10:10:05.000Z' })
    expect((await pets(second, a.key)).statusCode).toBe(401)
    expect((await pets(second, b.key)).statusCode).toBe(200)
    expect((await pets(second, c.key)).statusCode).toBe(200)

    // A secret that leaked during the grace: rotated again with no grace, no old secret works.
    const d = (await rotate(a.id, { graceSeconds: 0 })).json()
    for (const old of [b.key, c.key]) {
      await expect.poll(async () => (await pets(second, old)).statusCode, { timeout: 1_000 }).toBe(401)
    }
    expect((await pets(second, d.key)).statusCode).toBe(200)
  })

  it('ends the grace with the key: a revoked key refuses its old secret as well', async () => {
    const issued = await freeKey()
    const rotated = (await rotate(issued.id, { graceSeconds: 600 })).json()
    expect((await pets(second, issued.key)).statusCode).toBe(200)
    expect((await call({ method: 'POST', url: `/admin/v1/keys/${issued.id}/revoke` })).statusCode).toBe(200)
    for (const key of [issued.key, rotated.key]) {
      await expect.poll(async () => (await pets(second, key)).statusCode, { timeout: 1_000 }).toBe(401)
    }
  })

  it('reports no previous secret once the key is revoked: on the revoke, the admin API and /v1/keys', async () => {
    const issued = await freeKey()
    const manager = await call({
      method: 'POST',
      url: '/admin/v1/keys',
      payload: { accountId: issued.accountId, scopes: ['keys:manage'] }
    })
    expect(manager.statusCode, manager.body).toBe(201)
    const listed = async () => {
      const response = await first.inject({ method: 'GET', url: '/v1/keys', headers: bearer(manager.json().key) })
      expect(response.statusCode, response.body).toBe(200)
      return response.json().find((key: { id: number }) => key.id === issued.id)
    }
    expect((await rotate(issued.id, { graceSeconds: 86_400 })).statusCode).toBe(200)
    expect(await listed()).toMatchObject({
      previousPrefix: issued.prefix,
      previousSecretExpiresAt: '2027-03-02T10:00:05.000Z'
    })

    const revoke = await call({ method: 'POST', url: `/admin/v1/keys/${issued.id}/revoke` })
    expect(revoke.statusCode).toBe(200)
    const none = { previousPrefix: null, previousSecretExpiresAt: null }
    expect(revoke.json()).toMatchObject({ revokedAt: expect.any(String), ...none })
    expect((await call({ method: 'GET', url: `/admin/v1/keys/${issued.id}` })).json()).toMatchObject(none)
    expect(await listed()).toMatchObject({ revokedAt: expect.any(String), ...none })
    expect((await pets(second, issued.key)).statusCode).toBe(401)
  })

  it('reports the key’s expiry as the previous secret’s end when the key expires first, and none once it has', async () => {
    const issued = await freeKey()
    const expiresAt = '2027-03-01T10:10:05.000Z'
    expect(
      (await call({ method: 'PATCH', url: `/admin/v1/keys/${issued.id}`, payload: { expiresAt } })).statusCode
    ).toBe(200)
    const rotation = await rotate(issued.id, { graceSeconds: 3_600 })
    expect(rotation.statusCode, rotation.body).toBe(200)
    expect(rotation.json()).toMatchObject({ previousPrefix: issued.prefix, previousSecretExpiresAt: expiresAt })
    expect((await call({ method: 'GET', url: `/admin/v1/keys/${issued.id}` })).json()).toMatchObject({
      previousPrefix: issued.prefix,
      previousSecretExpiresAt: expiresAt
    })
    expect((await pets(second, issued.key)).statusCode).toBe(200)

    await clock.set(Date.parse(expiresAt))
    expect((await pets(second, issued.key)).statusCode).toBe(401)
    expect((await call({ method: 'GET', url: `/admin/v1/keys/${issued.id}` })).json()).toMatchObject({
      previousPrefix: null,
      previousSecretExpiresAt: null
    })
  })

  it('reports no previous secret of a key whose account is closed', async () => {
    const issued = await freeKey()
    expect((await rotate(issued.id, { graceSeconds: 86_400 })).statusCode).toBe(200)
    const closed = await call({ method: 'POST', url: `/admin/v1/accounts/${issued.accountId}/close` })
    expect(closed.statusCode, closed.body).toBe(200)
    expect((await call({ method: 'GET', url: `/admin/v1/keys/${issued.id}` })).json()).toMatchObject({
      previousPrefix: null,
      previousSecretExpiresAt: null
    })
    expect((await pets(second, issued.key)).statusCode).toBe(401)
  })

  it('admits the old secret on an instance started during the grace, even from an address that has spent its budget', async () => {
    const issued = await freeKey()
    const rotated = (await rotate(issued.id, { graceSeconds: 600 })).json()
    const late = await createTestApp(database, { clock, env: { UNAUTHENTICATED_PER_MINUTE: '2' } })
    try {
      const from = (key: string) =>
        late.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key), remoteAddress: '203.0.113.40' })
      const madeUp = () => `ask_${'x'.repeat(8)}_${randomBytes(16).toString('hex')}`
      const spending = [await from(madeUp()), await from(madeUp()), await from(madeUp())]
      expect(spending.map((response) => response.statusCode)).toEqual([401, 401, 429])
      // The membership filter this instance loaded holds the old secret's hash beside the new one's.
      expect((await from(issued.key)).statusCode).toBe(200)
      expect((await from(rotated.key)).statusCode).toBe(200)
    } finally {
      await late.close()
    }
  })
})

describe('graceSeconds', () => {
  it.each([
    [{ graceSeconds: -1 }, 'graceSeconds must be an integer from 0 to 604800'],
    [{ graceSeconds: 604_801 }, 'graceSeconds must be an integer from 0 to 604800'],
    [{ graceSeconds: 1.5 }, 'graceSeconds must be an integer'],
    [{ graceSeconds: '60' }, 'graceSeconds must be an integer'],
    [{ graceSeconds: null }, 'graceSeconds must be an integer'],
    [{ grace: 60 }, "body has an unknown property 'grace'"]
  ])('refuses %j with 400, and the key keeps its secret', async (payload, message) => {
    const issued = await freeKey()
    const events = async () =>
      Number(
        (
          await sql<{ count: string }>`SELECT count(*) FROM audit_events WHERE key_id = ${issued.id}`.execute(
            database.db
          )
        ).rows[0]!.count
      )
    const before = await events()
    const response = await rotate(issued.id, payload)
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({ code: 'invalid_request' })
    expect(response.json().message).toContain(message)
    expect((await call({ method: 'GET', url: `/admin/v1/keys/${issued.id}` })).json()).toMatchObject({
      prefix: issued.prefix,
      previousPrefix: null
    })
    expect((await pets(second, issued.key)).statusCode).toBe(200)
    expect(await events()).toBe(before)
  })

  it('takes the longest grace, a week', async () => {
    const issued = await freeKey()
    const rotation = await rotate(issued.id, { graceSeconds: 604_800 })
    expect(rotation.json().previousSecretExpiresAt).toBe('2027-03-08T10:00:05.000Z')
  })
})

describe('the record of a rotation', () => {
  it('is an audit event with both prefixes, the grace and when the old secret stops, and a key.rotated event with the end', async () => {
    const issued = await freeKey()
    const first = (await rotate(issued.id, { graceSeconds: 30 })).json<typeof issued>()
    await clock.advance(10_000)
    const second = (
      await call({
        method: 'POST',
        url: `/admin/v1/keys/${issued.id}/rotate`,
        payload: { graceSeconds: 3600 },
        headers: { 'x-audit-actor': 'ops:ana' }
      })
    ).json()
    const trail = (await call({ method: 'GET', url: `/admin/v1/events?keyId=${issued.id}` })).json()
    expect(trail.map((event: { action: string }) => event.action)).toEqual([
      'key.rotated',
      'key.rotated',
      'key.created'
    ])
    expect(trail[1]).toMatchObject({ actor: 'bootstrap', accountId: issued.accountId, keyId: issued.id })
    expect(trail[1].changes).toEqual({
      prefix: { before: issued.prefix, after: first.prefix },
      previousPrefix: { before: null, after: issued.prefix },
      previousSecretExpiresAt: { before: null, after: '2027-03-01T10:00:35.000Z' },
      graceSeconds: { before: null, after: 30 }
    })
    expect(trail[0]).toMatchObject({ onBehalfOf: 'ops:ana' })
    expect(trail[0].changes).toEqual({
      prefix: { before: first.prefix, after: second.prefix },
      previousPrefix: { before: issued.prefix, after: first.prefix },
      previousSecretExpiresAt: { before: '2027-03-01T10:00:35.000Z', after: '2027-03-01T11:00:15.000Z' },
      graceSeconds: { before: null, after: 3600 }
    })
    const text = JSON.stringify(trail)
    for (const secret of [issued.key, first.key, second.key]) expect(text).not.toContain(secret)

    const { rows } = await sql<{ data: Record<string, unknown> }>`
      SELECT data FROM webhook_events WHERE type = 'key.rotated' AND data -> 'key' ->> 'id' = ${String(issued.id)}
      ORDER BY id`.execute(database.db)
    expect(rows.map((row) => row.data)).toEqual([
      {
        key: {
          id: String(issued.id),
          prefix: first.prefix,
          name: 'rotated',
          accountId: String(issued.accountId),
          scopes: ['pets:read', 'pets:write']
        },
        previousPrefix: issued.prefix,
        previousSecretExpiresAt: '2027-03-01T10:00:35.000Z'
      },
      expect.objectContaining({ previousPrefix: first.prefix, previousSecretExpiresAt: '2027-03-01T11:00:15.000Z' })
    ])
  })

  it('names in the access line the prefix of the secret a request presented: the old one while the grace runs', async () => {
    const log = logCapture()
    const logged = await createTestApp(database, { clock, logStream: log.stream })
    try {
      const issued = await freeKey()
      const rotated = (await rotate(issued.id, { graceSeconds: 60 })).json()
      expect((await pets(logged, issued.key)).statusCode).toBe(200)
      expect((await pets(logged, rotated.key)).statusCode).toBe(200)
      const accessLines = log.lines.filter((line) => line.msg === 'request completed' && line.route === '/v1/pets')
      expect(accessLines.map((line) => line.keyPrefix)).toEqual([issued.prefix, rotated.prefix])
    } finally {
      await logged.close()
    }
  })
})
