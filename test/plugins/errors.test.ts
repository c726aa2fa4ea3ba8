import { createHmac } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, issueTestKey, withKey } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

let database: TestDatabase
let app: FastifyInstance
let api: ReturnType<typeof withKey>
beforeAll(async () => {
  database = await createTestDatabase()
  app = await createTestApp(database)
  api = withKey(app, await issueTestKey(database))
})
afterAll(async () => {
  await app.close()
  await database.drop()
})

function expectErrorBody(
  response: { statusCode: number; headers: Record<string, unknown>; json(): any },
  status: number,
  code: string
) {
  expect(response.statusCode).toBe(status)
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
  const body = response.json()
  expect(Object.keys(body).sort()).toEqual(['code', 'message', 'status'])
  expect(body).toMatchObject({ code, status })
  expect(typeof body.message).toBe('string')
  expect(body.message.length).toBeGreaterThan(0)
  return body as { code: string; message: string; status: number }
}

const countPets = async () =>
  Number((await sql<{ n: string }>`SELECT count(*) AS n FROM pets`.execute(database.db)).rows[0]!.n)

describe('the one error model', () => {
  it('answers unknown routes with 404 not_found, inside and outside /v1', async () => {
    expectErrorBody(await api.inject({ method: 'GET', url: '/v1/owners' }), 404, 'not_found')
    expectErrorBody(await api.inject({ method: 'GET', url: '/pets' }), 404, 'not_found')
  })

  it('answers a wrong method on a known path with 405 and Allow', async () => {
    const onList = await api.inject({ method: 'DELETE', url: '/v1/pets' })
    expectErrorBody(onList, 405, 'method_not_allowed')
    expect(onList.headers.allow).toBe('GET, POST, HEAD')
    const onOne = await api.inject({ method: 'PUT', url: '/v1/pets/1', payload: {} })
    expectErrorBody(onOne, 405, 'method_not_allowed')
    expect(onOne.headers.allow).toBe('GET, HEAD')
  })

  it.each([
    ['malformed JSON', '{"name": "Rex",', 'invalid_json'],
    ['an empty body', '', 'invalid_json'],
    // Refused by the parser when the depth exhausts its stack, else by the schema (an array is no
    // pet): which depends on the stack the process has left, never a 500.
    ['JSON nested 10,000 deep', '['.repeat(5000) + ']'.repeat(5000), ['invalid_json', 'invalid_request']]
  ])('answers %s with 400 and creates nothing', async (_label, payload, code) => {
    const response = await api.inject({
      method: 'POST',
      url: '/v1/pets',
      payload,
      headers: { 'content-type': 'application/json' }
    })
    const codes = typeof code === 'string' ? [code] : code
    expect(codes).toContain(response.json().code)
    expectErrorBody(response, 400, response.json().code)
    expect(await countPets()).toBe(0)
  })

  it('answers a body over 16 KiB with 413 payload_too_large', async () => {
    const payload = JSON.stringify({ name: 'x'.repeat(17 * 1024), categoryId: 1 })
    const response = await api.inject({
      method: 'POST',
      url: '/v1/pets',
      payload,
      headers: { 'content-type': 'application/json' }
    })
    expectErrorBody(response, 413, 'payload_too_large')
    expect(await countPets()).toBe(0)
  })

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/xml'])(
    'answers a %s body with 415 unsupported_media_type',
    async (type) => {
      const response = await api.inject({
        method: 'POST',
        url: '/v1/pets',
        payload: 'name=Rex',
        headers: { 'content-type': type }
      })
      expectErrorBody(response, 415, 'unsupported_media_type')
      expect(await countPets()).toBe(0)
    }
  )

  it('answers a malformed URL with 400 invalid_request', async () => {
    expectErrorBody(await api.inject({ method: 'GET', url: '/v1/pets/%zz' }), 400, 'invalid_request')
  })
})

describe('unexpected failures', () => {
  it('answer 500 internal_error without SQL, stack or driver text', async () => {
    const broken = await createTestDatabase()
    const brokenApp = await createTestApp(broken)
    const brokenApi = withKey(brokenApp, await issueTestKey(broken))
    try {
      await sql`ALTER TABLE pets RENAME COLUMN category_id TO category`.execute(broken.db)
      const response = await brokenApi.inject({ method: 'GET', url: '/v1/pets' })
      const body = expectErrorBody(response, 500, 'internal_error')
      expect(body.message).toBe('An unexpected error occurred')
      expect(response.body).not.toMatch(/category|column|select|postgres|at \w+ \(/i)
    } finally {
      await brokenApp.close()
      await broken.drop()
    }
  })
})

describe('errors a plugin raises on the public paths', () => {
  const asset = '/v1/docs/static/swagger-ui.css'

  it.each([
    ['a range past the end', { range: 'bytes=99999999-' }, 416, 'range_not_satisfiable'],
    ['a backwards range', { range: 'bytes=5-1' }, 416, 'range_not_satisfiable'],
    ['If-Match that does not match', { 'if-match': '"x"' }, 412, 'precondition_failed'],
    [
      'If-Unmodified-Since before the file',
      { 'if-unmodified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' },
      412,
      'precondition_failed'
    ]
  ])('answers a docs asset asked for with %s with the Error body', async (_label, headers, status, code) => {
    const response = await app.inject({ method: 'GET', url: asset, headers })
    expectErrorBody(response, status, code)
    if (status === 416) expect(response.headers['content-range']).toMatch(/^bytes \*\/\d+$/)
  })

  // Sent as written (curl --path-as-is): inject would resolve the dot segments before the server saw them.
  it.each([
    '/v1/docs/static//x.css',
    '/v1/docs/static/%2e%2e/%2e%2e/package.json',
    '/v1/docs/static/..%2f..%2fpackage.json',
    '/v1/docs/static/%2e%2e%2f%2e%2e%2f%2e%2e%2fpackage.json',
    '/v1/docs/static/x/../../../../package.json'
  ])('answers GET %s with 404 not_found, never a file outside the assets', async (path) => {
    const response = await rawGet(path)
    expect(response.body).not.toContain('animal-store-service')
    expectErrorBody(response, 404, 'not_found')
  })

  it.each(['x', '', ' 1', '0x10', '1e3', '1.5', '9223372036854775808', '-9223372036854775809', '1_000'])(
    'answers a cursor signed over the non-id %j with 400, as a tampered one',
    async (afterId) => {
      // Forged with the deployment's own secret: what a leaked secret or a future encoding bug would produce.
      const secret = (await database.db.selectFrom('service_secrets').select('value').executeTakeFirstOrThrow()).value
      const payload = `${afterId}.`
      const mac = createHmac('sha256', secret).update(payload).digest().subarray(0, 16)
      const cursor = `${Buffer.from(payload).toString('base64url')}.${mac.toString('base64url')}`
      const response = await api.inject({ method: 'GET', url: `/v1/pets?cursor=${cursor}` })
      expectErrorBody(response, 400, 'invalid_request')
    }
  )
})

/** A GET over a real connection with the path exactly as given, dot segments and all. */
async function rawGet(path: string) {
  if (!app.server.listening) await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return new Promise<{ statusCode: number; headers: Record<string, unknown>; body: string; json(): any }>(
    (resolve, reject) => {
      const request = httpRequest({ host: '127.0.0.1', port, path, method: 'GET' }, (response) => {
        let body = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => (body += chunk))
        response.on('end', () =>
          resolve({ statusCode: response.statusCode!, headers: response.headers, body, json: () => JSON.parse(body) })
        )
      })
      request.on('error', reject)
      request.end()
    }
  )
}
