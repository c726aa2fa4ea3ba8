import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, issueTestKey, manualClock, withKey } from '../helpers/app.js'
import { holdDatabaseClock } from '../helpers/traffic.js'
import { createTestDatabase, lockWaiters, recordQueries, type TestDatabase } from '../helpers/database.js'
import { insertPets } from '../../src/repositories/pets.js'
import type { Pet } from '../../src/schemas/pets.js'
import { issueApiKey } from '../../src/repositories/api-keys.js'

let database: TestDatabase
let app: FastifyInstance
let api: ReturnType<typeof withKey>
const clock = manualClock(new Date('2027-01-01T00:00:00Z'))

beforeAll(async () => {
  database = await createTestDatabase()
  app = await createTestApp(database, { clock, env: { PUBLIC_BASE_URL: 'https://api.example.test/v1' } })
  api = withKey(app, await issueTestKey(database))
})
afterAll(async () => {
  await app.close()
  await database.drop()
})
beforeEach(async () => {
  await sql`TRUNCATE pets RESTART IDENTITY`.execute(database.db)
  await clock.set(new Date('2027-01-01T00:00:00Z'))
})

const post = (payload: unknown) =>
  api.inject({
    method: 'POST',
    url: '/v1/pets',
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    headers: { 'content-type': 'application/json' }
  })

async function petsInDatabase() {
  const { rows } = await sql<{ id: bigint; name: string; category_id: bigint; status: string | null }>`
    SELECT id, name, category_id, status FROM pets ORDER BY id`.execute(database.db)
  return rows
}

async function seed(count: number, status?: (i: number) => string | undefined) {
  for (let i = 1; i <= count; i++) {
    const response = await post({ name: `pet-${i}`, categoryId: i, ...(status?.(i) ? { status: status(i) } : {}) })
    expect(response.statusCode).toBe(201)
  }
}

describe('POST /v1/pets', () => {
  it('creates pets sent together in fewer statements than pets, each answered with its own row', async () => {
    const queries = recordQueries(database.name)
    let responses
    try {
      responses = await Promise.all(Array.from({ length: 30 }, (_, i) => post({ name: `pet-${i}`, categoryId: i })))
    } finally {
      queries.stop()
    }
    expect(responses.map((response) => response.statusCode)).toEqual(Array(30).fill(201))
    const stored = new Map((await petsInDatabase()).map((row) => [Number(row.id), row]))
    expect(stored.size).toBe(30)
    responses.forEach((response, i) => {
      const pet = response.json()
      expect(pet).toEqual({ id: expect.any(Number), name: `pet-${i}`, categoryId: i })
      expect(stored.get(pet.id)).toMatchObject({ name: `pet-${i}`, category_id: BigInt(i) })
    })
    const statements = queries.texts.filter((text) => text.includes('INSERT INTO pets'))
    expect(statements.length).toBeGreaterThan(0)
    expect(statements.length).toBeLessThan(30)
  })

  it('creates a pet, answers 201 with the assigned id, and commits the row', async () => {
    const response = await post({ name: 'Rex', categoryId: 7, status: 'available' })
    expect(response.statusCode).toBe(201)
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(response.json()).toEqual({ id: 1, name: 'Rex', categoryId: 7, status: 'available' })
    expect(await petsInDatabase()).toEqual([{ id: 1n, name: 'Rex', category_id: 7n, status: 'available' }])
  })

  it('leaves status out of the JSON and NULL in the row when none is sent', async () => {
    const response = await post({ name: 'Tom', categoryId: 1 })
    expect(response.statusCode).toBe(201)
    expect(response.body).toBe('{"id":1,"name":"Tom","categoryId":1}')
    expect((await petsInDatabase())[0]!.status).toBeNull()
  })

  it.each([
    ['status null', { name: 'a', categoryId: 1, status: null }, 'status'],
    ['an unknown status', { name: 'a', categoryId: 1, status: 'lost' }, 'status'],
    ['a missing name', { categoryId: 1 }, "'name'"],
    ['a missing categoryId', { name: 'a' }, "'categoryId'"],
    ['an empty name', { name: '', categoryId: 1 }, 'name'],
    ['a name of 256 characters', { name: 'x'.repeat(256), categoryId: 1 }, 'name'],
    ['a numeric name', { name: 5, categoryId: 1 }, 'name'],
    ['a string categoryId', { name: 'a', categoryId: '5' }, 'categoryId'],
    ['a fractional categoryId', { name: 'a', categoryId: 1.5 }, 'categoryId'],
    ['a boolean categoryId', { name: 'a', categoryId: true }, 'categoryId'],
    ['an array body', [{ name: 'a', categoryId: 1 }], 'body'],
    ['a body that is a string', 'just text', 'body']
  ])('refuses %s with 400 invalid_request naming the field, and stores nothing', async (_label, body, field) => {
    const response = await post(JSON.stringify(body))
    expect(response.statusCode).toBe(400)
    const error = response.json()
    expect(error).toMatchObject({ code: 'invalid_request', status: 400 })
    expect(error.message).toContain(field)
    expect(await petsInDatabase()).toEqual([])
  })

  it('refuses unknown properties with 400 naming each of them', async () => {
    const response = await post({ name: 'a', categoryId: 1, id: 5, category_id: 3 })
    expect(response.statusCode).toBe(400)
    expect(response.json().message).toContain("'id'")
    expect(response.json().message).toContain("'category_id'")
    expect(await petsInDatabase()).toEqual([])
  })

  it.each([
    ['Latin-1 é', [0xe9], 'application/json'],
    ['Latin-1 é declared as Latin-1', [0xe9], 'application/json; charset=iso-8859-1'],
    ['a cut-off sequence', [0xe2, 0x82], 'application/json'],
    ['an encoded surrogate', [0xed, 0xa0, 0x80], 'application/json']
  ])(
    'refuses a body with %s, which is not UTF-8, with 400 invalid_json, and stores nothing',
    async (_label, bytes, type) => {
      const payload = Buffer.concat([
        Buffer.from('{"name":"Ren'),
        Buffer.from(bytes),
        Buffer.from('e","categoryId":1}')
      ])
      const response = await api.inject({ method: 'POST', url: '/v1/pets', payload, headers: { 'content-type': type } })
      expect(response.statusCode, response.body).toBe(400)
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(response.json()).toEqual({
        code: 'invalid_json',
        message: 'The request body is not valid UTF-8',
        status: 400
      })
      expect(await petsInDatabase()).toEqual([])
    }
  )

  it('takes a name written in UTF-8 as its characters', async () => {
    const payload = Buffer.from('{"name":"Ren\u00e9e \u{1F415}","categoryId":1}')
    const response = await api.inject({
      method: 'POST',
      url: '/v1/pets',
      payload,
      headers: { 'content-type': 'application/json' }
    })
    expect(response.statusCode, response.body).toBe(201)
    expect(response.json()).toEqual({ id: 1, name: 'Ren\u00e9e \u{1F415}', categoryId: 1 })
    expect((await petsInDatabase())[0]!.name).toBe('Ren\u00e9e \u{1F415}')
  })

  it('refuses a __proto__ key as an unknown property', async () => {
    const response = await post('{"name":"a","categoryId":1,"__proto__":{"status":"sold"}}')
    expect(response.statusCode).toBe(400)
    expect(response.json().message).toContain("'__proto__'")
  })

  it('keeps categoryId exact over the whole int64 range, byte for byte', async () => {
    for (const value of ['9223372036854775807', '-9223372036854775808', '9007199254740993', '0']) {
      const response = await post(`{"name":"big","categoryId":${value}}`)
      expect(response.statusCode).toBe(201)
      expect(response.body).toContain(`"categoryId":${value}`)
      const id = response.json().id
      const fetched = await api.inject({ method: 'GET', url: `/v1/pets/${id}` })
      expect(fetched.body).toContain(`"categoryId":${value}`)
    }
    expect((await petsInDatabase()).map((row) => row.category_id)).toEqual([
      9223372036854775807n,
      -9223372036854775808n,
      9007199254740993n,
      0n
    ])
  })

  it.each(['9223372036854775808', '-9223372036854775809', '1e3', '100000000000000000000000', '2.0'])(
    'refuses categoryId %s instead of rounding it',
    async (value) => {
      const response = await post(`{"name":"big","categoryId":${value}}`)
      expect(response.statusCode).toBe(400)
      expect(response.json()).toMatchObject({ code: 'invalid_request' })
      expect(response.json().message).toContain('categoryId')
      expect(await petsInDatabase()).toEqual([])
    }
  )

  it('assigns ids exactly at the top of the int64 range', async () => {
    await sql`ALTER TABLE pets ALTER COLUMN id RESTART WITH 9223372036854775806`.execute(database.db)
    const first = await post({ name: 'a', categoryId: 1 })
    const second = await post({ name: 'b', categoryId: 1 })
    expect(first.body).toContain('"id":9223372036854775806,')
    expect(second.body).toContain('"id":9223372036854775807,')
    const fetched = await api.inject({ method: 'GET', url: '/v1/pets/9223372036854775807' })
    expect(fetched.statusCode).toBe(200)
    expect(fetched.body).toBe('{"id":9223372036854775807,"name":"b","categoryId":1}')
  })
})

describe('a pet name', () => {
  it.each([
    ['a tag character (U+E0041)', 'Rex\u{E0041}'],
    ['a musical format control (U+1D173)', 'Rex\u{1D173}'],
    ['a zero-width space (U+200B)', 'Rex\u200B']
  ])('with %s is refused with 400, as key and account names are, and nothing is stored', async (_label, name) => {
    const response = await post({ name, categoryId: 1 })
    expect(response.statusCode, response.body).toBe(400)
    expect(response.json()).toEqual({
      code: 'invalid_request',
      message:
        'name must not contain control characters, invisible format characters, line separators or unpaired surrogates',
      status: 400
    })
    expect(await petsInDatabase()).toEqual([])
  })

  it('beyond the BMP but no format character is taken', async () => {
    const response = await post({ name: 'Rex \u{1F415}', categoryId: 1 })
    expect(response.statusCode, response.body).toBe(201)
  })
})

describe('GET /v1/pets', () => {
  it('lists pets in ascending id order with the default limit of 20', async () => {
    await seed(25)
    const response = await api.inject({ method: 'GET', url: '/v1/pets' })
    expect(response.statusCode).toBe(200)
    const pets = response.json()
    expect(pets).toHaveLength(20)
    expect(pets.map((pet: { id: number }) => pet.id)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
  })

  it('filters by status', async () => {
    await seed(9, (i) => ['available', 'pending', 'sold'][i % 3])
    const response = await api.inject({ method: 'GET', url: '/v1/pets?status=sold&limit=100' })
    expect(response.statusCode).toBe(200)
    expect(response.json().map((pet: { id: number; status: string }) => [pet.id, pet.status])).toEqual([
      [2, 'sold'],
      [5, 'sold'],
      [8, 'sold']
    ])
  })

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=abc', 'limit'],
    ['status=lost', 'status']
  ])('refuses %s with 400 naming the parameter', async (query, field) => {
    const response = await api.inject({ method: 'GET', url: `/v1/pets?${query}` })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({ code: 'invalid_request', status: 400 })
    expect(response.json().message).toContain(field)
  })

  // Only decimal digits: a form Number() would also read (hex, binary, octal, exponent, fraction,
  // padding) is a 400, as it is for petId.
  it.each(['0x10', '0b11', '0o7', '1e1', '.5e1', '10.0', '2.', '%205', '5%20', '%0A5', '05', '+5'])(
    'refuses limit=%s with 400 naming limit',
    async (limit) => {
      await seed(3)
      const response = await api.inject({ method: 'GET', url: `/v1/pets?limit=${limit}` })
      expect(response.statusCode, response.body).toBe(400)
      expect(response.json()).toMatchObject({ code: 'invalid_request', status: 400 })
      expect(response.json().message).toContain('limit')
    }
  )

  it('accepts limits 1 and 100 and ignores unknown query parameters', async () => {
    await seed(3)
    expect((await api.inject({ method: 'GET', url: '/v1/pets?limit=1&colour=red' })).json()).toHaveLength(1)
    expect((await api.inject({ method: 'GET', url: '/v1/pets?limit=100' })).json()).toHaveLength(3)
  })

  it('pages with Link rel="next" until every pet is seen once, keeping filter and limit', async () => {
    await seed(12, (i) => (i % 2 ? 'available' : 'sold'))
    const seen: number[] = []
    let url: string | undefined = '/v1/pets?limit=2&status=available'
    let pages = 0
    while (url) {
      const response = await api.inject({ method: 'GET', url })
      expect(response.statusCode).toBe(200)
      seen.push(...response.json().map((pet: { id: number }) => pet.id))
      const link = response.headers.link as string | undefined
      if (link) {
        expect(link).toMatch(
          /^<https:\/\/api\.example\.test\/v1\/pets\?limit=2&status=available&cursor=[^>]+>; rel="next"$/
        )
        url = link.slice(1, link.indexOf('>')).replace('https://api.example.test', '')
      } else url = undefined
      pages++
    }
    expect(seen).toEqual([1, 3, 5, 7, 9, 11])
    expect(pages).toBe(3)
  })

  it("carries the default limit=20 in the next page's Link when no limit was sent", async () => {
    await seed(21)
    const response = await api.inject({ method: 'GET', url: '/v1/pets' })
    expect(response.json()).toHaveLength(20)
    expect(response.headers.link).toMatch(
      /^<https:\/\/api\.example\.test\/v1\/pets\?limit=20&cursor=[^>]+>; rel="next"$/
    )
    const next = (response.headers.link as string).match(/<[^>]*(\/v1\/pets\?[^>]+)>/)![1]!
    expect((await api.inject({ method: 'GET', url: next })).json().map((pet: { id: number }) => pet.id)).toEqual([21])
  })

  it.each(['limit=5&limit=6', 'limit=5&limit=5', 'status=sold&status=pending', 'status=sold&status=sold'])(
    'refuses the repeated parameter in %s with 400',
    async (query) => {
      await seed(3, () => 'sold')
      const response = await api.inject({ method: 'GET', url: `/v1/pets?${query}` })
      expect(response.statusCode, response.body).toBe(400)
      expect(response.json()).toMatchObject({ code: 'invalid_request', status: 400 })
      expect(response.json().message).toContain(query.slice(0, query.indexOf('=')))
    }
  )

  it('answers HEAD as GET, with its headers and no body', async () => {
    await seed(3)
    const get = await api.inject({ method: 'GET', url: '/v1/pets?limit=2' })
    const head = await api.inject({ method: 'HEAD', url: '/v1/pets?limit=2' })
    expect(head.statusCode).toBe(200)
    expect(head.body).toBe('')
    expect(head.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(head.headers['content-length']).toBe(get.headers['content-length'])
    expect(head.headers.link).toMatch(/^<https:\/\/api\.example\.test\/v1\/pets\?limit=2&cursor=[^>]+>; rel="next"$/)
    expect(head.headers['x-ratelimit-limit']).toBeDefined()
    const refused = await api.inject({ method: 'HEAD', url: '/v1/pets?limit=0' })
    expect(refused.statusCode).toBe(400)
    expect(refused.body).toBe('')
  })

  it('sends no Link header on the last page', async () => {
    await seed(2)
    const response = await api.inject({ method: 'GET', url: '/v1/pets?limit=2' })
    expect(response.headers.link).toBeUndefined()
  })

  it('yields no gap or repeat when pets are added between pages', async () => {
    await seed(4)
    const first = await api.inject({ method: 'GET', url: '/v1/pets?limit=3' })
    const next = (first.headers.link as string).match(/<[^>]*(\/v1\/pets\?[^>]+)>/)![1]!
    await seed(2)
    const second = await api.inject({ method: 'GET', url: next })
    const ids = [...first.json(), ...second.json()].map((pet: { id: number }) => pet.id)
    expect(ids).toEqual([1, 2, 3, 4, 5, 6])
  })

  it("yields every pet up to a page's last one, however their creates' commits interleave", async () => {
    await seed(2)
    // A create held open: its id is drawn and its row not yet committed.
    const held = await database.pool.connect()
    try {
      await held.query('BEGIN')
      const slow = (await insertPets(held, [{ name: 'slow', categoryId: 1n }]))[0]!
      const quick = post({ name: 'quick', categoryId: 2 })
      // Either the second create commits, or it waits for the first.
      await Promise.race([quick, lockWaiters(database, 1)])
      const listed = (await api.inject({ method: 'GET', url: '/v1/pets?limit=10' })).json().map((pet: Pet) => pet.id)
      await held.query('COMMIT')
      const created = await quick
      expect(created.statusCode).toBe(201)
      expect(BigInt(created.json().id)).toBeGreaterThan(slow.id)
      // The page ended the walk: every pet below its last one must be on it.
      const all = (await api.inject({ method: 'GET', url: '/v1/pets?limit=10' })).json().map((pet: Pet) => pet.id)
      expect(all).toEqual([1, 2, Number(slow.id), created.json().id])
      expect(listed).toEqual(all.filter((id: number) => id <= Math.max(...listed)))
    } finally {
      held.release()
    }
  })

  it('refuses a tampered or foreign cursor with 400', async () => {
    await seed(3, () => 'sold')
    const first = await api.inject({ method: 'GET', url: '/v1/pets?limit=1&status=sold' })
    const cursor = decodeURIComponent((first.headers.link as string).match(/cursor=([^>]+)>/)![1]!)
    const [payload, mac] = cursor.split('.')
    const forged = `${Buffer.from('0.sold').toString('base64url')}.${mac}`
    for (const url of [
      `/v1/pets?limit=1&status=sold&cursor=${forged}`,
      `/v1/pets?limit=1&status=sold&cursor=${payload}`,
      `/v1/pets?limit=1&status=sold&cursor=garbage`,
      `/v1/pets?limit=1&status=available&cursor=${cursor}`,
      `/v1/pets?limit=1&cursor=${cursor}`
    ]) {
      const response = await api.inject({ method: 'GET', url })
      expect(response.statusCode, url).toBe(400)
      expect(response.json()).toMatchObject({ code: 'invalid_request', status: 400 })
      expect(response.json().message).toContain('cursor')
    }
  })
})

describe('GET /v1/pets/{petId} (deprecated)', () => {
  it('returns the pet with Deprecation, Sunset and successor Link headers', async () => {
    await seed(1, () => 'pending')
    const response = await api.inject({ method: 'GET', url: '/v1/pets/1' })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ id: 1, name: 'pet-1', categoryId: 1, status: 'pending' })
    expect(response.headers.deprecation).toBe(`@${Date.parse('2026-11-22T00:00:00Z') / 1000}`)
    expect(response.headers.sunset).toBe('Thu, 05 Dec 2030 00:00:00 GMT')
    expect(response.headers.link).toBe('<https://api.example.test/v1/pets>; rel="successor-version"')
  })

  it('answers 404 not_found for a missing pet, still with the deprecation headers', async () => {
    const response = await api.inject({ method: 'GET', url: '/v1/pets/42' })
    expect(response.statusCode).toBe(404)
    expect(response.json()).toEqual({ code: 'not_found', message: 'No pet with id 42', status: 404 })
    expect(response.headers.sunset).toBe('Thu, 05 Dec 2030 00:00:00 GMT')
  })

  it.each(['abc', '1.5', '9223372036854775808', '0x10'])('refuses petId %s with 400', async (petId) => {
    const response = await api.inject({ method: 'GET', url: `/v1/pets/${petId}` })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({ code: 'invalid_request', status: 400 })
    expect(response.json().message).toContain('petId')
  })

  const deprecation = {
    deprecation: `@${Date.parse('2026-11-22T00:00:00Z') / 1000}`,
    sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
    link: '<https://api.example.test/v1/pets>; rel="successor-version"'
  }

  it('sends the Deprecation, Sunset and successor Link headers on a 400 too', async () => {
    const response = await api.inject({ method: 'GET', url: '/v1/pets/abc' })
    expect(response.statusCode).toBe(400)
    expect(response.headers).toMatchObject(deprecation)
  })

  it('sends them on the refusals of a key too, before the sunset and after it', async () => {
    const writer = (await issueApiKey(database.db, { plan: 'enterprise', name: 'writer', scopes: ['pets:write'] })).key
    const spent = await issueTestKey(database, 'enterprise', { perMinute: 1, perDay: 100 })
    const get = (authorization?: string) =>
      app.inject({ method: 'GET', url: '/v1/pets/1', headers: authorization ? { authorization } : {} })
    // The key's minute is the database's: held, it cannot end between the request that spends it and
    // the one it refuses (this app's own clock moves to the sunset alone).
    await holdDatabaseClock(database)
    for (const when of [Date.parse('2027-01-01T00:00:00Z'), Date.parse('2030-12-05T00:00:00Z')]) {
      await clock.set(when)
      await get(`Bearer ${spent}`)
      const refusals = [
        await get(),
        await get('Bearer nope'),
        await get(`Bearer ${writer}`),
        await get(`Bearer ${spent}`)
      ]
      // The key is checked first on every route, after the sunset too.
      expect(refusals.map((response) => response.statusCode)).toEqual([401, 401, 403, 429])
      for (const response of refusals) expect(response.headers).toMatchObject(deprecation)
    }
  })

  it('answers HEAD as GET, with the deprecation headers and no body', async () => {
    await seed(1)
    const get = await api.inject({ method: 'GET', url: '/v1/pets/1' })
    for (const [url, status] of [
      ['/v1/pets/1', 200],
      ['/v1/pets/42', 404],
      ['/v1/pets/abc', 400]
    ] as const) {
      const head = await api.inject({ method: 'HEAD', url })
      expect(head.statusCode, url).toBe(status)
      expect(head.body, url).toBe('')
      expect(head.headers, url).toMatchObject({ ...deprecation, 'content-type': 'application/json; charset=utf-8' })
    }
    expect((await api.inject({ method: 'HEAD', url: '/v1/pets/1' })).headers['content-length']).toBe(
      get.headers['content-length']
    )
    await clock.set(Date.parse('2030-12-05T00:00:00Z'))
    const gone = await api.inject({ method: 'HEAD', url: '/v1/pets/1' })
    expect(gone.statusCode).toBe(410)
    expect(gone.body).toBe('')
    expect(gone.headers).toMatchObject(deprecation)
  })

  it('works until the last millisecond before the sunset and answers 410 gone from the sunset instant', async () => {
    await seed(1)
    await clock.set(Date.parse('2030-12-05T00:00:00Z') - 1)
    expect((await api.inject({ method: 'GET', url: '/v1/pets/1' })).statusCode).toBe(200)
    await clock.set(Date.parse('2030-12-05T00:00:00Z'))
    const response = await api.inject({ method: 'GET', url: '/v1/pets/1' })
    expect(response.statusCode).toBe(410)
    expect(response.json()).toMatchObject({ code: 'gone', status: 410 })
    expect(response.headers.sunset).toBe('Thu, 05 Dec 2030 00:00:00 GMT')
    // The successor keeps working after the sunset.
    expect((await api.inject({ method: 'GET', url: '/v1/pets' })).statusCode).toBe(200)
  })
})
