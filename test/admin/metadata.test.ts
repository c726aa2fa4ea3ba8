import type { InjectOptions } from 'fastify'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { asAdmin, useTestAdminApp } from '../helpers/app.js'
import { bearer } from '../helpers/traffic.js'

const context = useTestAdminApp({ api: {} })

const call = (options: InjectOptions) => asAdmin(context.admin).inject(options)
async function created(url: string, payload: Record<string, unknown>) {
  const response = await call({ method: 'POST', url, payload })
  expect(response.statusCode, response.body).toBe(201)
  return response.json()
}
const trail = async (query: string) =>
  (await call({ method: 'GET', url: `/admin/v1/events?${query}` })).json<{ action: string; changes: object }[]>()

const METADATA = { customer: 'cus_9', seats: 42, ratio: 1.5, tags: ['a', 1, null, true], billing: { plan: 'annual' } }

/** Both things that carry metadata, each made and changed through its own routes. */
const kinds = [
  { kind: 'key', path: '/admin/v1/keys', fields: { plan: 'free' } },
  { kind: 'account', path: '/admin/v1/accounts', fields: { plan: 'free' } }
] as const

describe.each(kinds)('metadata of an $kind', ({ kind, path, fields }) => {
  it('is kept as given on create, returned by the admin API, replaced whole by a change and removed by {}', async () => {
    const made = await created(path, { ...fields, metadata: METADATA })
    expect(made.metadata).toEqual(METADATA)
    expect((await call({ method: 'GET', url: `${path}/${made.id}` })).json().metadata).toEqual(METADATA)
    expect((await call({ method: 'GET', url: `${path}?limit=100` })).json()).toContainEqual(
      expect.objectContaining({ id: made.id, metadata: METADATA })
    )

    const replaced = await call({ method: 'PATCH', url: `${path}/${made.id}`, payload: { metadata: { note: 'new' } } })
    expect(replaced.statusCode, replaced.body).toBe(200)
    expect(replaced.json().metadata).toEqual({ note: 'new' })
    const cleared = await call({ method: 'PATCH', url: `${path}/${made.id}`, payload: { metadata: {} } })
    expect(cleared.json().metadata).toEqual({})

    const events = await trail(`${kind === 'key' ? 'keyId' : 'accountId'}=${made.id}`)
    const changes = events.filter((event) => event.action === `${kind}.changed`).map((event) => event.changes)
    expect(changes).toEqual([
      { metadata: { before: { note: 'new' }, after: null } },
      { metadata: { before: METADATA, after: { note: 'new' } } }
    ])
    expect(events.find((event) => event.action === `${kind}.created`)!.changes).toMatchObject({
      metadata: { before: null, after: METADATA }
    })
  })

  it('is {} when none is given, and a thing made without any records none in the audit trail', async () => {
    const made = await created(path, fields)
    expect(made.metadata).toEqual({})
    const events = await trail(`${kind === 'key' ? 'keyId' : 'accountId'}=${made.id}`)
    expect(events.find((event) => event.action === `${kind}.created`)!.changes).not.toHaveProperty('metadata')
  })

  it('takes exactly 2,048 bytes as compact JSON, counting UTF-8 bytes', async () => {
    // {"note":"…"} is 11 bytes around the text; é takes two.
    const made = await created(path, { ...fields, metadata: { note: `${'é'.repeat(1018)}x` } })
    expect(made.metadata.note).toHaveLength(1019)
  })

  it.each([
    [`{"note":"${'é'.repeat(1018)}xy"}`, 'metadata must take at most 2048 bytes as JSON, not 2049'],
    ['["a"]', 'metadata must be object'],
    ['"text"', 'metadata must be object'],
    ['null', 'metadata must be object'],
    ['{"big":9007199254740993}', 'metadata.big is an integer beyond ±9007199254740991: send it as a string'],
    ['{"text":"a\\u0000b"}', 'metadata.text must not contain a NUL character or an unpaired surrogate'],
    ['{"text":"\\ud800"}', 'metadata.text must not contain a NUL character or an unpaired surrogate']
  ])('refuses the metadata %s with 400 on create and change, and changes nothing', async (metadata, message) => {
    const send = (method: 'POST' | 'PATCH', url: string, body: string) =>
      call({ method, url, payload: body, headers: { 'content-type': 'application/json' } })
    const table = kind === 'key' ? 'api_keys' : 'accounts'
    const count = async () =>
      Number(
        (await sql<{ count: string }>`SELECT count(*) FROM ${sql.table(table)}`.execute(context.database.db)).rows[0]!
          .count
      )
    const before = await count()
    const refused = await send('POST', path, `{"plan":"${fields.plan}","metadata":${metadata}}`)
    expect(refused.statusCode, refused.body).toBe(400)
    expect(refused.json().code).toBe('invalid_request')
    expect(refused.json().message).toContain(message)
    expect(await count()).toBe(before)

    const made = await created(path, { ...fields, metadata: { kept: true } })
    const changed = await send('PATCH', `${path}/${made.id}`, `{"metadata":${metadata}}`)
    expect(changed.statusCode, changed.body).toBe(400)
    expect(changed.json().message).toContain(message)
    expect((await call({ method: 'GET', url: `${path}/${made.id}` })).json().metadata).toEqual({ kept: true })
  })
})

describe("a key's metadata", () => {
  it('stays with the operators: no answer to the key holder carries it', async () => {
    const marker = 'internal-note-7f3a'
    const key = await created('/admin/v1/keys', { plan: 'free', metadata: { note: marker } })
    for (const url of ['/v1/rate_limit', '/v1/pets']) {
      const response = await context.api.inject({ method: 'GET', url, headers: bearer(key.key) })
      expect(response.statusCode).toBe(200)
      expect(response.body).not.toContain(marker)
      expect(JSON.stringify(response.headers)).not.toContain(marker)
    }
  })

  it("is the key's own: changing it, or the key's name, with the account's plan leaves the account's untouched", async () => {
    const account = await created('/admin/v1/accounts', { plan: 'free', name: 'Acme', metadata: { crm: 'A-1' } })
    const key = await created('/admin/v1/keys', { accountId: account.id, name: 'shop' })
    const changed = await call({
      method: 'PATCH',
      url: `/admin/v1/keys/${key.id}`,
      payload: { plan: 'pro', name: 'storefront', metadata: { team: 'web' } }
    })
    expect(changed.json()).toMatchObject({ plan: 'pro', name: 'storefront', metadata: { team: 'web' } })
    expect((await call({ method: 'GET', url: `/admin/v1/accounts/${account.id}` })).json()).toMatchObject({
      plan: 'pro',
      name: 'Acme',
      metadata: { crm: 'A-1' }
    })
  })
})
