import { connect } from 'node:net'
import fc from 'fast-check'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { createTestApp } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { startServer, type RunningServer } from '../../harness/processes.js'

// Hostile requests at every endpoint. Whatever arrives: no 5xx, every error has the Error body,
// a refused request changes nothing in the domain data (pets, idempotency keys, API keys), and the
// process stays up. Rate-limit counters are not domain data: every request counts by design.

let database: TestDatabase
let app: FastifyInstance
let key: string
let revokedKey: string
let validCursor: string
let assetEtag: string
let assetLastModified: string
const env = { UNAUTHENTICATED_PER_MINUTE: '100000000' }

beforeAll(async () => {
  database = await createTestDatabase()
  app = await createTestApp(database, { env })
  const limits = { perMinute: 100_000_000, perDay: 1_000_000_000 }
  key = (await issueApiKey(database.db, { plan: 'enterprise', limits })).key
  const revoked = await issueApiKey(database.db, { plan: 'enterprise', limits })
  await database.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [revoked.id])
  revokedKey = revoked.key
  for (let i = 0; i < 3; i++) {
    const response = await app.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: `{"name":"seed-${i}","categoryId":${i},"status":"sold"}`
    })
    expect(response.statusCode).toBe(201)
  }
  const page = await app.inject({
    method: 'GET',
    url: '/v1/pets?limit=1&status=sold',
    headers: { authorization: `Bearer ${key}` }
  })
  validCursor = /cursor=([^>]+)>/.exec(page.headers.link as string)![1]!
  const asset = await app.inject({ method: 'GET', url: '/v1/docs/static/swagger-ui.css' })
  expect(asset.statusCode).toBe(200)
  assetEtag = asset.headers.etag as string
  assetLastModified = asset.headers['last-modified'] as string
})
afterAll(async () => {
  await app?.close()
  await database?.drop()
})

interface Snapshot {
  pets: number
  maxId: string
  keys: number
  done: number
  lastKey: string
  apiKeys: string
}

// The domain data in one round trip: enough to see any insert, delete or key change.
async function snapshot(): Promise<Snapshot> {
  const { rows } = await database.pool.query<Snapshot>(`
    SELECT (SELECT count(*) FROM pets)::int AS pets,
      (SELECT coalesce(max(id), 0) FROM pets)::text AS "maxId",
      (SELECT count(*) FROM idempotency_keys)::int AS keys,
      (SELECT count(*) FROM idempotency_keys WHERE pet_id IS NOT NULL)::int AS done,
      (SELECT coalesce(max(created_at), 'epoch')::text FROM idempotency_keys) AS "lastKey",
      (SELECT string_agg(id || ':' || coalesce(revoked_at::text, '-'), ',' ORDER BY id) FROM api_keys) AS "apiKeys"`)
  return rows[0]!
}

// ---- Generators ----

const SQL_FRAGMENTS = [
  "'; DROP TABLE pets; --",
  "' OR '1'='1",
  '1; SELECT pg_sleep(10)',
  '$1',
  '\\',
  "E'\\x00'",
  'pets"; DELETE FROM pets; --',
  '%_%',
  ') UNION SELECT secret_hash FROM api_keys --',
  '1)) OR 1=1--'
]
const PROTO_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__'
]

// Any UTF-16 code unit, so lone surrogates and NUL come up, plus the odd ones more often.
const codeUnit = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '\u0000',
      '\ud800',
      '\udfff',
      '\ud83d',
      '\ufeff',
      '\u202e',
      '\u2028',
      '😀',
      'é',
      '\\',
      '"'
    )
  }
)
const hostileText = fc.string({ unit: codeUnit, maxLength: 40 })
const anyText = fc.oneof(
  { weight: 4, arbitrary: hostileText },
  { weight: 1, arbitrary: fc.constantFrom(...SQL_FRAGMENTS) },
  { weight: 1, arbitrary: fc.integer({ min: 200, max: 20_000 }).map((n) => 'x'.repeat(n)) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', 'Rex', 'x'.repeat(255), 'x'.repeat(256), '😀'.repeat(255)) }
)

const json = (value: unknown) => JSON.stringify(value) ?? 'null'
// A JSON literal as sent, for a field: strings, numbers of every shape, and other types.
const anyLiteral = fc.oneof(
  { weight: 3, arbitrary: anyText.map(json) },
  { weight: 3, arbitrary: fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '9223372036854775807',
      '-9223372036854775808',
      '9223372036854775808',
      '-9223372036854775809',
      '0',
      '-0',
      '1.0',
      '1e3',
      '1E+2',
      '0.5',
      '1e999999',
      '-1e-999999',
      `1${'0'.repeat(400)}`,
      '00',
      '01',
      '"5"',
      'null',
      'true',
      'false',
      '[]',
      '{}',
      '[1]',
      '{"$gt":0}'
    )
  },
  { weight: 1, arbitrary: fc.double().map((n) => (Number.isFinite(n) ? String(n) : '1')) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(json) }
)
const statusLiteral = fc.oneof(
  fc.constantFrom('"available"', '"pending"', '"sold"', '"SOLD"', '"available "', 'null', '1', '[]'),
  anyText.map(json)
)

interface Field {
  name: string
  literal: string
}
/** A JSON object as text, fields in order, duplicates and all (JSON.stringify could not write __proto__ or twins). */
const objectText = (fields: Field[]) => `{${fields.map((field) => `${json(field.name)}:${field.literal}`).join(',')}}`

const petLikeBody = fc
  .record({
    name: fc.option(fc.oneof({ weight: 3, arbitrary: anyText.map(json) }, { weight: 1, arbitrary: anyLiteral }), {
      nil: undefined
    }),
    categoryId: fc.option(anyLiteral, { nil: undefined }),
    status: fc.option(statusLiteral, { nil: undefined }),
    extras: fc.array(
      fc.record({
        name: fc.oneof(fc.constantFrom(...PROTO_KEYS, 'id', 'name', 'categoryId', 'category_id', ''), hostileText),
        literal: anyLiteral
      }),
      { maxLength: 3 }
    )
  })
  .map(({ name, categoryId, status, extras }) => {
    const fields: Field[] = []
    if (name !== undefined) fields.push({ name: 'name', literal: name })
    if (categoryId !== undefined) fields.push({ name: 'categoryId', literal: categoryId })
    if (status !== undefined) fields.push({ name: 'status', literal: status })
    return objectText([...fields, ...extras])
  })

// Bodies that should create a pet, so the suite also sees 201s, replays and 422s.
const validBody = fc
  .record({
    name: fc
      .string({
        unit: fc.oneof(
          fc.constantFrom('a', 'B', ' ', 'é', '😀', "'", '"', '\\', ';', '-'),
          fc.constantFrom(...SQL_FRAGMENTS)
        ),
        minLength: 1,
        maxLength: 10
      })
      .filter((name) => [...name].length <= 255),
    categoryId: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    status: fc.option(fc.constantFrom('available', 'pending', 'sold'), { nil: undefined })
  })
  .map(({ name, categoryId, status }) =>
    objectText([
      { name: 'name', literal: json(name) },
      { name: 'categoryId', literal: String(categoryId) },
      ...(status ? [{ name: 'status', literal: json(status) }] : [])
    ])
  )

const deeplyNested = fc
  .tuple(fc.integer({ min: 1, max: 50_000 }), fc.constantFrom('[', '{"a":', '{"name":'))
  .map(([depth, open]) => open.repeat(depth) + '1' + (open === '[' ? ']' : '}').repeat(depth))

const malformedJson = fc.oneof(
  fc.string({ unit: codeUnit, maxLength: 60 }),
  petLikeBody.chain((text) => fc.nat({ max: Math.max(0, text.length - 1) }).map((cut) => text.slice(0, cut))),
  petLikeBody.map((text) => `${text}}`),
  fc.constantFrom(
    '',
    ' ',
    '\n',
    'null',
    'NaN',
    'Infinity',
    'undefined',
    "{'name':'a','categoryId':1}",
    '{"name":"a","categoryId":1,}',
    '\ufeff{"name":"a","categoryId":1}',
    '/* c */ {"name":"a","categoryId":1}',
    '{"name":"a","categoryId":1}{"name":"b"}',
    '{"name":"a","name":"b","categoryId":1}',
    '{"name":"\\ud800","categoryId":1}',
    '{"name":"\\u0000","categoryId":1}',
    '{"name":"a\\x41","categoryId":1}',
    '{"name":"a","categoryId":0x10}',
    '[]',
    '[{"name":"a","categoryId":1}]',
    '"text"',
    '1'
  )
)

const anyBody = fc.oneof(
  { weight: 4, arbitrary: petLikeBody },
  { weight: 2, arbitrary: validBody },
  { weight: 2, arbitrary: malformedJson },
  { weight: 1, arbitrary: deeplyNested },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map(json) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)) }
)

// Header values as HTTP can carry them: printable Latin-1.
const headerText = fc.string({
  unit: fc
    .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xff }))
    .map((c) => String.fromCharCode(c)),
  maxLength: 300
})

const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'application/JSON',
      'APPLICATION/JSON; CHARSET=UTF-8',
      'application/json; charset=latin1',
      'application/json;;;',
      'application/json; boundary=x',
      'application/vnd.api+json',
      'application/problem+json',
      'text/plain',
      'text/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
      '*/*',
      'application/*',
      'json',
      ';',
      ' ',
      'application/octet-stream'
    )
  },
  { weight: 1, arbitrary: headerText }
)

// Secrets are placeholders in generated values, so a counterexample prints as text; resolved when sent.
function resolveSecrets(text: string): string {
  const changed = `${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`
  return text
    .replaceAll('{KEY}', key)
    .replaceAll('{KEY_CUT}', key.slice(0, -1))
    .replaceAll('{KEY_CHANGED}', changed)
    .replaceAll('{KEY_UPPER}', key.toUpperCase())
    .replaceAll('{REVOKED}', revokedKey)
    .replaceAll('{CURSOR}', validCursor)
    .replaceAll('{ETAG}', assetEtag)
    .replaceAll('{LAST_MODIFIED}', assetLastModified)
    .replace(/\{CURSOR_FLIP_(\d+)\}/g, (_match, at: string) => {
      const chars = [...validCursor]
      const i = Number(at) % chars.length
      chars[i] = chars[i] === 'A' ? 'B' : 'A'
      return chars.join('')
    })
}

const authorization: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 6, arbitrary: fc.constant('Bearer {KEY}') },
  {
    weight: 4,
    arbitrary: fc.oneof(
      fc.constantFrom(
        undefined,
        '',
        'Bearer',
        'Bearer ',
        'bearer {KEY}',
        'BEARER {KEY}',
        'Bearer  {KEY}',
        'Bearer {KEY} ',
        'Bearer {KEY} extra',
        'Bearer {KEY},Bearer {KEY}',
        'Basic dXNlcjpwYXNz',
        'Token {KEY}',
        '{KEY}',
        'Bearer {REVOKED}',
        'Bearer {KEY_CUT}',
        'Bearer {KEY_CHANGED}',
        'Bearer {KEY_UPPER}',
        `Bearer ${'a'.repeat(8000)}`,
        "Bearer ' OR '1'='1",
        'Bearer ask_00000000_00000000000000000000000000000000'
      ),
      headerText.map((text) => `Bearer ${text}`),
      headerText
    )
  }
)

const idempotencyKey = fc.option(
  fc.oneof(
    fc.constantFrom('k1', 'k2', 'k3', '', ' ', 'k'.repeat(255), 'k'.repeat(256), "'; DROP TABLE idempotency_keys; --"),
    headerText
  ),
  { nil: undefined, freq: 2 }
)

// Text as it appears in a URL: percent-encoded bytes, some of them not UTF-8, some encodings broken.
const urlText = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .string({ unit: codeUnit, maxLength: 30 })
      .map((text) => [...Buffer.from(text)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''))
  },
  {
    weight: 2,
    arbitrary: fc
      .string({ unit: fc.constantFrom('1', '0', '-', '9', 'a', '.', 'e', '+', ' '), maxLength: 25 })
      .map(encodeURIComponent)
  },
  {
    weight: 1,
    arbitrary: fc
      .uint8Array({ maxLength: 12 })
      .map((bytes) => [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''))
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '%',
      '%z',
      '%zz',
      '%E0%A4%A',
      '%C0%AF',
      '%00',
      '%2F',
      '..',
      '%2e%2e',
      '%F0%9F%98',
      '\u0000'.replace('\u0000', '%00')
    )
  },
  { weight: 1, arbitrary: fc.constantFrom(...SQL_FRAGMENTS).map(encodeURIComponent) }
)

const limitValue = fc.oneof(
  fc.integer({ min: -5, max: 150 }).map(String),
  fc.constantFrom('', '1.5', '1e2', '0x10', '٣', '１', '+5', ' 5', '5 ', '9'.repeat(40), '-0', 'null', 'true', '[1]'),
  urlText
)
const statusValue = fc.oneof(
  fc.constantFrom('available', 'pending', 'sold', 'SOLD', '', 'null', 'available,sold'),
  urlText
)
const cursorValue = fc.oneof(
  fc.constant('{CURSOR}'),
  fc.nat({ max: 40 }).map((at) => `{CURSOR_FLIP_${at}}`),
  urlText,
  fc.constantFrom(
    '.',
    '..',
    'a.b.c',
    '{CURSOR}.x',
    'x'.repeat(600),
    `${Buffer.from('1.sold').toString('base64url')}.AAAAAAAAAAAAAAAAAAAAAA`
  )
)

const listQuery = fc
  .record({
    limit: fc.option(fc.array(limitValue, { minLength: 1, maxLength: 2 }), { nil: undefined }),
    status: fc.option(fc.array(statusValue, { minLength: 1, maxLength: 2 }), { nil: undefined }),
    cursor: fc.option(cursorValue, { nil: undefined }),
    junk: fc.option(fc.tuple(urlText, urlText), { nil: undefined })
  })
  .map(({ limit, status, cursor, junk }) => {
    const parts: string[] = []
    for (const value of limit ?? []) parts.push(`limit=${value}`)
    for (const value of status ?? []) parts.push(`status=${value}`)
    if (cursor) parts.push(`cursor=${cursor}`)
    if (junk) parts.push(`${junk[0]}=${junk[1]}`)
    return parts.length ? `?${parts.join('&')}` : ''
  })

const petId = fc.oneof(
  fc.bigInt({ min: -(2n ** 66n), max: 2n ** 66n }).map(String),
  fc.constantFrom(
    '1',
    '2',
    '0',
    '-1',
    '9223372036854775807',
    '9223372036854775808',
    '1.5',
    '1e3',
    '0x10',
    ' 1',
    '1 ',
    '+1',
    '01',
    '9'.repeat(101),
    ''
  ),
  urlText
)

const method = fc.constantFrom('GET', 'GET', 'GET', 'POST', 'POST', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS')
const path = fc.oneof(
  fc.constant('/v1/pets'),
  fc.constant('/v1/pets/'),
  petId.map((id) => `/v1/pets/${id}`),
  fc.constantFrom(
    '/v1',
    '/v1/',
    '/',
    '/pets',
    '/v2/pets',
    '/V1/PETS',
    '//v1/pets',
    '/v1//pets',
    '/v1/pets/1/2',
    '/v1/pets/../pets',
    '/health/live',
    '/health/ready',
    '/health',
    '/v1/openapi.json',
    '/metrics',
    '/v1/pets?',
    '/v1/pets#x',
    '/v1/pets;a=b'
  ),
  fc.array(urlText, { minLength: 1, maxLength: 4 }).map((segments) => `/v1/${segments.join('/')}`)
)

// ---- Public paths: the docs page and its assets, the OpenAPI document, health ----

const ASSETS = [
  'swagger-ui.css',
  'index.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'swagger-initializer.js',
  'favicon-32x32.png',
  'logo.svg',
  'oauth2-redirect.html',
  'oauth2-redirect.js',
  'index.html',
  'csp.json'
]
const assetName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...ASSETS) },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '',
      '/',
      '//x.css',
      '/swagger-ui.css',
      '.',
      '..',
      '%2e',
      '%2e%2e',
      '%2e%2e/%2e%2e/package.json',
      '..%2f..%2fpackage.json',
      '%2e%2e%2f%2e%2e%2f%2e%2e%2fpackage.json',
      'x/../../../../package.json',
      'x/../swagger-ui.css',
      './swagger-ui.css',
      '%2e/swagger-ui.css',
      'swagger-ui.css/',
      'swagger-ui.css/x',
      'swagger-ui.css%00',
      '%00',
      '%c0%ae%c0%ae/package.json',
      '%252e%252e/package.json',
      'SWAGGER-UI.CSS',
      '.env',
      '.git/config',
      'swagger-ui.css;x',
      '~',
      '\\..\\package.json',
      '%5c..%5cpackage.json',
      'x'.repeat(300)
    )
  },
  { weight: 2, arbitrary: fc.array(urlText, { minLength: 1, maxLength: 3 }).map((segments) => segments.join('/')) }
)
const publicPath = fc
  .tuple(
    fc.oneof(
      { weight: 5, arbitrary: assetName.map((name) => `/v1/docs/static/${name}`) },
      {
        weight: 3,
        arbitrary: fc.constantFrom(
          '/v1/docs',
          '/v1/docs/',
          '/v1/docs//',
          '/v1/docs/json',
          '/v1/docs/yaml',
          '/v1/docs/static',
          '/v1/docs/static/',
          '/v1/docs/index.html',
          '/v1/DOCS',
          '/v1/openapi.json',
          '/v1/openapi.yaml',
          '/v1/openapi.json/',
          '/v1/openapi.JSON',
          '/v1/openapi',
          '/v1//openapi.json',
          '/health/live',
          '/health/ready',
          '/health/live/',
          '/health//ready',
          '/health/%6cive'
        )
      }
    ),
    fc.option(fc.oneof(urlText, fc.constantFrom('', 'url=https://evil.test/x.json', 'configUrl=//evil.test')), {
      nil: undefined
    })
  )
  .map(([path, query]) => (query === undefined ? path : `${path}?${query}`))

const publicMethod = fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS')

const httpDate = fc.oneof(
  fc.constantFrom(
    '{LAST_MODIFIED}',
    'Thu, 01 Jan 1970 00:00:00 GMT',
    'Fri, 31 Dec 9999 23:59:59 GMT',
    'Sun, 06 Nov 1994 08:49:37 GMT',
    'Sunday, 06-Nov-94 08:49:37 GMT',
    'Sun Nov  6 08:49:37 1994',
    '0',
    '-1',
    'now',
    ''
  ),
  fc.date({ noInvalidDate: true }).map((date) => date.toUTCString()),
  headerText
)
const entityTag = fc.oneof(
  fc.constantFrom('{ETAG}', 'W/{ETAG}', '*', '"x"', 'W/"x"', '"x", {ETAG}', '{ETAG}, "x"', '""', '"', 'x', ''),
  headerText
)
const byteRange = fc.oneof(
  fc.constantFrom(
    'bytes=0-0',
    'bytes=0-',
    'bytes=-5',
    'bytes=-0',
    'bytes=5-1',
    'bytes=99999999-',
    'bytes=0-99999999',
    'bytes=0-18446744073709551616',
    'bytes=0-1,2-3',
    'bytes=1-2,0-1,5-9',
    'bytes=0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0',
    'bytes=',
    'bytes=abc',
    'bytes=-',
    'bytes=1.5-2',
    'items=0-5',
    'BYTES=0-5',
    'bytes = 0-5'
  ),
  fc.tuple(fc.nat({ max: 2_000_000 }), fc.nat({ max: 2_000_000 })).map(([from, to]) => `bytes=${from}-${to}`),
  headerText
)
const acceptEncoding = fc.oneof(
  fc.constantFrom(
    'gzip',
    'br',
    'deflate',
    'gzip, br',
    '*',
    '*;q=0',
    'identity;q=0',
    'gzip;q=0, identity;q=0',
    'x;q=x',
    ''
  ),
  headerText
)
const accept = fc.oneof(
  fc.constantFrom('*/*', 'text/html', 'application/json', 'application/yaml', 'application/json;q=0', 'image/*', ''),
  headerText
)
const forwardedFor = fc.oneof(
  fc.constantFrom('1.2.3.4', '1.2.3.4, 5.6.7.8', '::1', 'unknown', '', ', ,', '1.2.3.4:80', 'fe80::1%eth0'),
  headerText
)

const publicHeaders = fc
  .record(
    {
      range: byteRange,
      'if-range': fc.oneof(entityTag, httpDate),
      'if-match': entityTag,
      'if-none-match': entityTag,
      'if-modified-since': httpDate,
      'if-unmodified-since': httpDate,
      'accept-encoding': acceptEncoding,
      accept,
      'x-forwarded-for': forwardedFor,
      'x-request-id': headerText,
      authorization: authorization.map((value) => value ?? '')
    },
    { requiredKeys: [] }
  )
  .map((headers) => Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, resolveSecrets(value)])))

// ---- Checking one response ----

function expectSafe(response: LightMyRequestResponse, method: string, label: () => string) {
  expect(response.statusCode, label()).toBeLessThan(500)
  if (response.statusCode < 400 || method === 'HEAD') return
  expect(response.headers['content-type'], label()).toBe('application/json; charset=utf-8')
  const body = response.json()
  expect(Object.keys(body).sort(), label()).toEqual(['code', 'message', 'status'])
  expect(body.status, label()).toBe(response.statusCode)
  expect(typeof body.code === 'string' && /^[a-z_]+$/.test(body.code), label()).toBe(true)
  expect(typeof body.message === 'string' && body.message.length > 0, label()).toBe(true)
}

async function expectDataUnchangedUnlessCreated(
  response: LightMyRequestResponse,
  before: Snapshot,
  label: () => string
) {
  const after = await snapshot()
  if (response.statusCode === 201 && response.headers['idempotent-replayed'] === undefined) {
    expect(after.pets, label()).toBe(before.pets + 1)
    expect(BigInt(after.maxId) > BigInt(before.maxId), label()).toBe(true)
    expect(after.apiKeys, label()).toBe(before.apiKeys)
  } else {
    expect(after, label()).toEqual(before)
  }
}

const describeRequest = (request: object) => () =>
  JSON.stringify(request, (_k, v) =>
    typeof v === 'string' && v.length > 300
      ? `${v.slice(0, 300)}…(${v.length})`
      : Buffer.isBuffer(v)
        ? `<${v.length} bytes>`
        : v
  )

// Thousands of requests each: bounded by their run counts, with room for a busy machine.
describe('hostile requests through app.inject', { timeout: 180_000 }, () => {
  it('POST /v1/pets: random, malformed, nested, huge and hostile bodies, content types and Idempotency-Keys', async () => {
    let created = 0
    await fc.assert(
      fc.asyncProperty(
        anyBody,
        contentType,
        idempotencyKey,
        authorization,
        async (payload, type, idempotency, auth) => {
          const headers: Record<string, string> = { 'content-type': type }
          if (auth !== undefined) headers.authorization = resolveSecrets(auth)
          if (idempotency !== undefined) headers['idempotency-key'] = idempotency
          const label = describeRequest({ payload, headers: { ...headers, authorization: auth } })
          const before = await snapshot()
          const response = await app.inject({ method: 'POST', url: '/v1/pets', headers, payload })
          expectSafe(response, 'POST', label)
          await expectDataUnchangedUnlessCreated(response, before, label)
          if (response.statusCode === 201) {
            created++
            // What was stored is what was sent: the name comes back as it went in.
            const sent = JSON.parse(payload.toString())
            expect(response.json().name, label()).toBe(sent.name)
          }
        }
      ),
      { numRuns: 1500 }
    )
    // The generators reach the success path too, not only refusals.
    expect(created).toBeGreaterThan(20)
  })

  it('GET /v1/pets: hostile limits, statuses, cursors and unknown parameters', async () => {
    const before = await snapshot()
    await fc.assert(
      fc.asyncProperty(listQuery, authorization, async (query, auth) => {
        const url = `/v1/pets${resolveSecrets(query)}`
        const label = describeRequest({ url, auth })
        const response = await app.inject({
          method: 'GET',
          url,
          headers: auth === undefined ? {} : { authorization: resolveSecrets(auth) }
        })
        expectSafe(response, 'GET', label)
        if (response.statusCode === 200) expect(Array.isArray(response.json()), label()).toBe(true)
      }),
      { numRuns: 2000 }
    )
    expect(await snapshot()).toEqual(before)
  })

  it('every path and method: bad ids, encodings, traversal, unknown routes, bodies where none belong', async () => {
    await fc.assert(
      fc.asyncProperty(
        method,
        path,
        authorization,
        fc.option(anyBody, { nil: undefined }),
        async (verb, url, auth, payload) => {
          const headers: Record<string, string> = auth === undefined ? {} : { authorization: resolveSecrets(auth) }
          if (payload !== undefined) headers['content-type'] = 'application/json'
          const label = describeRequest({ verb, url, auth, payload })
          const before = await snapshot()
          const response = await app.inject({ method: verb as 'GET', url, headers, payload })
          expectSafe(response, verb, label)
          await expectDataUnchangedUnlessCreated(response, before, label)
        }
      ),
      { numRuns: 1250 }
    )
  })

  it('every public path: docs assets, the OpenAPI document and health with odd paths, methods, ranges, conditions and encodings', async () => {
    const before = await snapshot()
    await fc.assert(
      fc.asyncProperty(
        publicMethod,
        publicPath,
        publicHeaders,
        fc.option(anyBody, { nil: undefined }),
        async (verb, url, headers, payload) => {
          const label = describeRequest({ verb, url, headers, payload })
          const sent = payload === undefined ? headers : { ...headers, 'content-type': 'application/json' }
          const response = await app.inject({ method: verb as 'GET', url, headers: sent, payload })
          expectSafe(response, verb, label)
          if (response.statusCode === 416) expect(response.headers['content-range'], label()).toMatch(/^bytes \*\/\d+$/)
        }
      ),
      { numRuns: 1500 }
    )
    expect(await snapshot()).toEqual(before)
  })

  it('refuses NUL characters and unpaired surrogates in a name rather than altering them', async () => {
    for (const name of ['a\u0000b', '\ud800', 'x\udfffy', '\ud83d']) {
      const before = await snapshot()
      const response = await app.inject({
        method: 'POST',
        url: '/v1/pets',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ name, categoryId: 1 })
      })
      expect(response.statusCode).toBe(400)
      expect(response.json()).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('name') })
      expect(await snapshot()).toEqual(before)
    }
    // A surrogate pair is one character and is kept.
    const emoji = await app.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: '😀', categoryId: 1 })
    })
    expect(emoji.statusCode).toBe(201)
    expect(emoji.json().name).toBe('😀')
  })

  it('still serves ordinary requests afterwards', async () => {
    expect((await app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200)
    expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200)
    const list = await app.inject({
      method: 'GET',
      url: '/v1/pets?limit=1',
      headers: { authorization: `Bearer ${key}` }
    })
    expect(list.statusCode).toBe(200)
  })
})

// ---- Raw HTTP against the built server ----

interface RawAnswer {
  statuses: number[]
  head: string
  body: string
}

/**
 * Writes bytes on a fresh connection, ends it (unless `halfClose` is false: then the request must say
 * Connection: close), and collects whatever comes back until the server closes.
 */
function sendRaw(port: number, bytes: Buffer, { halfClose = true } = {}): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    const finish = () => {
      clearTimeout(timer)
      const text = Buffer.concat(chunks).toString('latin1')
      const statuses = [...text.matchAll(/(?:^|\r\n)HTTP\/1\.[01] (\d{3}) /g)].map((match) => Number(match[1]))
      const split = text.indexOf('\r\n\r\n')
      resolve({ statuses, head: split < 0 ? text : text.slice(0, split), body: split < 0 ? '' : text.slice(split + 4) })
    }
    const timer = setTimeout(() => socket.destroy(), 5000)
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', () => {})
    socket.on('close', finish)
    socket.on('connect', () => (halfClose ? socket.end(bytes) : socket.write(bytes)))
  })
}

describe('hostile bytes over real HTTP to the built server', () => {
  let server: RunningServer
  let port: number
  beforeAll(async () => {
    server = await startServer({
      ...env,
      DATABASE_URL: database.url,
      LOG_LEVEL: 'info',
      MAX_HEADER_BYTES: '8192',
      // What is judged here is the answer to the bytes: no load shedding or database timeout on a busy machine.
      OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
      DATABASE_TIMEOUT_MS: '10000'
    })
    port = Number(new URL(server.url).port)
  })
  afterAll(async () => {
    await server?.stop()
  })

  const CRLF = '\r\n'
  const requestLine = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        'GET /v1/pets HTTP/1.1',
        'POST /v1/pets HTTP/1.1',
        'GET /v1/pets/1 HTTP/1.1',
        'GET /health/live HTTP/1.1'
      )
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'GET /v1/pets HTTP/1.0',
        'GET /v1/pets',
        'GET /v1/pets HTTP/2.0',
        'GET /v1/pets HTTP/9.9',
        'get /v1/pets HTTP/1.1',
        'FOO /v1/pets HTTP/1.1',
        'GET  /v1/pets  HTTP/1.1',
        'GET v1/pets HTTP/1.1',
        'GET * HTTP/1.1',
        'CONNECT 127.0.0.1:1 HTTP/1.1',
        'GET http://evil.test/v1/pets HTTP/1.1',
        'GET /v1/pets\u0000 HTTP/1.1',
        'GET /v1/pets HTTP/1.1 extra',
        'PRI * HTTP/2.0',
        `GET /v1/pets/${'9'.repeat(5000)} HTTP/1.1`,
        'GET /v1/pets?limit=%ZZ HTTP/1.1',
        'GET /v1/p\u00e9ts HTTP/1.1',
        ''
      )
    },
    {
      weight: 1,
      arbitrary: fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 80 })
    }
  )
  const headerLine = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        'Host: test',
        'Content-Type: application/json',
        'Accept: */*',
        'Connection: keep-alive'
      )
    },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        'Content-Length: 5',
        'Content-Length: -1',
        'Content-Length: abc',
        'Content-Length: 99999999999999999999',
        'Content-Length: 1, 2',
        'Content-Length: 0',
        'Transfer-Encoding: chunked',
        'Transfer-Encoding: gzip, chunked',
        'Transfer-Encoding: identity',
        'Transfer-Encoding: chunked\r\nContent-Length: 3',
        'Host: a\r\nHost: b',
        'Bad Header: x',
        'NoColon',
        ': novalue',
        ' folded: continuation',
        'X-Null: a\u0000b',
        'X-Ctl: a\u0001b',
        'X-Long: ' + 'a'.repeat(10_000),
        'Expect: 100-continue',
        'Authorization: Bearer',
        'Authorization: Basic',
        'Authorization: Bearer \u00ff\u00fe',
        'Content-Type: text/plain',
        'Idempotency-Key: ' + 'k'.repeat(300),
        'Upgrade: websocket\r\nConnection: Upgrade'
      )
    },
    { weight: 1, arbitrary: fc.constant('Authorization: Bearer {KEY}') },
    {
      weight: 1,
      arbitrary: fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 60 })
    }
  )
  const body = fc.oneof(
    fc.constantFrom(
      '',
      '{"name":"","categoryId":1}',
      '{"name":',
      '5\r\n{"nam\r\n0\r\n\r\n',
      'zz\r\nxx\r\n',
      '0\r\n\r\n',
      '-1\r\nx\r\n',
      'ffffffffffffffff\r\nx\r\n',
      '{"categoryId":1}'
    ),
    fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 100 })
  )
  const ending = fc.constantFrom(CRLF, '\n', '\r')
  const rawRequest = fc
    .tuple(requestLine, fc.array(headerLine, { maxLength: 6 }), ending, body, fc.boolean())
    .map(([line, headers, eol, payload, twice]) => {
      const one = `${[line, ...headers].join(eol)}${eol}${eol}${payload}`
      return twice ? one + one : one
    })

  it('answers every malformed request without a 5xx, with the Error body, and stays up', async () => {
    const before = await snapshot()
    await fc.assert(
      fc.asyncProperty(rawRequest, async (request) => {
        const bytes = Buffer.from(resolveSecrets(request), 'latin1')
        const label = () => JSON.stringify(bytes.toString('latin1').slice(0, 400))
        const answer = await sendRaw(port, bytes)
        for (const status of answer.statuses) expect(status, label()).toBeLessThan(500)
        const first = answer.statuses[0]
        if (first !== undefined && first >= 400 && !/^(HEAD) /.test(bytes.toString('latin1'))) {
          expect(answer.head.toLowerCase(), label()).toContain('content-type: application/json; charset=utf-8')
          const length = /content-length: (\d+)/i.exec(answer.head)
          const text = length ? answer.body.slice(0, Number(length[1])) : answer.body
          const error = JSON.parse(Buffer.from(text, 'latin1').toString('utf8'))
          expect(Object.keys(error).sort(), label()).toEqual(['code', 'message', 'status'])
          expect(error.status, label()).toBe(first)
        }
        expect(server.child.exitCode, label()).toBeNull()
      }),
      { numRuns: 400 }
    )
    expect(await snapshot()).toEqual(before)
  })

  it('answers odd requests to every public path without a 5xx, dot segments sent as written', async () => {
    await fc.assert(
      fc.asyncProperty(publicMethod, publicPath, publicHeaders, async (verb, path, headers) => {
        const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`)
        const request = [`${verb} ${path} HTTP/1.1`, 'Host: test', ...lines, 'Connection: close', '', ''].join(CRLF)
        const label = () => JSON.stringify(request.slice(0, 600))
        // Not half-closed: Node drops a response still being streamed to a client that has ended its side.
        const answer = await sendRaw(port, Buffer.from(request, 'latin1'), { halfClose: false })
        expect(answer.statuses.length, label()).toBe(1)
        const status = answer.statuses[0]!
        expect(status, label()).toBeLessThan(500)
        if (status >= 400 && verb !== 'HEAD') {
          const length = Number(/content-length: (\d+)/i.exec(answer.head)![1])
          const error = JSON.parse(Buffer.from(answer.body.slice(0, length), 'latin1').toString('utf8'))
          expect(error, label()).toEqual({
            code: expect.stringMatching(/^[a-z_]+$/),
            message: expect.any(String),
            status
          })
        }
      }),
      { numRuns: 300 }
    )
    expect(server.child.exitCode).toBeNull()
    expect(server.output()).not.toMatch(/"level":50/)
  })

  it('answers headers over MAX_HEADER_BYTES with 431 and the Error body', async () => {
    const answer = await sendRaw(
      port,
      Buffer.from(`GET /v1/pets HTTP/1.1\r\nHost: t\r\nX-Big: ${'a'.repeat(9000)}\r\n\r\n`)
    )
    expect(answer.statuses).toEqual([431])
    expect(JSON.parse(answer.body)).toEqual({ code: 'headers_too_large', message: expect.any(String), status: 431 })
  })

  it('keeps serving ordinary requests, in the same process', async () => {
    expect(server.child.exitCode).toBeNull()
    const response = await fetch(`${server.url}/pets?limit=2`, { headers: { authorization: `Bearer ${key}` } })
    expect(response.status).toBe(200)
    expect(((await response.json()) as unknown[]).length).toBe(2)
  })
})
