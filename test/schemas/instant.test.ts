import type { InjectOptions } from 'fastify'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { useTestAdminApp, ADMIN_TOKEN } from '../helpers/app.js'
import { bearer } from '../helpers/traffic.js'

// Every instant a client sends is bounded to what the database stores and the response schema
// serves (years 0001 to 9999 in UTC): beyond, 400 and nothing written, and every listing still answers.

const context = useTestAdminApp({ api: {} })

const asAdmin = (options: InjectOptions) =>
  context.admin.inject({ ...options, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...options.headers } })

/** Everything a request could write. */
const written = async () => {
  const { rows } = await sql<Record<string, string>>`
    SELECT (SELECT string_agg(concat_ws(' ', id, expires_at, revoked_at), ';' ORDER BY id) FROM api_keys) AS keys,
           (SELECT string_agg(concat_ws(' ', account_id, "window", until), ';' ORDER BY account_id, "window") FROM account_limit_overrides) AS overrides,
           (SELECT count(*) FROM accounts) AS accounts,
           (SELECT count(*) FROM audit_events) AS audit`.execute(context.database.db)
  return rows[0]
}

const BEYOND = [
  ['past year 9999 in UTC', '9999-12-31T23:59:59-23:59'],
  ['past year 9999 by a millisecond', '10000-01-01T00:00:00Z'],
  ['before year 1 in UTC', '0001-01-01T00:00:00+00:01'],
  ['a leap second', '2016-12-31T23:59:60Z'],
  ['an offset past 23:59', '2099-01-01T00:00:00+24:00']
] as const

const refusedWithoutWriting = async (send: () => Promise<{ statusCode: number; body: string }>, field: string) => {
  const before = await written()
  const response = await send()
  expect(response.statusCode, response.body).toBe(400)
  expect(JSON.parse(response.body)).toEqual({
    code: 'invalid_request',
    message: expect.stringContaining(`${field} must be a real instant in RFC 3339`),
    status: 400
  })
  expect(await written()).toEqual(before)
}

describe('an instant out of the stored range', () => {
  it.each(BEYOND)('is refused as expiresAt of POST /v1/keys (%s)', async (_label, instant) => {
    const maker = await issueApiKey(context.database.db, { plan: 'free', scopes: ['pets:read', 'keys:manage'] })
    await refusedWithoutWriting(
      () =>
        context.api.inject({
          method: 'POST',
          url: '/v1/keys',
          headers: bearer(maker.key),
          payload: { scopes: ['pets:read'], expiresAt: instant }
        }),
      'expiresAt'
    )
    const listing = await context.api.inject({ method: 'GET', url: '/v1/keys', headers: bearer(maker.key) })
    expect(listing.statusCode, listing.body).toBe(200)
  })

  it.each(BEYOND)('is refused as expiresAt of POST /admin/v1/keys (%s)', async (_label, instant) => {
    await refusedWithoutWriting(
      () => asAdmin({ method: 'POST', url: '/admin/v1/keys', payload: { plan: 'free', expiresAt: instant } }),
      'expiresAt'
    )
    expect((await asAdmin({ method: 'GET', url: '/admin/v1/keys' })).statusCode).toBe(200)
  })

  it.each(BEYOND)('is refused as expiresAt of PATCH /admin/v1/keys/{id} (%s)', async (_label, instant) => {
    const key = await issueApiKey(context.database.db, { plan: 'free' })
    await refusedWithoutWriting(
      () => asAdmin({ method: 'PATCH', url: `/admin/v1/keys/${key.id}`, payload: { expiresAt: instant } }),
      'expiresAt'
    )
    expect((await asAdmin({ method: 'GET', url: `/admin/v1/keys/${key.id}` })).statusCode).toBe(200)
  })

  it.each(BEYOND)("is refused as an override's until on POST /admin/v1/accounts (%s)", async (_label, instant) => {
    await refusedWithoutWriting(
      () =>
        asAdmin({
          method: 'POST',
          url: '/admin/v1/accounts',
          payload: { plan: 'free', overrides: [{ window: 'minute', limit: 5, until: instant }] }
        }),
      'overrides.0.until'
    )
  })

  it.each(BEYOND)(
    "is refused as an override's until on PATCH /admin/v1/accounts/{id} (%s)",
    async (_label, instant) => {
      const key = await issueApiKey(context.database.db, { plan: 'free' })
      await refusedWithoutWriting(
        () =>
          asAdmin({
            method: 'PATCH',
            url: `/admin/v1/accounts/${key.accountId}`,
            payload: { overrides: [{ window: 'minute', limit: 5, until: instant }] }
          }),
        'overrides.0.until'
      )
      expect((await asAdmin({ method: 'GET', url: `/admin/v1/accounts/${key.accountId}` })).statusCode).toBe(200)
    }
  )

  it.each(BEYOND)('is refused as since of GET /admin/v1/events (%s)', async (_label, instant) => {
    await refusedWithoutWriting(
      () => asAdmin({ method: 'GET', url: `/admin/v1/events?${new URLSearchParams({ since: instant })}` }),
      'since'
    )
  })

  it.each(BEYOND)('is refused as from and to of GET /admin/v1/usage (%s)', async (_label, instant) => {
    await refusedWithoutWriting(
      () =>
        asAdmin({
          method: 'GET',
          url: `/admin/v1/usage?${new URLSearchParams({ from: '2020-01-01T00:00:00Z', to: instant })}`
        }),
      'to'
    )
    await refusedWithoutWriting(
      () =>
        asAdmin({
          method: 'GET',
          url: `/admin/v1/usage?${new URLSearchParams({ from: instant, to: '2020-01-01T00:00:00Z' })}`
        }),
      'from'
    )
  })
})

describe('the last instant stored', () => {
  it('is taken as an expiry and served back in every listing', async () => {
    const last = '9999-12-31T23:59:59.999Z'
    const maker = await issueApiKey(context.database.db, { plan: 'free', scopes: ['pets:read', 'keys:manage'] })
    const made = await context.api.inject({
      method: 'POST',
      url: '/v1/keys',
      headers: bearer(maker.key),
      payload: { scopes: ['pets:read'], expiresAt: '9999-12-31T23:59:59.999+00:00' }
    })
    expect(made.statusCode, made.body).toBe(201)
    expect(made.json().expiresAt).toBe(last)
    const listing = await context.api.inject({ method: 'GET', url: '/v1/keys', headers: bearer(maker.key) })
    expect(listing.statusCode, listing.body).toBe(200)
    const adminMade = await asAdmin({
      method: 'POST',
      url: '/admin/v1/keys',
      payload: { plan: 'free', expiresAt: last }
    })
    expect(adminMade.statusCode, adminMade.body).toBe(201)
    const adminListing = await asAdmin({ method: 'GET', url: '/admin/v1/keys' })
    expect(adminListing.statusCode, adminListing.body).toBe(200)
    expect(adminListing.json().map((key: { expiresAt: string | null }) => key.expiresAt)).toContain(last)
  })
})
