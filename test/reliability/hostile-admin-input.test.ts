import fc from 'fast-check'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { beforeAll, describe, expect, it } from 'vitest'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { useTestAdminApp, ADMIN_TOKEN } from '../helpers/app.js'

// Hostile input to every operation of the admin API's OpenAPI document and to /v1/keys, generated
// from each operation's own schemas: a field added to a schema is fuzzed without a new test. Values
// near and past every bound (instants, integers, nesting, text), wrong types and unknown fields.
// Whatever arrives: no 5xx, and every error has the Error body.

const context = useTestAdminApp({ api: {} })
let managerKey: string
beforeAll(async () => {
  const first = await issueApiKey(context.database.db, {
    plan: 'pro',
    scopes: ['pets:read', 'pets:write', 'keys:manage']
  })
  managerKey = first.key
  await issueApiKey(context.database.db, { accountId: first.accountId, scopes: ['pets:read'] })
  await issueApiKey(context.database.db, { plan: 'free' })
})

type Schema = Record<string, unknown>
interface Operation {
  method: string
  path: string
  parameters: { name: string; in: string; schema: Schema; required?: boolean }[]
  body?: Schema
}

/** A value to send, as JSON text: BigInts are written as the integers they are. */
type Value = unknown
const text = (value: Value): string =>
  value instanceof Nested
    ? nestedText(value.depth)
    : typeof value === 'bigint'
      ? value.toString()
      : Array.isArray(value)
        ? `[${value.map(text).join(',')}]`
        : value !== null && typeof value === 'object'
          ? `{${Object.entries(value)
              .filter(([, item]) => item !== undefined)
              .map(([key, item]) => `${JSON.stringify(key)}:${text(item)}`)
              .join(',')}}`
          : (JSON.stringify(value) ?? 'null')

const HOSTILE_INSTANTS = [
  '9999-12-31T23:59:59-23:59',
  '10000-01-01T00:00:00Z',
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00+00:01',
  '2016-12-31T23:59:60Z',
  '2099-02-30T00:00:00Z',
  '2099-01-01T00:00:00+24:00',
  '2099-01-01T00:00:00.9999999999Z',
  '+275760-09-13T00:00:00Z',
  'tomorrow',
  ''
]
const HOSTILE_INTEGERS = [
  0n,
  -1n,
  1n,
  2_000_000_000n,
  2_000_000_001n,
  2_147_483_647n,
  2_147_483_648n,
  9_007_199_254_740_993n,
  9_223_372_036_854_775_807n,
  9_223_372_036_854_775_808n,
  -9_223_372_036_854_775_809n,
  10n ** 30n
]
const HOSTILE_TEXT = [
  '',
  ' ',
  'a'.repeat(256),
  'a'.repeat(5000),
  'Rex\u{E0041}',
  'Rex\u{1D173}',
  'a\u202eb',
  'a\u0000b',
  'a\ud800b',
  "'; DROP TABLE api_keys; --",
  '__proto__',
  'https://[::127.0.0.1]/',
  'http://169.254.169.254/latest',
  '10.0.0.0/8',
  '::ffff:127.0.0.1/200',
  'ask_00000000_00000000000000000000000000000000',
  'aso_00000000_00000000000000000000000000000000'
]
/** Arrays and objects `depth` deep, written out only when sent, so that a counterexample prints short. */
class Nested {
  constructor(readonly depth: number) {}
  toString() {
    return `Nested(${this.depth})`
  }
}
const nested = (depth: number) => new Nested(depth)
const nestedText = (depth: number) => {
  let opening = ''
  let closing = ''
  for (let i = 0; i < depth; i++) {
    opening += i % 2 ? '[' : '{"a":'
    closing = (i % 2 ? ']' : '}') + closing
  }
  return `${opening}{}${closing}`
}
const ANY_VALUES: Value[] = [null, true, 0, -1, 1.5, '', 'x', [], {}, nested(40), nested(2000), { __proto__: 1 }]

const resolve = (schema: Schema | undefined, components: Record<string, Schema>): Schema | undefined => {
  const ref = schema?.$ref as string | undefined
  return ref ? resolve(components[ref.replace('#/components/schemas/', '')], components) : schema
}
const typeOf = (schema: Schema) => [schema.type].flat().find((name) => name !== 'null') as string | undefined
const branchesOf = (schema: Schema) => (schema.anyOf ?? schema.oneOf) as Schema[] | undefined
const isObject = (schema: Schema) => typeOf(schema) === 'object' || schema.properties !== undefined

/** A value the schema may well take: within its bounds, of its enum or examples. */
function plausible(input: Schema | undefined, components: Record<string, Schema>, depth = 0): fc.Arbitrary<Value> {
  const schema = resolve(input, components)
  if (!schema || depth > 6) return fc.constant({})
  const branches = branchesOf(schema)
  if (branches) return fc.oneof(...branches.map((branch) => plausible(branch, components, depth + 1)))
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as Value[]))
  if (Array.isArray(schema.examples) && schema.examples.length) return fc.constantFrom(...(schema.examples as Value[]))
  const type = typeOf(schema)
  if (type === 'string' && schema.format === 'date-time') {
    return fc
      .date({ min: new Date('2100-01-01'), max: new Date('2200-01-01'), noInvalidDate: true })
      .map((date) => date.toISOString())
  }
  if (type === 'string') return fc.constantFrom('free', 'pro', 'alpha', 'b-2', 'https://hooks.example.com/in')
  if (type === 'integer' || type === 'number') {
    const min = typeof schema.minimum === 'number' ? schema.minimum : 0
    const max = typeof schema.maximum === 'number' ? Math.min(schema.maximum, 1_000_000) : 1_000_000
    return fc.integer({ min, max: Math.max(min, max) })
  }
  if (type === 'boolean') return fc.boolean()
  if (type === 'array') {
    return fc.array(plausible(schema.items as Schema, components, depth + 1), {
      minLength: typeof schema.minItems === 'number' ? schema.minItems : 0,
      maxLength: 3
    })
  }
  if (isObject(schema)) {
    const required = new Set((schema.required ?? []) as string[])
    const properties = (schema.properties ?? {}) as Record<string, Schema>
    return fc.record(
      Object.fromEntries(
        Object.entries(properties).map(([name, property]) => {
          const value = plausible(property, components, depth + 1)
          return [name, required.has(name) ? value : fc.option(value, { nil: undefined })]
        })
      )
    )
  }
  return fc.constant({})
}

/** A value aimed at the schema's bounds and past them, or of another type altogether. */
function hostile(input: Schema | undefined, components: Record<string, Schema>): fc.Arbitrary<Value> {
  const schema = resolve(input, components)
  const any = fc.constantFrom(...ANY_VALUES)
  if (!schema) return any
  const branches = branchesOf(schema)
  const kinds = branches ? branches.map((branch) => resolve(branch, components) ?? {}) : [schema]
  const aimed = kinds.flatMap((kind): fc.Arbitrary<Value>[] => {
    const type = typeOf(kind)
    if (type === 'string' && kind.format === 'date-time') return [fc.constantFrom(...HOSTILE_INSTANTS)]
    if (type === 'string') return [fc.constantFrom(...HOSTILE_TEXT)]
    if (type === 'integer' || type === 'number') return [fc.constantFrom(...HOSTILE_INTEGERS)]
    if (type === 'array') return [fc.array(hostile(kind.items as Schema, components), { maxLength: 25 })]
    if (isObject(kind)) {
      return [
        fc.constantFrom({ a: nested(40) }, { a: nested(3000) }, { a: 'x'.repeat(3000) }, { a: 2n ** 64n }),
        fc.dictionary(fc.constantFrom(...HOSTILE_TEXT, 'a'), any, { maxKeys: 5 })
      ]
    }
    return []
  })
  return fc.oneof({ weight: 4, arbitrary: aimed.length ? fc.oneof(...aimed) : any }, { weight: 1, arbitrary: any })
}

/** A plausible value with one field (the value itself, for a scalar) made hostile. */
function withOneHostileField(input: Schema | undefined, components: Record<string, Schema>): fc.Arbitrary<Value> {
  const schema = resolve(input, components)
  const properties = Object.entries((schema?.properties ?? {}) as Record<string, Schema>)
  if (!schema || properties.length === 0) return hostile(schema, components)
  return fc.tuple(plausible(schema, components), fc.nat({ max: properties.length - 1 })).chain(([base, index]) => {
    const [name, property] = properties[index]!
    return hostile(property, components).map((value) => ({ ...(base as object), [name]: value }))
  })
}

const pathValue = fc.constantFrom(
  '1',
  '2',
  '3',
  '0',
  '-1',
  '9223372036854775807',
  '9223372036854775808',
  'abc',
  'free',
  'pro',
  '%00',
  'a'.repeat(90)
)

/** Every operation of a document, with its parameters and JSON body schema. */
function operationsOf(document: { paths: Record<string, Record<string, Schema>> }): Operation[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        parameters: (operation.parameters ?? []) as Operation['parameters'],
        body: ((operation.requestBody as Schema | undefined)?.content as Record<string, Schema> | undefined)?.[
          'application/json'
        ]?.schema as Schema | undefined
      }))
  )
}

function requestFor(operation: Operation, components: Record<string, Schema>) {
  const pathParameters = operation.parameters.filter((parameter) => parameter.in === 'path')
  const queryParameters = operation.parameters.filter((parameter) => parameter.in === 'query')
  const scalar = (schema: Schema) =>
    fc
      .oneof(plausible(schema, components), hostile(schema, components))
      .map((value) => (typeof value === 'string' ? value : text(value)))
  return fc
    .record({
      path: fc.tuple(...pathParameters.map(() => pathValue), fc.constant('')),
      query: fc.tuple(
        ...queryParameters.map((parameter) => fc.option(scalar(parameter.schema), { nil: undefined })),
        fc.constant(undefined)
      ),
      body: operation.body
        ? fc.option(withOneHostileField(operation.body, components), { nil: undefined, freq: 8 })
        : fc.constant(undefined)
    })
    .map(({ path, query, body }) => {
      let url = operation.path
      pathParameters.forEach((parameter, index) => {
        url = url.replace(`{${parameter.name}}`, encodeURIComponent(path[index]!))
      })
      const search = new URLSearchParams()
      queryParameters.forEach((parameter, index) => {
        const value = query[index]
        if (value !== undefined) search.set(parameter.name, String(value))
      })
      const suffix = search.size ? `?${search}` : ''
      return { url: `${url}${suffix}`, body: body === undefined ? undefined : text(body) }
    })
}

function expectSafe(response: LightMyRequestResponse, label: string) {
  expect(response.statusCode, `${label} → ${response.body.slice(0, 300)}`).toBeLessThan(500)
  if (response.statusCode >= 400 && response.statusCode !== 405) {
    expect(response.json(), label).toEqual({
      code: expect.any(String),
      message: expect.any(String),
      status: response.statusCode
    })
  }
}

async function fuzz(
  app: FastifyInstance,
  documentUrl: string,
  authorization: string,
  only?: (path: string) => boolean
) {
  const document = (await app.inject({ method: 'GET', url: documentUrl, headers: { authorization } })).json()
  const components = (document.components?.schemas ?? {}) as Record<string, Schema>
  const operations = operationsOf(document).filter((operation) => !only || only(operation.path))
  expect(operations.length).toBeGreaterThan(0)
  for (const operation of operations) {
    await fc.assert(
      fc.asyncProperty(requestFor(operation, components), async ({ url, body }) => {
        const response = await app.inject({
          method: operation.method,
          url,
          headers: {
            authorization,
            ...(body === undefined ? {} : { 'content-type': 'application/json' })
          },
          ...(body === undefined ? {} : { payload: body })
        })
        expectSafe(response, `${operation.method} ${url} ${body?.slice(0, 300) ?? ''}`)
      }),
      { numRuns: 60 }
    )
  }
}

describe('hostile input to the admin API and /v1/keys, from their schemas', { timeout: 300_000 }, () => {
  it('answers every admin operation without a 5xx, errors with the Error body', async () => {
    await fuzz(context.admin, '/admin/v1/openapi.json', `Bearer ${ADMIN_TOKEN}`)
  })

  it('answers every /v1/keys operation without a 5xx, errors with the Error body', async () => {
    await fuzz(
      context.api,
      '/v1/openapi.json',
      `Bearer ${managerKey}`,
      (path) => path.startsWith('/v1/keys') || path.startsWith('/keys')
    )
  })
})
