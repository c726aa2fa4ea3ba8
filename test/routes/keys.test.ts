import type { FastifyInstance, InjectOptions } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Scope } from '../../src/db/schema.js'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { createTestApp } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { bearer, holdDatabaseClock } from '../helpers/traffic.js'
import { addPlan } from '../helpers/plans.js'

let database: TestDatabase
let api: FastifyInstance
beforeAll(async () => {
  database = await createTestDatabase()
  api = await createTestApp(database)
})
afterAll(async () => {
  await api?.close()
  await database?.drop()
})

const ALL: Scope[] = ['pets:read', 'pets:write', 'keys:manage']
const KEY_SHAPE = /^ask_[0-9A-Za-z]{8}_[0-9A-Za-z]{32}_[0-9A-Za-z]{6}$/

let plans = 0
/** A new account on a plan of its own, generous unless told, and its first key. */
async function newAccount(scopes: Scope[] = ALL, options: { perMinute?: number; costs?: Record<string, number> } = {}) {
  const plan = `holders-${++plans}`
  await addPlan(database.db, plan, [['minute', options.perMinute ?? 100_000]], options.costs)
  return issueApiKey(database.db, { plan, name: 'first', scopes })
}
const keyIn = (accountId: bigint, scopes: Scope[] = ALL, expiresAt?: Date) =>
  issueApiKey(database.db, { accountId, name: 'more', scopes, expiresAt })

const as = (key: string) => (options: InjectOptions) =>
  api.inject({ ...options, headers: { ...bearer(key), ...options.headers } })

/** Everything a change could write: keys, audit events, outbox events. */
const written = async () => {
  const { rows } = await sql<{ keys: string; audit: string; outbox: string }>`
    SELECT (SELECT string_agg(concat_ws(' ', id, prefix, revoked_at, scopes::text), ';' ORDER BY id) FROM api_keys) AS keys,
           (SELECT count(*) FROM audit_events) AS audit,
           (SELECT count(*) FROM webhook_events) AS outbox`.execute(database.db)
  return rows[0]
}
const auditOf = (keyId: bigint | string) =>
  database.db
    .selectFrom('audit_events')
    .select(['actor', 'action', 'account_id', 'changes', 'request_id'])
    .where('key_id', '=', BigInt(keyId))
    .orderBy('id')
    .execute()
const outboxOf = async (keyId: bigint | string) => {
  const { rows } = await sql<{ type: string; account_id: string }>`
    SELECT type, account_id::text FROM webhook_events WHERE data->'key'->>'id' = ${String(keyId)} ORDER BY id`.execute(
    database.db
  )
  return rows
}
/** The status a key gets from GET /v1/pets, once every change has had its second to arrive. */
const settles = async (key: string, status: number) =>
  expect
    .poll(async () => (await as(key)({ method: 'GET', url: '/v1/pets' })).statusCode, { timeout: 3_000 })
    .toBe(status)

describe('GET /v1/keys', () => {
  it("lists the caller's account's keys only, never a secret or hash, a page at a time", async () => {
    const manager = await newAccount()
    const more = await keyIn(manager.accountId, ['pets:read'])
    const third = await keyIn(manager.accountId, ['pets:write'])
    const stranger = await newAccount()

    const first = await as(manager.key)({ method: 'GET', url: '/v1/keys?limit=2' })
    expect(first.statusCode, first.body).toBe(200)
    expect(first.json()).toEqual([
      {
        id: Number(manager.id),
        prefix: manager.prefix,
        name: 'first',
        scopes: ALL,
        createdAt: manager.createdAt.toISOString(),
        expiresAt: null,
        revokedAt: null,
        previousPrefix: null,
        previousSecretExpiresAt: null
      },
      expect.objectContaining({ id: Number(more.id), prefix: more.prefix, scopes: ['pets:read'] })
    ])
    expect(first.body).not.toContain(manager.key)
    expect(first.body).not.toMatch(/hash|"(secret|key)"/i)
    expect(first.headers['x-ratelimit-remaining']).toBeDefined()
    const link = /^<([^>]+)>; rel="next"$/.exec(first.headers.link as string)![1]!
    expect(link).toMatch(/^http:\/\/[^/]+\/v1\/keys\?limit=2&cursor=/)
    const second = await as(manager.key)({ method: 'GET', url: new URL(link).pathname + new URL(link).search })
    expect(second.json().map((key: { id: number }) => key.id)).toEqual([Number(third.id)])
    expect(second.headers.link).toBeUndefined()

    // The stranger sees its own key alone, and the manager's cursor is not one its listing issued.
    const theirs = await as(stranger.key)({ method: 'GET', url: '/v1/keys' })
    expect(theirs.json().map((key: { id: number }) => key.id)).toEqual([Number(stranger.id)])
    const foreignCursor = await as(stranger.key)({ method: 'GET', url: new URL(link).pathname + new URL(link).search })
    expect(foreignCursor.statusCode).toBe(400)
    expect(foreignCursor.json()).toEqual({
      code: 'invalid_request',
      message: 'cursor is not valid; use the Link header of the previous page',
      status: 400
    })
  })

  it.each(['0x2', '2.0', '+2'])('refuses limit=%s, not written in decimal digits alone, with 400', async (limit) => {
    const { key } = await newAccount()
    const response = await as(key)({ method: 'GET', url: `/v1/keys?limit=${limit}` })
    expect(response.statusCode, response.body).toBe(400)
    expect(response.json()).toMatchObject({ code: 'invalid_request', status: 400 })
    expect(response.json().message).toContain('limit')
  })
})

describe('POST /v1/keys', () => {
  it('issues a key of a subset of the scopes in the caller account, committed before the 201, with its audit and outbox events', async () => {
    const manager = await newAccount()
    const response = await as(manager.key)({
      method: 'POST',
      url: '/v1/keys',
      payload: { name: 'Storefront reader', scopes: ['pets:read'] }
    })
    expect(response.statusCode, response.body).toBe(201)
    const issued = response.json()
    expect(issued).toEqual({
      id: expect.any(Number),
      prefix: issued.key.slice(0, 12),
      name: 'Storefront reader',
      scopes: ['pets:read'],
      createdAt: expect.any(String),
      expiresAt: null,
      revokedAt: null,
      previousPrefix: null,
      previousSecretExpiresAt: null,
      key: expect.stringMatching(KEY_SHAPE)
    })
    const row = await database.db
      .selectFrom('api_keys')
      .select(['account_id', 'scopes', 'name', 'prefix', 'revoked_at'])
      .where('id', '=', BigInt(issued.id))
      .executeTakeFirstOrThrow()
    expect(row).toEqual({
      account_id: manager.accountId,
      scopes: ['pets:read'],
      name: 'Storefront reader',
      prefix: issued.prefix,
      revoked_at: null
    })
    expect(await auditOf(issued.id)).toEqual([
      {
        actor: `key:${manager.prefix}`,
        action: 'key.created',
        account_id: manager.accountId,
        changes: expect.objectContaining({ prefix: { before: null, after: issued.prefix } }),
        request_id: expect.any(String)
      }
    ])
    expect(await outboxOf(issued.id)).toEqual([{ type: 'key.created', account_id: String(manager.accountId) }])
    // The new key works within its scope, and only there.
    expect((await as(issued.key)({ method: 'GET', url: '/v1/pets' })).statusCode).toBe(200)
    const write = await as(issued.key)({ method: 'POST', url: '/v1/pets', payload: { name: 'Rex', categoryId: 1 } })
    expect(write.statusCode).toBe(403)
    expect((await as(issued.key)({ method: 'GET', url: '/v1/keys' })).statusCode).toBe(403)
  })

  it('lets a manager issue a manager, and refuses a scope the caller lacks with 403, writing nothing', async () => {
    const limited = await newAccount(['pets:read', 'keys:manage'])
    const peer = await as(limited.key)({ method: 'POST', url: '/v1/keys', payload: { scopes: ['keys:manage'] } })
    expect(peer.statusCode, peer.body).toBe(201)
    expect(peer.json().scopes).toEqual(['keys:manage'])

    const before = await written()
    const refused = await as(limited.key)({
      method: 'POST',
      url: '/v1/keys',
      payload: { name: 'escalation', scopes: ['pets:read', 'pets:write'] }
    })
    expect(refused.statusCode).toBe(403)
    expect(refused.json()).toEqual({
      code: 'insufficient_scope',
      message: 'This API key lacks the scope pets:write, so it cannot give it to a key',
      status: 403
    })
    expect(refused.headers['www-authenticate']).toBe(
      'Bearer realm="animal-store", error="insufficient_scope", scope="pets:write"'
    )
    expect(await written()).toEqual(before)
  })

  it.each([
    ['no scopes', { scopes: [] }, 'scopes must NOT have fewer than 1 items'],
    ['an unknown scope', { scopes: ['pets:delete'] }, 'scopes.0 must be one of pets:read, pets:write, keys:manage'],
    ['another account', { scopes: ['pets:read'], accountId: 1 }, "body has an unknown property 'accountId'"],
    ['a past expiry', { scopes: ['pets:read'], expiresAt: '2001-01-01T00:00:00Z' }, 'expiresAt must be in the future']
  ])('answers %s with 400 and writes nothing', async (_label, payload, message) => {
    const manager = await newAccount()
    const before = await written()
    const response = await as(manager.key)({ method: 'POST', url: '/v1/keys', payload })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({ code: 'invalid_request', status: 400 })
    expect(response.json().message).toContain(message)
    expect(await written()).toEqual(before)
  })

  it('refuses an Idempotency-Key, since a replay would have to show the secret again', async () => {
    const manager = await newAccount()
    const before = await written()
    const response = await as(manager.key)({
      method: 'POST',
      url: '/v1/keys',
      headers: { 'idempotency-key': 'once' },
      payload: { scopes: ['pets:read'] }
    })
    expect(response.statusCode).toBe(400)
    expect(response.json().message).toMatch(/^Idempotency-Key is not honoured on POST \/v1\/keys/)
    expect(await written()).toEqual(before)
  })

  it('gives a key of a caller that expires no later expiry than the caller', async () => {
    const account = await newAccount(['pets:read'])
    const expiresAt = new Date(Date.now() + 3_600_000)
    const expiring = await keyIn(account.accountId, ALL, expiresAt)
    const inherited = await as(expiring.key)({ method: 'POST', url: '/v1/keys', payload: { scopes: ['pets:read'] } })
    expect(inherited.statusCode, inherited.body).toBe(201)
    expect(inherited.json().expiresAt).toBe(expiresAt.toISOString())

    const before = await written()
    const later = new Date(expiresAt.getTime() + 1000).toISOString()
    const refused = await as(expiring.key)({
      method: 'POST',
      url: '/v1/keys',
      payload: { scopes: ['pets:read'], expiresAt: later }
    })
    expect(refused.statusCode).toBe(400)
    expect(refused.json().message).toBe(
      `expiresAt must be no later than ${expiresAt.toISOString()}, when this API key expires`
    )
    expect(await written()).toEqual(before)
  })
})

describe('another account, an unknown id, a key without keys:manage', () => {
  it("answers another account's key and an unknown id alike with 404, and changes nothing", async () => {
    const manager = await newAccount()
    const stranger = await newAccount()
    const before = await written()
    const bodies: unknown[] = []
    for (const id of [stranger.id, 9_000_000_000n]) {
      for (const request of [
        { method: 'POST' as const, url: `/v1/keys/${id}/rotate` },
        { method: 'DELETE' as const, url: `/v1/keys/${id}` }
      ]) {
        const response = await as(manager.key)(request)
        expect(response.statusCode).toBe(404)
        bodies.push(response.json())
      }
    }
    expect(bodies).toEqual([
      { code: 'not_found', message: `No key with id ${stranger.id}`, status: 404 },
      { code: 'not_found', message: `No key with id ${stranger.id}`, status: 404 },
      { code: 'not_found', message: 'No key with id 9000000000', status: 404 },
      { code: 'not_found', message: 'No key with id 9000000000', status: 404 }
    ])
    expect(await written()).toEqual(before)
    expect((await as(stranger.key)({ method: 'GET', url: '/v1/pets' })).statusCode).toBe(200)
  })

  it('refuses every route to a key without keys:manage with 403 insufficient_scope, counted, writing nothing', async () => {
    const plain = await newAccount(['pets:read', 'pets:write'])
    const other = await keyIn(plain.accountId)
    const before = await written()
    for (const request of [
      { method: 'GET' as const, url: '/v1/keys' },
      { method: 'POST' as const, url: '/v1/keys', payload: { scopes: ['pets:read'] } },
      { method: 'POST' as const, url: `/v1/keys/${other.id}/rotate` },
      { method: 'DELETE' as const, url: `/v1/keys/${other.id}` }
    ]) {
      const response = await as(plain.key)(request)
      expect(response.statusCode, request.url).toBe(403)
      expect(response.json()).toEqual({
        code: 'insufficient_scope',
        message: 'This API key lacks the scope keys:manage',
        status: 403
      })
      expect(response.headers['www-authenticate']).toBe(
        'Bearer realm="animal-store", error="insufficient_scope", scope="keys:manage"'
      )
      expect(response.headers['x-ratelimit-remaining']).toBeDefined()
    }
    expect(await written()).toEqual(before)
  })

  it('answers a request without a key with 401', async () => {
    const response = await api.inject({ method: 'GET', url: '/v1/keys' })
    expect(response.statusCode).toBe(401)
    expect(response.json().code).toBe('unauthorized')
  })
})

describe('DELETE /v1/keys/{id}', () => {
  it('revokes a key of the account, which then gets 401; again it answers the same and records nothing', async () => {
    const manager = await newAccount()
    const doomed = await keyIn(manager.accountId, ['pets:read'])
    expect((await as(doomed.key)({ method: 'GET', url: '/v1/pets' })).statusCode).toBe(200)
    const response = await as(manager.key)({ method: 'DELETE', url: `/v1/keys/${doomed.id}` })
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toMatchObject({ id: Number(doomed.id), revokedAt: expect.any(String) })
    await settles(doomed.key, 401)
    const again = await as(manager.key)({ method: 'DELETE', url: `/v1/keys/${doomed.id}` })
    expect(again.statusCode).toBe(200)
    expect(again.json().revokedAt).toBe(response.json().revokedAt)
    expect(await auditOf(doomed.id)).toEqual([
      expect.objectContaining({ actor: `key:${manager.prefix}`, action: 'key.revoked' })
    ])
    expect(await outboxOf(doomed.id)).toEqual([{ type: 'key.revoked', account_id: String(manager.accountId) }])
  })

  it('lets a key revoke itself', async () => {
    const manager = await newAccount()
    const response = await as(manager.key)({ method: 'DELETE', url: `/v1/keys/${manager.id}` })
    expect(response.statusCode, response.body).toBe(200)
    await settles(manager.key, 401)
    expect(await auditOf(manager.id)).toEqual([
      expect.objectContaining({ actor: `key:${manager.prefix}`, action: 'key.revoked' })
    ])
  })
})

describe('POST /v1/keys/{id}/rotate', () => {
  it('gives a new secret that works while the old one stops, with its audit and outbox events', async () => {
    const manager = await newAccount()
    const rotated = await keyIn(manager.accountId, ['pets:read'])
    expect((await as(rotated.key)({ method: 'GET', url: '/v1/pets' })).statusCode).toBe(200)
    const response = await as(manager.key)({ method: 'POST', url: `/v1/keys/${rotated.id}/rotate` })
    expect(response.statusCode, response.body).toBe(200)
    const fresh = response.json()
    expect(fresh).toMatchObject({
      id: Number(rotated.id),
      scopes: ['pets:read'],
      key: expect.stringMatching(KEY_SHAPE)
    })
    expect(fresh.prefix).not.toBe(rotated.prefix)
    expect((await as(fresh.key)({ method: 'GET', url: '/v1/pets' })).statusCode).toBe(200)
    await settles(rotated.key, 401)
    expect(await auditOf(rotated.id)).toEqual([
      expect.objectContaining({
        actor: `key:${manager.prefix}`,
        action: 'key.rotated',
        changes: {
          prefix: { before: rotated.prefix, after: fresh.prefix },
          previousPrefix: { before: null, after: null },
          previousSecretExpiresAt: { before: null, after: null },
          graceSeconds: { before: null, after: 0 }
        }
      })
    ])
    expect(await outboxOf(rotated.id)).toEqual([{ type: 'key.rotated', account_id: String(manager.accountId) }])
  })

  it('lets a key rotate itself, recorded under the prefix it gave up', async () => {
    const manager = await newAccount()
    const response = await as(manager.key)({ method: 'POST', url: `/v1/keys/${manager.id}/rotate` })
    expect(response.statusCode, response.body).toBe(200)
    const fresh = response.json()
    expect((await as(fresh.key)({ method: 'GET', url: '/v1/keys' })).statusCode).toBe(200)
    await settles(manager.key, 401)
    expect(await auditOf(manager.id)).toEqual([
      expect.objectContaining({
        actor: `key:${manager.prefix}`,
        changes: {
          prefix: { before: manager.prefix, after: fresh.prefix },
          previousPrefix: { before: null, after: null },
          previousSecretExpiresAt: { before: null, after: null },
          graceSeconds: { before: null, after: 0 }
        }
      })
    ])
  })

  it("refuses a key beyond the caller's rights: a scope it lacks (403 insufficient_scope), a later expiry (403 forbidden)", async () => {
    const limited = await newAccount(['pets:read', 'keys:manage'])
    const writer = await keyIn(limited.accountId, ['pets:write'])
    const expiring = await keyIn(limited.accountId, ['pets:read', 'keys:manage'], new Date(Date.now() + 3_600_000))
    const reader = await keyIn(limited.accountId, ['pets:read'])
    const before = await written()
    const scope = await as(limited.key)({ method: 'POST', url: `/v1/keys/${writer.id}/rotate` })
    expect(scope.statusCode).toBe(403)
    expect(scope.json()).toEqual({
      code: 'insufficient_scope',
      message: `This API key lacks the scope pets:write, so it cannot hold the secret of key ${writer.id}`,
      status: 403
    })
    const outlives = await as(expiring.key)({ method: 'POST', url: `/v1/keys/${reader.id}/rotate` })
    expect(outlives.statusCode).toBe(403)
    expect(outlives.json()).toEqual({
      code: 'forbidden',
      message: `Key ${reader.id} works after this API key expires (${expiring.expiresAt!.toISOString()}), so this key cannot rotate it`,
      status: 403
    })
    expect(await written()).toEqual(before)
    // Revoking takes rights away and needs none: the limited key may revoke the writer.
    expect((await as(limited.key)({ method: 'DELETE', url: `/v1/keys/${writer.id}` })).statusCode).toBe(200)
  })

  it('records a change made with the replaced secret, in its grace, under the prefix that secret has', async () => {
    const manager = await newAccount()
    const rotated = await as(manager.key)({
      method: 'POST',
      url: `/v1/keys/${manager.id}/rotate`,
      payload: { graceSeconds: 3600 }
    })
    expect(rotated.statusCode, rotated.body).toBe(200)
    const fresh = rotated.json()
    const withOld = await as(manager.key)({ method: 'POST', url: '/v1/keys', payload: { scopes: ['pets:read'] } })
    expect(withOld.statusCode, withOld.body).toBe(201)
    const withNew = await as(fresh.key)({ method: 'POST', url: '/v1/keys', payload: { scopes: ['pets:read'] } })
    expect(withNew.statusCode, withNew.body).toBe(201)
    expect((await auditOf(withOld.json().id))[0]).toMatchObject({ actor: `key:${manager.prefix}` })
    expect((await auditOf(withNew.json().id))[0]).toMatchObject({ actor: `key:${fresh.prefix}` })
  })

  it('answers a revoked key with 409 key_revoked', async () => {
    const manager = await newAccount()
    const revoked = await keyIn(manager.accountId)
    await as(manager.key)({ method: 'DELETE', url: `/v1/keys/${revoked.id}` })
    const response = await as(manager.key)({ method: 'POST', url: `/v1/keys/${revoked.id}/rotate` })
    expect(response.statusCode).toBe(409)
    expect(response.json()).toEqual({
      code: 'key_revoked',
      message: `Key ${revoked.id} is revoked; a revoked key cannot be rotated`,
      status: 409
    })
  })
})

describe("a key holder's restrictions", () => {
  const from = (key: string, remoteAddress: string) =>
    api.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key), remoteAddress })
  const allowedOf = async (id: bigint | number) => {
    const { rows } = await sql<{ allowed: string[] | null }>`
      SELECT allowed_addresses AS allowed FROM api_keys WHERE id = ${String(id)}`.execute(database.db)
    return rows[0]!.allowed
  }

  it("pass to a key it makes: the maker's allowed addresses, so the new key works only from them", async () => {
    const open = await newAccount()
    const maker = await issueApiKey(database.db, {
      accountId: open.accountId,
      name: 'fenced',
      scopes: ALL,
      allowedAddresses: ['127.0.0.2/32']
    })
    const made = await api.inject({
      method: 'POST',
      url: '/v1/keys',
      headers: bearer(maker.key),
      remoteAddress: '127.0.0.2',
      payload: { scopes: ALL }
    })
    expect(made.statusCode, made.body).toBe(201)
    const key = made.json()
    expect(await allowedOf(key.id)).toEqual(['127.0.0.2/32'])
    expect((await from(key.key, '127.0.0.2')).statusCode).toBe(200)
    const elsewhere = await from(key.key, '198.51.100.9')
    expect(elsewhere.statusCode).toBe(403)
    expect(elsewhere.json().code).toBe('address_not_allowed')
    expect(await auditOf(key.id)).toEqual([
      expect.objectContaining({
        action: 'key.created',
        changes: expect.objectContaining({ allowedAddresses: { before: null, after: ['127.0.0.2/32'] } })
      })
    ])
  })

  it('refuse a rotation of a key usable from addresses the caller is not (403 forbidden), and allow one within them', async () => {
    const open = await newAccount()
    const maker = await issueApiKey(database.db, {
      accountId: open.accountId,
      name: 'fenced',
      scopes: ALL,
      allowedAddresses: ['127.0.0.0/24']
    })
    const anywhere = await keyIn(open.accountId, ['pets:read'])
    const wider = await issueApiKey(database.db, {
      accountId: open.accountId,
      scopes: ['pets:read'],
      allowedAddresses: ['127.0.0.0/8']
    })
    const within = await issueApiKey(database.db, {
      accountId: open.accountId,
      scopes: ['pets:read'],
      allowedAddresses: ['127.0.0.7/32']
    })
    const rotate = (id: bigint) =>
      api.inject({
        method: 'POST',
        url: `/v1/keys/${id}/rotate`,
        headers: bearer(maker.key),
        remoteAddress: '127.0.0.2'
      })
    const before = await written()
    for (const beyond of [anywhere, wider]) {
      const refused = await rotate(beyond.id)
      expect(refused.statusCode, refused.body).toBe(403)
      expect(refused.json()).toEqual({
        code: 'forbidden',
        message: `Key ${beyond.id} may be used from addresses this API key may not, so this key cannot rotate it`,
        status: 403
      })
    }
    expect(await written()).toEqual(before)
    const rotated = await rotate(within.id)
    expect(rotated.statusCode, rotated.body).toBe(200)
  })
})

describe('limits', () => {
  it("count each route against the caller's account, at the cost its plan names", async () => {
    const manager = await newAccount(ALL, { perMinute: 10, costs: { 'POST /v1/keys': 4, 'GET /v1/keys': 2 } })
    await holdDatabaseClock(database)
    const list = { method: 'GET' as const, url: '/v1/keys' }
    const create = { method: 'POST' as const, url: '/v1/keys', payload: { scopes: ['pets:read'] } }
    const listed = await as(manager.key)(list)
    expect(listed.headers['x-ratelimit-remaining']).toBe('8')
    const created = await as(manager.key)(create)
    expect(created.statusCode).toBe(201)
    expect(created.headers['x-ratelimit-remaining']).toBe('4')
    // The new key shares the account's windows: its own listing spends them too.
    const second = await as(manager.key)(create)
    expect(second.statusCode).toBe(201)
    const spent = await as(created.json().key)(list)
    expect(spent.statusCode).toBe(429)
  })

  it('answers another method on these paths with 405 and an Allow header', async () => {
    const manager = await newAccount()
    const response = await as(manager.key)({ method: 'PUT', url: `/v1/keys/${manager.id}` })
    expect(response.statusCode).toBe(405)
    expect(response.headers.allow).toBe('DELETE')
  })
})
