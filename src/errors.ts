/** An error a handler or hook throws to answer with the Error body. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {}
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

export const invalidRequest = (message: string) => new ApiError(400, 'invalid_request', message)
export const notFound = (message: string) => new ApiError(404, 'not_found', message)
export const gone = (message: string) => new ApiError(410, 'gone', message)
export const methodNotAllowed = (method: string, allowed: readonly string[]) =>
  new ApiError(405, 'method_not_allowed', `${method} is not allowed here; use ${allowed.join(', ')}`, {
    allow: allowed.join(', ')
  })

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
