import { createHmac } from 'node:crypto'
import { request as httpRequest, METHODS } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, issueTestKey, withKey } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { holdDatabaseClock } from '../helpers/traffic.js'

let database: TestDatabase
let app: FastifyInstance
let api: ReturnType<typeof withKey>
let key: string
beforeAll(async () => {
  database = await createTestDatabase()
  app = await createTestApp(database)
  key = await issueTestKey(database)
  api = withKey(app, key)
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

  it.each([
    ['GET', '/v1/pets/'],
    ['HEAD', '/v1/pets/'],
    ['PUT', '/v1/pets/'],
    ['DELETE', '/v1/keys/'],
    ['GET', '/v1/pets/?limit=5']
  ])('answers %s %s, an id left empty, with 404 not_found as no such route', async (method, url) => {
    const response = await api.inject({ method, url })
    expect(response.statusCode).toBe(404)
    if (method !== 'HEAD') {
      expect(response.json()).toEqual({
        code: 'not_found',
        message: `No route ${method} ${url.split('?')[0]}`,
        status: 404
      })
    }
    // The key is still checked first, as on every other path under /v1.
    expect((await app.inject({ method, url })).statusCode).toBe(401)
  })

  it('answers a wrong method on a known path with 405 and Allow', async () => {
    const onList = await api.inject({ method: 'DELETE', url: '/v1/pets' })
    expectErrorBody(onList, 405, 'method_not_allowed')
    expect(onList.headers.allow).toBe('GET, POST, HEAD')
    const onOne = await api.inject({ method: 'PUT', url: '/v1/pets/1', payload: {} })
    expectErrorBody(onOne, 405, 'method_not_allowed')
    expect(onOne.headers.allow).toBe('GET, HEAD')
  })

  // Every method Node's HTTP parser reads but CONNECT, which Node hands to the server's 'connect' event.
  const otherMethods = METHODS.filter((method) => !['GET', 'HEAD', 'POST', 'CONNECT'].includes(method))
  it.each(otherMethods)('answers %s on /v1/pets and /v1/pets/1 with 405 and Allow', async (method) => {
    const onList = await api.inject({ method, url: '/v1/pets' })
    expectErrorBody(onList, 405, 'method_not_allowed')
    expect(onList.headers.allow).toBe('GET, POST, HEAD')
    const onOne = await api.inject({ method, url: '/v1/pets/1' })
    expectErrorBody(onOne, 405, 'method_not_allowed')
    expect(onOne.headers.allow).toBe('GET, HEAD')
  })

  it.each(['TRACE', 'PROPFIND', 'QUERY'])('answers %s on /v1/pets over a real connection with 405', async (method) => {
    const response = await rawRequest('/v1/pets', method, { authorization: `Bearer ${key}` })
    expectErrorBody(response, 405, 'method_not_allowed')
    expect(response.headers.allow).toBe('GET, POST, HEAD')
  })

  it.each([
    ['PUT', '/v1/pets/1', 'text/plain', 'x', 'GET, HEAD'],
    ['PUT', '/v1/pets/1', 'application/json', '{"x":', 'GET, HEAD'],
    ['PATCH', '/v1/pets/1', 'application/json', JSON.stringify({ x: 'y'.repeat(17 * 1024) }), 'GET, HEAD'],
    ['DELETE', '/v1/pets', 'text/plain', 'x', 'GET, POST, HEAD']
  ] as const)(
    'answers %s %s with a body of %s with 405, before the body is read',
    async (method, url, type, payload, allow) => {
      const response = await api.inject({ method, url, payload, headers: { 'content-type': type } })
      expectErrorBody(response, 405, 'method_not_allowed')
      expect(response.headers.allow).toBe(allow)
      // The key is still checked first.
      const anonymous = await app.inject({ method, url, payload, headers: { 'content-type': type } })
      expectErrorBody(anonymous, 401, 'unauthorized')
    }
  )

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

  it('answers a malformed URL with 400 invalid_request before reading the key: not counted, no rate-limit headers', async () => {
    // The window is the database's minute: held, it cannot end between the requests the test counts.
    await holdDatabaseClock(database)
    const before = await api.inject({ method: 'GET', url: '/v1/pets?limit=1' })
    const response = await api.inject({ method: 'GET', url: '/v1/pets/%zz' })
    expectErrorBody(response, 400, 'invalid_request')
    expect(response.headers['x-ratelimit-limit']).toBeUndefined()
    const after = await api.inject({ method: 'GET', url: '/v1/pets?limit=1' })
    expect(Number(after.headers['x-ratelimit-remaining'])).toBe(Number(before.headers['x-ratelimit-remaining']) - 1)
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
    const response = await rawRequest(path)
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

describe('the Host header', () => {
  // Over a real connection: Node's server, not inject, decides what a missing or repeated header becomes.
  it.each([
    ['no Host header', []],
    ['two Host headers', ['a.example', 'b.example']]
  ])('makes an HTTP/1.1 request with %s a 400 invalid_request (RFC 9112, section 3.2)', async (_label, hosts) => {
    if (!app.server.listening) await app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = app.server.address() as AddressInfo
    const head = ['GET /v1/pets HTTP/1.1', ...hosts.map((host) => `Host: ${host}`), 'Connection: close', '', ''].join(
      '\r\n'
    )
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(head))
      let text = ''
      socket.setEncoding('utf8')
      socket.on('data', (chunk: string) => (text += chunk))
      socket.on('error', reject)
      socket.on('close', () => resolve(text))
    })
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      code: 'invalid_request',
      message: 'An HTTP/1.1 request needs one Host header',
      status: 400
    })
  })
})

/** A request over a real connection with the path exactly as given, dot segments and all. */
async function rawRequest(path: string, method = 'GET', headers: Record<string, string> = {}) {
  if (!app.server.listening) await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return new Promise<{ statusCode: number; headers: Record<string, unknown>; body: string; json(): any }>(
    (resolve, reject) => {
      const request = httpRequest({ host: '127.0.0.1', port, path, method, headers }, (response) => {
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
