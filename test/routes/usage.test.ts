import { beforeAll, describe, expect, it } from 'vitest'
import { issueApiKey, type IssuedApiKey } from '../../src/repositories/api-keys.js'
import { ADMIN_TOKEN, createTestAdminApp, useTestApp } from '../helpers/app.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR

const context = useTestApp()

const usage = (keyId: bigint, hour: number, admitted: number, refused: number, units: number) =>
  context.database.db
    .insertInto('api_key_usage')
    .values({ api_key_id: keyId, hour: new Date(hour), admitted, refused, units })
    .execute()

describe('GET /v1/usage', () => {
  const day = Math.floor(Date.now() / DAY) * DAY - 2 * DAY
  const at = (hours: number) => new Date(day + hours * HOUR).toISOString()
  const range = { from: at(0), to: at(48) }
  let reader: IssuedApiKey, other: IssuedApiKey, stranger: IssuedApiKey, petsOnly: IssuedApiKey

  beforeAll(async () => {
    reader = await issueApiKey(context.database.db, { plan: 'pro', name: 'reader', scopes: ['usage:read'] })
    other = await issueApiKey(context.database.db, { accountId: reader.accountId, name: 'other' })
    stranger = await issueApiKey(context.database.db, { plan: 'pro', name: 'stranger', scopes: ['usage:read'] })
    petsOnly = await issueApiKey(context.database.db, { accountId: reader.accountId, scopes: ['pets:read'] })
    await usage(reader.id, day, 10, 1, 12)
    await usage(reader.id, day + HOUR, 7, 0, 7)
    await usage(other.id, day + 5 * HOUR, 100, 0, 250)
    await usage(stranger.id, day + 5 * HOUR, 1, 9, 1)
    await usage(stranger.id, day, 3, 3, 3)
    await usage(reader.id, day + DAY, 4, 0, 4)
  })

  const get = (key: string, query: Record<string, string>) =>
    context.app.inject({
      method: 'GET',
      url: `/v1/usage?${new URLSearchParams(query).toString()}`,
      headers: { authorization: `Bearer ${key}` }
    })

  const row = (key: IssuedApiKey, start: string, admitted: number, refused: number, units: number) => ({
    start,
    accountId: Number(key.accountId),
    keyId: Number(key.id),
    admitted,
    refused,
    units
  })

  it("answers its own account's hours as JSON, by hour then key, and never another account's", async () => {
    const response = await get(reader.key, range)
    expect(response.statusCode, response.body).toBe(200)
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(response.headers.link).toBeUndefined()
    expect(response.headers['ratelimit-policy']).toBeDefined()
    expect(response.json()).toEqual([
      row(reader, at(0), 10, 1, 12),
      row(reader, at(1), 7, 0, 7),
      row(other, at(5), 100, 0, 250),
      row(reader, at(24), 4, 0, 4)
    ])
    // The other account's key sees its own rows alone.
    const theirs = await get(stranger.key, range)
    expect(theirs.json()).toEqual([row(stranger, at(0), 3, 3, 3), row(stranger, at(5), 1, 9, 1)])
  })

  it('gives the same figures as the admin export, by day and as CSV', async () => {
    const response = await get(reader.key, { ...range, granularity: 'day', format: 'csv' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(response.body).toBe(
      [
        'start,accountId,keyId,admitted,refused,units',
        `${at(0)},${reader.accountId},${reader.id},17,1,19`,
        `${at(0)},${reader.accountId},${other.id},100,0,250`,
        `${at(24)},${reader.accountId},${reader.id},4,0,4`,
        ''
      ].join('\n')
    )
    const admin = await createTestAdminApp(context.database)
    try {
      const exported = await admin.inject({
        method: 'GET',
        url: `/admin/v1/usage?${new URLSearchParams({ ...range, granularity: 'day', format: 'csv', accountId: String(reader.accountId) }).toString()}`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` }
      })
      expect(exported.statusCode).toBe(200)
      expect(response.body).toBe(exported.body)
    } finally {
      await admin.close()
    }
  })

  it('pages with Link: rel="next", keeping the query, until the rows run out', async () => {
    const seen: unknown[] = []
    let url: string | undefined = `/v1/usage?${new URLSearchParams({ ...range, limit: '1' }).toString()}`
    let pages = 0
    while (url !== undefined) {
      const response = await context.app.inject({
        method: 'GET',
        url,
        headers: { authorization: `Bearer ${reader.key}` }
      })
      expect(response.statusCode, response.body).toBe(200)
      seen.push(...response.json<unknown[]>())
      pages++
      const link = response.headers.link as string | undefined
      if (link === undefined) url = undefined
      else {
        const next = new URL(/^<([^>]+)>; rel="next"$/.exec(link)![1]!)
        expect(next.pathname).toBe('/v1/usage')
        expect(next.searchParams.get('from')).toBe(range.from)
        expect(next.searchParams.get('limit')).toBe('1')
        url = `${next.pathname}${next.search}`
      }
    }
    expect(pages).toBe(4)
    expect(seen).toEqual((await get(reader.key, range)).json())
  })

  it("refuses a cursor of another account's listing, or a tampered one, with 400", async () => {
    const first = await get(stranger.key, { ...range, limit: '1' })
    const cursor = new URL(/^<([^>]+)>/.exec(first.headers.link as string)![1]!).searchParams.get('cursor')!
    const stolen = await get(reader.key, { ...range, limit: '1', cursor })
    expect(stolen.statusCode).toBe(400)
    expect(stolen.json().code).toBe('invalid_request')
    const tampered = await get(stranger.key, { ...range, limit: '1', cursor: `x${cursor}` })
    expect(tampered.statusCode).toBe(400)
  })

  it('refuses a key without usage:read with 403 insufficient_scope', async () => {
    for (const key of [petsOnly.key, other.key]) {
      const response = await get(key, range)
      expect(response.statusCode).toBe(403)
      expect(response.json()).toEqual({
        code: 'insufficient_scope',
        message: 'This API key lacks the scope usage:read',
        status: 403
      })
      expect(response.headers['www-authenticate']).toBe(
        'Bearer realm="animal-store", error="insufficient_scope", scope="usage:read"'
      )
    }
  })

  it('refuses a range off the boundaries, a backward one, or a bad granularity, with 400; no key, 401', async () => {
    for (const query of <Record<string, string>[]>[
      { from: new Date(day + 1).toISOString(), to: range.to },
      { from: at(1), to: at(25), granularity: 'day' },
      { from: range.to, to: range.from },
      { ...range, granularity: 'minute' },
      { ...range, format: 'xml' },
      { ...range, limit: '0' },
      { ...range, limit: '0x10' },
      { ...range, limit: '1e1' },
      { from: range.from }
    ]) {
      const response = await get(reader.key, query)
      expect(response.statusCode, JSON.stringify(query)).toBe(400)
      expect(response.json().code).toBe('invalid_request')
    }
    const anonymous = await context.app.inject({ method: 'GET', url: `/v1/usage?${new URLSearchParams(range)}` })
    expect(anonymous.statusCode).toBe(401)
  })

  it('is in the OpenAPI document with the scope it needs', async () => {
    const document = (await context.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
    const operation = document.paths['/usage']?.get ?? document.paths['/v1/usage']?.get
    expect(operation.operationId).toBe('getUsage')
    expect(operation.security).toEqual([{ bearerAuth: ['usage:read'] }])
    expect(Object.keys(operation.responses['200'].content).sort()).toEqual(['application/json', 'text/csv'])
    expect(document.components.schemas.Scope.enum).toContain('usage:read')
  })
})
