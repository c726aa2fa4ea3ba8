import type { Scope } from './db/schema.js'

/**
 * Every error code the service answers with, its HTTP status and when it is sent: the one registry.
 * Handlers throw `new ApiError(code, message)` and domain errors are mapped to a code by the error
 * handler (src/plugins/app/errors.ts); docs/decisions.md's table (`npm run docs:errors`) and the
 * OpenAPI documents' `code` enum (src/schemas/error.ts) are generated from it.
 */
export const ERRORS = {
  invalid_request: {
    status: 400,
    when: 'a body, query, path or header value fails validation; the message names the field. Also a request that is not valid HTTP/1.1, `GET /v1/authorize` without a well-formed `X-Original-Method` and `X-Original-URI`, and any other 4xx a library raises that has no code of its own'
  },
  invalid_json: { status: 400, when: 'the body is not parseable JSON, or not UTF-8 whatever charset it names' },
  unauthorized: {
    status: 401,
    when: 'key missing, malformed, unknown, revoked or expired (one code for all); on the admin API and `POST /v1/decisions`, no valid operator token (the key a decision asks about being unusable is the 200 answer `{"admitted": false, "code": "invalid_key"}`)'
  },
  insufficient_scope: {
    status: 403,
    when: 'the key lacks the scope the route needs, or a scope a change under `/v1/keys` would give; with `WWW-Authenticate` naming it'
  },
  address_not_allowed: {
    status: 403,
    when: "the key's allowed addresses do not hold the client address; nothing is counted against the key"
  },
  insufficient_role: {
    status: 403,
    when: "admin API: the operator's role may not do this (a `service` token, anything); `POST /v1/decisions`: the operator is not of the role `service`"
  },
  forbidden: {
    status: 403,
    when: 'a plugin refuses the request; under `/v1/keys`, a key rotated would work after the calling key expires'
  },
  not_found: {
    status: 404,
    when: 'no such route (a path with an id left empty, `/v1/pets/`, among them), or no such pet, key, account, operator, plan or webhook endpoint'
  },
  method_not_allowed: {
    status: 405,
    when: 'known path, wrong method, whatever body it carries; with an `Allow` header; on the admin API after the token check, to any role that may read'
  },
  not_acceptable: { status: 406, when: 'Fastify or a plugin raises it' },
  request_timeout: { status: 408, when: 'the headers or the body did not arrive in time; the connection is closed' },
  idempotency_key_in_use: { status: 409, when: 'a request with the same `Idempotency-Key` is still running' },
  account_exists: { status: 409, when: 'admin API and CLI: another account has the `externalId`' },
  account_closed: { status: 409, when: 'admin API, CLI and `/v1/keys`: the account is closed' },
  key_revoked: { status: 409, when: 'admin API, CLI and `/v1/keys`: the key is revoked' },
  operator_exists: { status: 409, when: 'admin API and CLI: an operator has the name' },
  gone: { status: 410, when: '`GET /v1/pets/{petId}` after its sunset' },
  length_required: { status: 411, when: 'Fastify or a plugin raises it' },
  precondition_failed: { status: 412, when: 'a conditional header on a docs asset fails' },
  payload_too_large: { status: 413, when: 'a body over 16 KiB' },
  uri_too_long: { status: 414, when: 'Fastify or a plugin raises it' },
  unsupported_media_type: { status: 415, when: 'a POST body not sent as `application/json`' },
  range_not_satisfiable: { status: 416, when: 'a range past the end of a docs asset; with `Content-Range`' },
  idempotency_key_reused: { status: 422, when: 'same `Idempotency-Key`, different body' },
  rate_limited: {
    status: 429,
    when: "a limit of the key's account, or the address's budget, is spent; on the admin API, the address's failed tokens"
  },
  credits_exhausted: {
    status: 429,
    when: 'every limit of the account has room but its credits do not; `Retry-After` until their next refill, none without one'
  },
  key_banned: { status: 429, when: 'the key is banned for a while' },
  headers_too_large: { status: 431, when: 'a request head over `MAX_HEADER_BYTES`; the connection is closed' },
  internal_error: { status: 500, when: 'a bug; the message never carries internals (SQL, stack, driver text)' },
  service_unavailable: {
    status: 503,
    when: 'the database cannot be reached, or the instance is overloaded; with `Retry-After`'
  }
} as const satisfies Record<string, { status: number; when: string }>

export type ErrorCode = keyof typeof ERRORS
/** The codes registered with `status`. */
export type ErrorCodeOf<S extends number> = {
  [C in ErrorCode]: (typeof ERRORS)[C]['status'] extends S ? C : never
}[ErrorCode]

export const ERROR_CODES = Object.keys(ERRORS) as ErrorCode[]

const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(ERRORS, code)

/** An error a handler or hook throws to answer with the Error body; its status is its code's. */
export class ApiError extends Error {
  readonly statusCode: number

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {}
  ) {
    // A code built at run time (a domain error's) may still be one the registry lacks.
    if (!isErrorCode(code)) throw new TypeError(`'${String(code)}' is not a registered error code (src/errors.ts)`)
    super(message)
    this.name = 'ApiError'
    this.statusCode = ERRORS[code].status
  }
}

export const invalidRequest = (message: string) => new ApiError('invalid_request', message)
export const notFound = (message: string) => new ApiError('not_found', message)
export const gone = (message: string) => new ApiError('gone', message)
export const methodNotAllowed = (method: string, allowed: readonly string[]) =>
  new ApiError('method_not_allowed', `${method} is not allowed here; use ${allowed.join(', ')}`, {
    allow: allowed.join(', ')
  })

/** The challenge of `WWW-Authenticate` on the public API (RFC 6750). */
export const REALM = 'Bearer realm="animal-store"'

/** RFC 6750, section 3.1: the request needs scopes its key does not carry (the challenge lists them). */
export const insufficientScope = (
  scopes: readonly Scope[],
  message = `This API key lacks the scope ${scopes.join(', ')}`
) =>
  new ApiError('insufficient_scope', message, {
    'www-authenticate': `${REALM}, error="insufficient_scope", scope="${scopes.join(' ')}"`
  })

export const unauthorized = (headers: Record<string, string> = {}) =>
  new ApiError('unauthorized', 'A valid API key is required: send Authorization: Bearer <key>', headers)

/** The answer to a key found unusable after the guard let it through (revoked while its request ran). */
export const invalidToken = () => unauthorized({ 'www-authenticate': `${REALM}, error="invalid_token"` })

// The domain's errors: services and repositories throw them, knowing nothing of HTTP; the error
// handler answers each with its code.

/** A value breaks a rule of the domain: 400 `invalid_request` on either API, exit code 2 on the CLI. */
export class InvalidInputError extends Error {}

/** No such key, account, operator, plan or webhook endpoint: 404 `not_found`. */
export class NotFoundError extends Error {}

/** A change the current state forbids (a revoked key, a closed account, a taken external id): 409 with its own code. */
export class ConflictError extends Error {
  constructor(
    readonly code: ErrorCodeOf<409>,
    message: string
  ) {
    super(message)
  }
}

/** Postgres error classes and driver failures that mean "the database cannot be reached now". */
// 57014: a statement cancelled (statement_timeout); 25006: a standby not yet promoted, during a failover.
const UNAVAILABLE_SQLSTATE = /^(08|53|57P0|57014|25006)/
const UNAVAILABLE_SYSCALL = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH'])
// Messages of pg, pg-pool and Postgres, matched anywhere, ignoring case; none holds a regex metacharacter.
const UNAVAILABLE_PHRASES = [
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'connection timeout',
  'Query read timeout',
  'not queryable',
  'Client has encountered a connection error',
  'the database system is starting up',
  'the database system is shutting down',
  'not currently accepting connections'
]
const UNAVAILABLE_MESSAGE = new RegExp(UNAVAILABLE_PHRASES.join('|'), 'i')

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string' && (UNAVAILABLE_SYSCALL.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true
  if (error instanceof AggregateError) return error.errors.some(isDatabaseUnavailable)
  return UNAVAILABLE_MESSAGE.test(error.message)
}
