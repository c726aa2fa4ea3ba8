import type { InjectOptions } from 'fastify'
import { beforeAll, describe, expect, it } from 'vitest'
import { issueApiKey, revokeApiKey } from '../../src/repositories/api-keys.js'
import { ADMIN_TOKEN, useTestAdminApp } from '../helpers/app.js'

const context = useTestAdminApp({ api: {} })
const tokens: Record<'viewer' | 'operator', string> = { viewer: '', operator: '' }

const as = (token: string, options: InjectOptions) =>
  context.admin.inject({ ...options, headers: { authorization: `Bearer ${token}`, ...options.headers } })

const report = (token: string, keys: unknown) =>
  as(token, { method: 'POST', url: '/admin/v1/keys/leaked', payload: { keys } })

const pets = (key: string) =>
  context.api.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })

beforeAll(async () => {
  for (const role of ['viewer', 'operator'] as const) {
    const made = await as(ADMIN_TOKEN, { method: 'POST', url: '/admin/v1/operators', payload: { name: role, role } })
    expect(made.statusCode, made.body).toBe(201)
    tokens[role] = made.json().token
  }
})

const leakedEvents = () =>
  context.database.db
    .selectFrom('webhook_events')
    .select(['type', 'account_id', 'data'])
    .where('type', '=', 'key.leaked')
    .orderBy('id')
    .execute()

describe('POST /admin/v1/keys/leaked', () => {
  it('revokes the keys the secrets are, answers which matched by id, and emits key.leaked for each', async () => {
    const leaked = await issueApiKey(context.database.db, { plan: 'pro', name: 'leaked' })
    const alsoLeaked = await issueApiKey(context.database.db, { plan: 'free', name: 'also' })
    const untouched = await issueApiKey(context.database.db, { plan: 'pro', name: 'untouched' })
    expect((await pets(leaked.key)).statusCode).toBe(200)

    const mistyped = `${untouched.key.slice(0, -1)}${untouched.key.endsWith('a') ? 'b' : 'a'}`
    const unknown = `ask_AAAAAAAA_${'B'.repeat(32)}`
    const response = await report(tokens.operator, [
      leaked.key,
      `${alsoLeaked.key}`,
      leaked.key,
      mistyped,
      unknown,
      'not a key'
    ])
    expect(response.statusCode, response.body).toBe(200)
    const ids = [leaked.id, alsoLeaked.id].sort((a, b) => (a < b ? -1 : 1)).map(Number)
    expect(response.json()).toEqual({ matched: ids, revoked: ids })

    // Refused at once by the instance that served it, like any revoked key.
    await expect.poll(async () => (await pets(leaked.key)).statusCode).toBe(401)
    expect((await pets(untouched.key)).statusCode).toBe(200)
    const rows = await context.database.db
      .selectFrom('api_keys')
      .select(['id', 'revoked_at'])
      .where('id', 'in', [leaked.id, alsoLeaked.id, untouched.id])
      .orderBy('id')
      .execute()
    expect(rows.map((row) => [row.id, row.revoked_at !== null])).toEqual([
      [leaked.id, true],
      [alsoLeaked.id, true],
      [untouched.id, false]
    ])

    const events = await leakedEvents()
    expect(events.map((event) => [event.account_id, (event.data as { key: { id: string } }).key.id])).toEqual(
      [leaked, alsoLeaked].map((key) => [key.accountId, String(key.id)])
    )
    expect(events[0]!.data).toMatchObject({
      key: { id: String(leaked.id), prefix: leaked.prefix, name: 'leaked', accountId: String(leaked.accountId) },
      revokedBefore: false
    })
    const revokedEvents = await context.database.db
      .selectFrom('webhook_events')
      .select('data')
      .where('type', '=', 'key.revoked')
      .execute()
    expect(revokedEvents.map((event) => (event.data as { key: { id: string } }).key.id)).toEqual(
      expect.arrayContaining([String(leaked.id), String(alsoLeaked.id)])
    )
  })

  it('names a key revoked before as matched but not revoked, and still reports it leaked', async () => {
    const old = await issueApiKey(context.database.db, { plan: 'pro' })
    await revokeApiKey(context.database.db, old.id)
    const before = (await leakedEvents()).length
    const response = await report(ADMIN_TOKEN, [old.key])
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ matched: [Number(old.id)], revoked: [] })
    const events = await leakedEvents()
    expect(events).toHaveLength(before + 1)
    expect(events.at(-1)!.data).toMatchObject({ key: { id: String(old.id) }, revokedBefore: true })
  })

  it('matches a previous secret still in its rotation grace', async () => {
    const key = await issueApiKey(context.database.db, { plan: 'pro' })
    const rotated = await as(ADMIN_TOKEN, {
      method: 'POST',
      url: `/admin/v1/keys/${key.id}/rotate`,
      payload: { graceSeconds: 3600 }
    })
    expect(rotated.statusCode).toBe(200)
    const response = await report(tokens.operator, [key.key])
    expect(response.json()).toEqual({ matched: [Number(key.id)], revoked: [Number(key.id)] })
    expect((await pets(rotated.json().key)).statusCode).toBe(401)
  })

  it('answers nothing matched for secrets that are no key, and changes nothing', async () => {
    const before = (await leakedEvents()).length
    const response = await report(tokens.operator, [`ask_${'x'.repeat(8)}_${'y'.repeat(32)}_${'z'.repeat(6)}`])
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ matched: [], revoked: [] })
    expect(await leakedEvents()).toHaveLength(before)
  })

  it('refuses a viewer with 403 insufficient_role, and a body without keys with 400', async () => {
    const key = await issueApiKey(context.database.db, { plan: 'pro' })
    const viewer = await report(tokens.viewer, [key.key])
    expect(viewer.statusCode).toBe(403)
    expect(viewer.json().code).toBe('insufficient_role')
    expect((await pets(key.key)).statusCode).toBe(200)
    for (const body of [[], 'ask_x', [42], Array(251).fill('ask_')]) {
      const response = await report(tokens.operator, body)
      expect(response.statusCode, JSON.stringify(body).slice(0, 50)).toBe(400)
      expect(response.json().code).toBe('invalid_request')
    }
    expect((await pets(key.key)).statusCode).toBe(200)
  })
})
