import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueTestKey } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { holdPort, processEnv, startProcess, waitFor, type RunningProcess } from '../helpers/processes.js'

// The bench's `BENCH_BASELINE=spec` server claims to do what the specification asks of every
// response: checked here, since its comparison with the service means nothing otherwise.
describe('the specification floor of the bench (bench/baseline.ts with BASELINE=spec)', () => {
  let database: TestDatabase
  let floor: RunningProcess
  let origin: string
  let key: string

  beforeAll(async () => {
    database = await createTestDatabase()
    await sql`INSERT INTO pets (name, category_id, status) VALUES ('Rex', 1, 'available'), ('Bella', 2, NULL)`.execute(
      database.db
    )
    key = await issueTestKey(database, 'pro')
    const held = await holdPort()
    held.release()
    origin = `http://127.0.0.1:${held.port}`
    floor = startProcess(
      process.execPath,
      ['--import', 'tsx', 'bench/baseline.ts'],
      processEnv({ BASELINE: 'spec', DATABASE_URL: database.url, HOST: '127.0.0.1', PORT: String(held.port) })
    )
    await waitFor(`${origin}/v1/pets`, floor, 50_000, { headers: { authorization: `Bearer ${key}` } })
  })

  afterAll(async () => {
    await floor?.stop('SIGTERM')
    await database?.drop()
  })

  const get = (path: string, token?: string) =>
    fetch(`${origin}${path}`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } })

  it('refuses a request without a known key with 401 and the realm', async () => {
    const missing = await get('/v1/pets')
    expect(missing.status).toBe(401)
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="animal-store"')
    const unknown = await get('/v1/pets', 'ask_00000000_00000000000000000000000000000000')
    expect(unknown.status).toBe(401)
    expect(unknown.headers.get('www-authenticate')).toBe('Bearer realm="animal-store", error="invalid_token"')
  })

  it('counts each request and sends the rate-limit, deprecation and Link headers', async () => {
    const first = await get('/v1/pets/1', key)
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ id: 1, name: 'Rex', categoryId: 1, status: 'available' })
    expect(first.headers.get('x-ratelimit-limit')).toBe('300')
    expect(first.headers.get('ratelimit-policy')).toBe('"minute";q=300;w=60, "day";q=10000;w=86400')
    const remaining = Number(first.headers.get('x-ratelimit-remaining'))
    expect(first.headers.get('ratelimit')).toMatch(new RegExp(`^"minute";r=${remaining};t=\\d+$`))
    expect(first.headers.get('deprecation')).toBe('@1795305600')
    expect(first.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT')
    expect(first.headers.get('link')).toBe(`<${origin}/v1/pets>; rel="successor-version"`)

    const page = await get('/v1/pets?limit=1', key)
    expect(page.status).toBe(200)
    expect(Number(page.headers.get('x-ratelimit-remaining'))).toBe(remaining - 1)
    expect(page.headers.get('link')).toMatch(
      new RegExp(`^<${origin}/v1/pets\\?limit=1&cursor=[\\w-]+\\.[\\w-]+>; rel="next"$`)
    )
    expect(page.headers.get('deprecation')).toBeNull()
  })
})
