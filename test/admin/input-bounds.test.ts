import type { InjectOptions } from 'fastify'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { useTestAdminApp, ADMIN_TOKEN } from '../helpers/app.js'

// Values the schema once let through and the database or the process could not take: each is now a
// 400 with the Error body, and nothing is written.

const context = useTestAdminApp()

const call = (options: InjectOptions) =>
  context.admin.inject({ ...options, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...options.headers } })

const written = async () => {
  const { rows } = await sql<Record<string, string>>`
    SELECT (SELECT string_agg(concat_ws(' ', id, metadata::text), ';' ORDER BY id) FROM api_keys) AS keys,
           (SELECT string_agg(concat_ws(' ', id, metadata::text), ';' ORDER BY id) FROM accounts) AS accounts,
           (SELECT string_agg(concat_ws(' ', account_id, "window", "limit"), ';' ORDER BY account_id, "window") FROM account_limit_overrides) AS overrides,
           (SELECT string_agg(concat_ws(' ', account_id, remaining), ';' ORDER BY account_id) FROM account_credits) AS credits,
           (SELECT count(*) FROM audit_events) AS audit`.execute(context.database.db)
  return rows[0]
}

const refused = async (options: InjectOptions, message: string) => {
  const before = await written()
  const response = await call(options)
  expect(response.statusCode, response.body).toBe(400)
  expect(response.json()).toEqual({ code: 'invalid_request', message: expect.stringContaining(message), status: 400 })
  expect(await written()).toEqual(before)
}

/** `{"a":[[…[]…]]}`, an object and `depth` arrays, as text: the body parser takes it, so the service must. */
const nested = (depth: number) => `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`

describe('metadata nested deeper than anyone needs', () => {
  it.each([
    [
      'POST /admin/v1/keys',
      'POST',
      () => '/admin/v1/keys',
      (metadata: string) => `{"plan":"free","metadata":${metadata}}`
    ],
    [
      'PATCH /admin/v1/keys/{id}',
      'PATCH',
      (ids: Ids) => `/admin/v1/keys/${ids.key}`,
      (m: string) => `{"metadata":${m}}`
    ],
    ['POST /admin/v1/accounts', 'POST', () => '/admin/v1/accounts', (m: string) => `{"plan":"free","metadata":${m}}`],
    [
      'PATCH /admin/v1/accounts/{id}',
      'PATCH',
      (ids: Ids) => `/admin/v1/accounts/${ids.account}`,
      (m: string) => `{"metadata":${m}}`
    ]
  ] as const)('is refused with 400 on %s', async (_label, method, url, body) => {
    const key = await issueApiKey(context.database.db, { plan: 'free' })
    const ids = { key: key.id, account: key.accountId }
    for (const depth of [3_000, 32]) {
      await refused(
        { method, url: url(ids), headers: { 'content-type': 'application/json' }, payload: body(nested(depth)) },
        'metadata is nested deeper than 32 levels'
      )
    }
    // 32 levels are taken.
    const deep = await call({
      method,
      url: url(ids),
      headers: { 'content-type': 'application/json' },
      payload: body(nested(31))
    })
    expect(deep.statusCode, deep.body).toBeLessThan(300)
  })
})

type Ids = { key: bigint; account: bigint }

describe('perMinute and perDay past what the database takes', () => {
  it.each([2_000_000_001, 2_147_483_647, 2_147_483_648])('are refused with 400 (%s)', async (value) => {
    const key = await issueApiKey(context.database.db, { plan: 'free' })
    for (const field of ['perMinute', 'perDay']) {
      const message = `${field} must be an integer from 1 to 2000000000`
      await refused({ method: 'POST', url: '/admin/v1/keys', payload: { plan: 'free', [field]: value } }, message)
      await refused({ method: 'PATCH', url: `/admin/v1/keys/${key.id}`, payload: { [field]: value } }, message)
      await refused({ method: 'POST', url: '/admin/v1/accounts', payload: { plan: 'free', [field]: value } }, message)
      await refused(
        { method: 'PATCH', url: `/admin/v1/accounts/${key.accountId}`, payload: { [field]: value } },
        message
      )
    }
    const most = await call({
      method: 'POST',
      url: '/admin/v1/accounts',
      payload: { plan: 'free', perDay: 2_000_000_000 }
    })
    expect(most.statusCode, most.body).toBe(201)
  })
})

describe('a credit balance', () => {
  it('is refused with 400 where an add would take it past the most a balance holds', async () => {
    const key = await issueApiKey(context.database.db, { plan: 'free' })
    const url = `/admin/v1/accounts/${key.accountId}/credits`
    expect((await call({ method: 'POST', url, payload: { set: 1_000 } })).statusCode).toBe(200)
    await context.database.pool.query(
      'UPDATE account_credits SET remaining = 9223372036854775000 WHERE account_id = $1',
      [key.accountId]
    )
    await refused(
      { method: 'POST', url, payload: { add: 1_000_000_000_000 } },
      'add would take the balance past 1000000000000000'
    )
    await context.database.pool.query('UPDATE account_credits SET remaining = 999999999999000 WHERE account_id = $1', [
      key.accountId
    ])
    await refused({ method: 'POST', url, payload: { add: 1_001 } }, 'add would take the balance past 1000000000000000')
    const most = await call({ method: 'POST', url, payload: { add: 1_000 } })
    expect(most.statusCode, most.body).toBe(200)
    expect(most.json().remaining).toBe(1_000_000_000_000_000)
  })
})

describe('the account a new key joins, named by `account`', () => {
  it('is refused with 400 when it holds what no id or externalId may', async () => {
    await refused({ method: 'POST', url: '/admin/v1/keys', payload: { account: 'a\u0000b' } }, 'account')
  })

  it('is looked up as an externalId alone past the largest id, and not found is a 400', async () => {
    await refused(
      { method: 'POST', url: '/admin/v1/keys', payload: { account: '9999999999999999999' } },
      "No account has the id or externalId '9999999999999999999'"
    )
    const made = await call({
      method: 'POST',
      url: '/admin/v1/accounts',
      payload: { externalId: '9999999999999999999', plan: 'free' }
    })
    expect(made.statusCode, made.body).toBe(201)
    const key = await call({ method: 'POST', url: '/admin/v1/keys', payload: { account: '9999999999999999999' } })
    expect(key.statusCode, key.body).toBe(201)
    expect(key.json().accountId).toBe(made.json().id)
  })
})
