import { createConfig, lintFromString, parseYaml, type NormalizedProblem } from '@redocly/openapi-core'
import { Ajv2020 } from 'ajv/dist/2020.js'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { PUBLIC_ROUTES } from '../../src/routes/public-routes.js'
import { createTestApp, issueTestKey, manualClock, withKey } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

const PRODUCTION = 'https://api.animal-store.test/v1'
const STAGING = 'https://staging.animal-store.test/v1'
const NOW = new Date('2027-01-01T12:00:00Z')

let database: TestDatabase
let app: FastifyInstance
let api: ReturnType<typeof withKey>
let tight: ReturnType<typeof withKey>
let document: any
const clock = manualClock(NOW, () => database)

beforeAll(async () => {
  database = await createTestDatabase()
  app = await createTestApp(database, { clock, env: { PUBLIC_BASE_URL: PRODUCTION, STAGING_BASE_URL: STAGING } })
  api = withKey(app, await issueTestKey(database))
  // One request a minute: the second one in a minute is refused.
  tight = withKey(app, await issueTestKey(database, 'enterprise', { perMinute: 1, perDay: 1000 }))
  document = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
})
afterAll(async () => {
  await app.close()
  await database.drop()
})
beforeEach(() => clock.set(NOW))

const operations = () =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item as Record<string, any>).map(([method, operation]) => ({ path, method, operation }))
  )
const operation = (id: string) => operations().find((entry) => entry.operation.operationId === id)!.operation

describe('the OpenAPI document', () => {
  it('is served without a key at /v1/openapi.json, charged to the address budget', async () => {
    const response = await app.inject({
      method: 'GET',
      url: '/v1/openapi.json',
      headers: { authorization: 'Bearer not-a-key' }
    })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(response.headers['x-ratelimit-limit']).toBe('60')
    expect(Number(response.headers['x-ratelimit-remaining'])).toBeLessThan(60)
    const served = response.json()
    expect(served.openapi).toBe('3.1.0')
    expect(served.info.version).toBe('1.0.0')
    expect(served.servers).toEqual([
      { url: PRODUCTION, description: 'Production' },
      { url: STAGING, description: 'Staging' }
    ])
  })

  it('is served as the same document in YAML at /v1/openapi.yaml', async () => {
    const response = await app.inject({ method: 'GET', url: '/v1/openapi.yaml' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('application/yaml; charset=utf-8')
    expect(parseYaml(response.body)).toEqual(document)
  })

  it('passes the Redocly linter with every recommended rule as an error', async () => {
    // Only info-license is off: the service is not published under a licence.
    const config = await createConfig({ extends: ['recommended-strict'], rules: { 'info-license': 'off' } })
    const describe = (problems: NormalizedProblem[]) =>
      problems.map((problem) => `${problem.ruleId} ${problem.location[0]?.pointer}: ${problem.message}`)
    const json = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).body
    const yaml = (await app.inject({ method: 'GET', url: '/v1/openapi.yaml' })).body
    expect(describe(await lintFromString({ source: json, absoluteRef: 'openapi.json', config }))).toEqual([])
    expect(describe(await lintFromString({ source: yaml, absoluteRef: 'openapi.yaml', config }))).toEqual([])
  })

  it('documents the eleven operations and nothing else: no 405 routes, HEAD routes or documentation routes', () => {
    expect(
      operations().map(({ path, method, operation }) => `${method.toUpperCase()} ${path} ${operation.operationId}`)
    ).toEqual([
      'GET /pets listPets',
      'POST /pets addPet',
      'GET /pets/{petId} getPet',
      'GET /rate_limit getRateLimit',
      'GET /keys listKeys',
      'POST /keys createKey',
      'POST /keys/{id}/rotate rotateKey',
      'DELETE /keys/{id} revokeKey',
      'GET /usage getUsage',
      'POST /decisions decide',
      'GET /authorize authorize'
    ])
  })

  it('has the operations a plan may put a cost on, under the server URL /v1', () => {
    const named = operations().map(({ path, method }) => `${method.toUpperCase()} /v1${path}`)
    expect(named).toEqual([...PUBLIC_ROUTES])
  })

  it('groups the operations under the tags it describes', () => {
    expect(document.tags.map((tag: { name: string }) => tag.name)).toEqual([
      'pets',
      'rate limits',
      'keys',
      'usage',
      'decisions'
    ])
    expect(operations().map(({ operation }) => [operation.operationId, operation.tags])).toEqual([
      ['listPets', ['pets']],
      ['addPet', ['pets']],
      ['getPet', ['pets']],
      ['getRateLimit', ['rate limits']],
      ['listKeys', ['keys']],
      ['createKey', ['keys']],
      ['rotateKey', ['keys']],
      ['revokeKey', ['keys']],
      ['getUsage', ['usage']],
      ['decide', ['decisions']],
      ['authorize', ['decisions']]
    ])
  })

  it('gives the type of the items of Pets beside their reference', () => {
    expect(document.components.schemas.Pets.items).toEqual({ $ref: '#/components/schemas/Pet', type: 'object' })
  })

  it('marks GET /pets/{petId}, and only it, deprecated', () => {
    expect(operation('getPet').deprecated).toBe(true)
    expect(operation('listPets').deprecated).toBeUndefined()
    expect(operation('addPet').deprecated).toBeUndefined()
  })

  it('applies a bearer security scheme to every operation: an API key, or for decisions a service token', () => {
    expect(document.components.securitySchemes).toEqual({
      bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key' },
      serviceAuth: { type: 'http', scheme: 'bearer', description: 'An operator token of the role service' }
    })
    expect(document.security).toEqual([{ bearerAuth: [] }])
    // An operation that needs a scope names it (RFC 6750's scope, OpenAPI's scopes of a bearer scheme).
    expect(
      Object.fromEntries(operations().map(({ operation }) => [operation.operationId, operation.security]))
    ).toEqual({
      listPets: [{ bearerAuth: ['pets:read'] }],
      addPet: [{ bearerAuth: ['pets:write'] }],
      getPet: [{ bearerAuth: ['pets:read'] }],
      getRateLimit: undefined,
      listKeys: [{ bearerAuth: ['keys:manage'] }],
      createKey: [{ bearerAuth: ['keys:manage'] }],
      rotateKey: [{ bearerAuth: ['keys:manage'] }],
      revokeKey: [{ bearerAuth: ['keys:manage'] }],
      getUsage: [{ bearerAuth: ['usage:read'] }],
      decide: [{ serviceAuth: [] }],
      authorize: undefined
    })
  })

  it('names the components after their schemas and says format int64 for every int64 value', () => {
    const { schemas } = document.components
    expect(Object.keys(schemas).sort()).toEqual([
      'ApiKey',
      'ApiKeys',
      'Authorization',
      'Decision',
      'DecisionRequest',
      'Error',
      'IssuedApiKey',
      'KeyRotation',
      'NewApiKey',
      'NewPet',
      'Pet',
      'PetStatus',
      'Pets',
      'RateLimitStatus',
      'Scope',
      'UsageRow',
      'UsageRows'
    ])
    expect(schemas.ApiKey.properties.id).toMatchObject({ type: 'integer', format: 'int64' })
    expect(schemas.Pet.properties.id).toMatchObject({ type: 'integer', format: 'int64' })
    expect(schemas.Pet.properties.categoryId).toMatchObject({ type: 'integer', format: 'int64' })
    expect(schemas.NewPet.properties.categoryId).toMatchObject({ type: 'integer', format: 'int64' })
    expect(schemas.Pet.properties.status).toEqual({ $ref: '#/components/schemas/PetStatus' })
    expect(schemas.Error.required).toEqual(['code', 'message', 'status'])
    const petId = operation('getPet').parameters.find((parameter: any) => parameter.name === 'petId')
    expect(petId).toMatchObject({ in: 'path', required: true, schema: { type: 'integer', format: 'int64' } })
  })

  it('documents 401, 429, 500 and 503 with the Error schema on every operation, with Retry-After on 429 and 503', () => {
    for (const { operation } of operations()) {
      // A decision's rate-limit headers are in its body, for the customer of the service that asked.
      const decision = operation.operationId === 'decide' ? '200' : undefined
      for (const status of ['401', '429', '500', '503']) {
        expect(operation.responses[status].content['application/json'].schema).toEqual({
          $ref: '#/components/schemas/Error'
        })
      }
      expect(operation.responses['401'].headers).toHaveProperty('WWW-Authenticate')
      expect(operation.responses['429'].headers['Retry-After'].schema).toEqual({ type: 'integer', minimum: 1 })
      expect(operation.responses['503'].headers['Retry-After'].schema).toEqual({ type: 'integer', minimum: 1 })
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        if (status === decision) continue
        expect(Object.keys(response.headers)).toEqual(
          expect.arrayContaining([
            'X-RateLimit-Limit',
            'X-RateLimit-Remaining',
            'X-RateLimit-Reset',
            'RateLimit-Policy',
            'RateLimit'
          ])
        )
      }
    }
  })

  it('documents the statuses of each operation, and the Link, Deprecation, Sunset and idempotency headers', () => {
    const statuses = (id: string) => Object.keys(operation(id).responses)
    expect(statuses('listPets')).toEqual(['200', '400', '401', '403', '429', '500', '503'])
    expect(statuses('addPet')).toEqual(['201', '400', '401', '403', '409', '413', '415', '422', '429', '500', '503'])
    expect(statuses('getPet')).toEqual(['200', '400', '401', '403', '404', '410', '429', '500', '503'])

    expect(operation('listPets').responses['200'].headers).toHaveProperty('Link')
    for (const status of ['200', '404', '410']) {
      expect(Object.keys(operation('getPet').responses[status].headers)).toEqual(
        expect.arrayContaining(['Deprecation', 'Sunset', 'Link'])
      )
    }
    const addPet = operation('addPet')
    expect(addPet.parameters).toEqual([
      expect.objectContaining({
        in: 'header',
        name: 'Idempotency-Key',
        required: false,
        schema: { type: 'string', minLength: 1, maxLength: 255 }
      })
    ])
    expect(addPet.responses['201'].headers['Idempotent-Replayed'].schema).toEqual({ type: 'string', const: 'true' })
    expect(addPet.requestBody).toEqual({
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPet' } } }
    })
    // A rotation's body may be left out: no grace.
    expect(operation('rotateKey').requestBody).toEqual({
      required: false,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/KeyRotation' } } }
    })
  })
})

// Headers this service adds; each one a response carries must be documented for its status.
const SERVICE_HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'ratelimit-policy',
  'ratelimit',
  'retry-after',
  'www-authenticate',
  'link',
  'deprecation',
  'sunset',
  'idempotent-replayed'
]

describe('what the service sends matches the document', () => {
  let ajv: Ajv2020
  beforeAll(() => {
    ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true })
    ajv.addSchema(document, 'openapi.json')
  })

  function expectDocumented(operationId: string, response: LightMyRequestResponse) {
    const { path, method } = operations().find((entry) => entry.operation.operationId === operationId)!
    const documented = operation(operationId).responses[String(response.statusCode)]
    expect(documented, `${operationId} ${response.statusCode} is documented`).toBeDefined()
    const pointer = `/paths/${path.replaceAll('/', '~1')}/${method}/responses/${response.statusCode}/content/application~1json/schema`
    const validate = ajv.compile({ $ref: `openapi.json#${pointer}` })
    expect(validate(response.json()), JSON.stringify(validate.errors)).toBe(true)
    const names = Object.keys(documented.headers).map((name) => name.toLowerCase())
    for (const header of SERVICE_HEADERS.filter((name) => name in response.headers)) {
      expect(names, `${operationId} ${response.statusCode} documents ${header}`).toContain(header)
    }
  }

  const post = (
    client: { inject(options: InjectOptions): Promise<LightMyRequestResponse> },
    payload: string,
    headers = {}
  ) =>
    client.inject({
      method: 'POST',
      url: '/v1/pets',
      payload,
      headers: { 'content-type': 'application/json', ...headers }
    })

  it('for every answer of GET /pets', async () => {
    await sql`TRUNCATE pets RESTART IDENTITY`.execute(database.db)
    for (const name of ['a', 'b', 'c']) {
      expect((await post(api, JSON.stringify({ name, categoryId: 1 }))).statusCode).toBe(201)
    }
    const page = await api.inject({ method: 'GET', url: '/v1/pets?limit=2' })
    expect(page.headers.link).toMatch(/rel="next"/)
    const responses = [
      page,
      await api.inject({ method: 'GET', url: '/v1/pets?limit=0' }),
      await app.inject({ method: 'GET', url: '/v1/pets' }),
      await tight.inject({ method: 'GET', url: '/v1/pets' }),
      await tight.inject({ method: 'GET', url: '/v1/pets' })
    ]
    expect(responses.map((response) => response.statusCode)).toEqual([200, 400, 401, 200, 429])
    for (const response of responses) expectDocumented('listPets', response)
  })

  it('for every answer of POST /pets', async () => {
    await clock.advance(60_000)
    const responses = [
      await post(api, '{"name":"Rex","categoryId":9223372036854775807}', { 'idempotency-key': 'k-1' }),
      await post(api, '{"name":""}'),
      await post(api, '{"name":"Rex","categoryId":1}', { 'idempotency-key': 'k'.repeat(256) }),
      await post(api, JSON.stringify({ name: 'x'.repeat(17 * 1024), categoryId: 1 })),
      await api.inject({
        method: 'POST',
        url: '/v1/pets',
        payload: 'name=Rex',
        headers: { 'content-type': 'text/plain' }
      }),
      await post(app, '{"name":"Rex","categoryId":1}'),
      await post(tight, '{"name":"Rex","categoryId":1}'),
      await post(tight, '{"name":"Rex","categoryId":1}')
    ]
    expect(responses.map((response) => response.statusCode)).toEqual([201, 400, 400, 413, 415, 401, 201, 429])
    expect(responses[2]!.json().message).toContain('idempotency-key')
    for (const response of responses) expectDocumented('addPet', response)
  })

  it('for every answer of GET /pets/{petId}, before and after the sunset', async () => {
    await clock.advance(120_000)
    const created = await post(api, '{"name":"Rex","categoryId":1}')
    const responses = [
      await api.inject({ method: 'GET', url: `/v1/pets/${created.json().id}` }),
      await api.inject({ method: 'GET', url: '/v1/pets/abc' }),
      await api.inject({ method: 'GET', url: '/v1/pets/9223372036854775807' }),
      await app.inject({ method: 'GET', url: '/v1/pets/1', headers: { authorization: 'Bearer wrong' } }),
      await tight.inject({ method: 'GET', url: '/v1/pets/9223372036854775807' }),
      await tight.inject({ method: 'GET', url: '/v1/pets/9223372036854775807' })
    ]
    await clock.set(new Date('2030-12-05T00:00:00Z'))
    responses.push(await api.inject({ method: 'GET', url: '/v1/pets/1' }))
    expect(responses.map((response) => response.statusCode)).toEqual([200, 400, 404, 401, 404, 429, 410])
    for (const response of responses) expectDocumented('getPet', response)
  })
})

describe('documentation routes', () => {
  it('are charged to the address budget: past it they answer 429 with Retry-After', async () => {
    const small = await createTestApp(database, { clock, env: { UNAUTHENTICATED_PER_MINUTE: '2' } })
    try {
      const statuses = []
      for (const url of ['/v1/openapi.json', '/v1/docs', '/v1/openapi.yaml']) {
        // An address of its own: the address budget is counted in each app's memory, the keys' in the database.
        const response = await small.inject({ method: 'GET', url, remoteAddress: '198.51.100.9' })
        statuses.push(response.statusCode)
        if (response.statusCode === 429) {
          expect(response.json().code).toBe('rate_limited')
          expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1)
        }
      }
      expect(statuses).toEqual([200, 200, 429])

      // A valid key counts once against its own limits, from a spent address too, and spends none of the address's.
      const keyed = withKey(small, await issueTestKey(database))
      const before = await keyed.inject({ method: 'GET', url: '/v1/pets?limit=1', remoteAddress: '198.51.100.9' })
      const served = await keyed.inject({ method: 'GET', url: '/v1/openapi.json', remoteAddress: '198.51.100.9' })
      expect(served.statusCode).toBe(200)
      expect(served.headers['x-ratelimit-limit']).toBe(before.headers['x-ratelimit-limit'])
      expect(Number(served.headers['x-ratelimit-remaining'])).toBe(Number(before.headers['x-ratelimit-remaining']) - 1)
      // A key that matches none is no key here: the address pays, and its spent budget refuses.
      const unknown = await small.inject({
        method: 'GET',
        url: '/v1/openapi.json',
        remoteAddress: '198.51.100.9',
        headers: { authorization: 'Bearer not-a-key' }
      })
      expect(unknown.statusCode).toBe(429)
      expect(unknown.headers['x-ratelimit-limit']).toBe('2')
    } finally {
      await small.close()
    }
  })
})
