import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import fp from 'fastify-plugin'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import {
  ApiError,
  ConflictError,
  ERRORS,
  insufficientScope,
  InvalidInputError,
  invalidToken,
  isDatabaseUnavailable,
  NotFoundError,
  type ErrorCode
} from '../../errors.js'
import { JsonSyntaxError } from '../../json.js'
import type { ErrorBody } from '../../schemas/error.js'
import { INSTANT_RULE } from '../../schemas/instant.js'
import { STORABLE_TEXT } from '../../schemas/pets.js'
import { BeyondHolderError, HolderUnusableError } from '../../services/key-holders.js'

const DATABASE_RETRY_AFTER_SECONDS = '5'

// The codes of the 4xx statuses that Fastify and its plugins (@fastify/static under the docs page)
// raise. Any other 4xx is answered as 400 `invalid_request`, with its message; no 4xx becomes a 500.
const CODE_BY_STATUS: Partial<Record<number, ErrorCode>> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  408: 'request_timeout',
  411: 'length_required',
  412: 'precondition_failed',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  416: 'range_not_satisfiable',
  429: 'rate_limited',
  431: 'headers_too_large'
}

function validationMessage(error: FastifyError): string {
  const context = error.validationContext ?? 'request'
  // One message per field (a null status fails both `type` and `enum`), but every unknown or missing property.
  const seen = new Set<string>()
  const issues = (error.validation ?? []).filter((issue) => {
    const params = issue.params
    const key = `${issue.instancePath}|${params.additionalProperty ?? params.missingProperty ?? ''}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
  const parts = issues.map((issue) => {
    const field = issue.instancePath.replace(/^\//, '').replaceAll('/', '.')
    const params = issue.params
    if (issue.keyword === 'additionalProperties') {
      const name = String(params.additionalProperty)
      return `${context} has an unknown property '${name}'`
    }
    if (issue.keyword === 'required') {
      const name = String(params.missingProperty)
      return `${context} is missing the required property '${name}'`
    }
    if (issue.keyword === 'enum') {
      return `${field || context} must be one of ${(params.allowedValues as unknown[]).join(', ')}`
    }
    // A union of literals fails one `const` per literal: name them all, as an enum's message does.
    if (issue.keyword === 'const') {
      const allowed = (error.validation ?? [])
        .filter((other) => other.keyword === 'const' && other.instancePath === issue.instancePath)
        .map((other) => String(other.params.allowedValue))
      return `${field || context} must be one of ${allowed.join(', ')}`
    }
    if (issue.keyword === 'type' && !field) return `${context} must be a JSON ${params.type}`
    if (issue.keyword === 'pattern' && params.pattern === STORABLE_TEXT) {
      return `${field} must not contain control characters, invisible format characters, line separators or unpaired surrogates`
    }
    if (issue.keyword === 'format' && params.format === 'date-time') return `${field || context} ${INSTANT_RULE}`
    return `${field || context} ${issue.message ?? 'is invalid'}`
  })
  return parts.join('; ')
}

/**
 * Anything thrown while serving a request as one of the registered codes (src/errors.ts): the
 * service's own ApiErrors as they are, the domain's errors and the libraries' by what they mean.
 */
function asApiError(error: FastifyError | Error): ApiError {
  if (error instanceof ApiError) return error
  if (error instanceof InvalidInputError) return new ApiError('invalid_request', error.message)
  if (error instanceof NotFoundError) return new ApiError('not_found', error.message)
  if (error instanceof ConflictError) return new ApiError(error.code, error.message)
  if (error instanceof HolderUnusableError) return invalidToken()
  if (error instanceof BeyondHolderError) {
    return error.missing.length
      ? insufficientScope(error.missing, error.message)
      : new ApiError('forbidden', error.message)
  }
  if (error instanceof JsonSyntaxError) return new ApiError('invalid_json', error.message)
  const fastifyError = error as FastifyError
  if (fastifyError.validation) return new ApiError('invalid_request', validationMessage(fastifyError))
  switch (fastifyError.code) {
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError('invalid_request', 'A path parameter is longer than 100 characters')
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_json', 'The request body is empty')
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', 'The request body is larger than 16 KiB')
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type', 'The request body must be sent as Content-Type: application/json')
  }
  if (isDatabaseUnavailable(error)) {
    return new ApiError('service_unavailable', 'The service cannot reach its database; retry later', {
      'retry-after': DATABASE_RETRY_AFTER_SECONDS
    })
  }
  // Fastify's errors carry statusCode; http-errors (@fastify/send) carry status as well.
  const status = fastifyError.statusCode ?? (error as { status?: number }).status
  if (status !== undefined && status >= 400 && status < 500) {
    const message = fastifyError.message || STATUS_CODES[status] || 'The request cannot be served'
    // A 416 says how long the file is (RFC 9110, section 15.5.17).
    const range = (error as { headers?: Record<string, string> }).headers?.['Content-Range']
    return new ApiError(
      CODE_BY_STATUS[status] ?? 'invalid_request',
      message,
      status === 416 && range ? { 'content-range': range } : {}
    )
  }
  return new ApiError('internal_error', 'An unexpected error occurred')
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: FastifyError | Error) {
  const { code, message, statusCode: status, headers } = asApiError(error)
  if (status >= 500) request.log.error({ err: error }, 'request failed')
  reply.headers(headers)
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .send({ code, message, status } satisfies ErrorBody)
}

const CLIENT_ERRORS: Record<string, { code: ErrorCode; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'request_timeout', message: 'The request did not arrive in time' },
  HPE_HEADER_OVERFLOW: { code: 'headers_too_large', message: 'The request headers are too large' }
}
const MALFORMED = { code: 'invalid_request', message: 'The request is not valid HTTP/1.1' } as const

/**
 * Fastify's `clientErrorHandler`: a request Node cannot parse, or one too slow or too large, is
 * answered on the raw socket with the Error body, and the connection is closed.
 */
export function sendClientError(error: Error & { code?: string }, socket: Duplex) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const { code, message } = CLIENT_ERRORS[error.code ?? ''] ?? MALFORMED
  const { status } = ERRORS[code]
  const body = JSON.stringify({ code, message, status } satisfies ErrorBody)
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
        // Written on the socket, past helmet's hook.
        'X-Content-Type-Options: nosniff\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
    )
  }
  socket.destroy()
}

export function sendNotFound(request: FastifyRequest, reply: FastifyReply) {
  const path = request.url.split('?')[0]!.slice(0, 200)
  return reply
    .code(404)
    .type('application/json; charset=utf-8')
    .send({ code: 'not_found', message: `No route ${request.method} ${path}`, status: 404 } satisfies ErrorBody)
}

/** The one error model: every error response, from any layer, has the Error body. */
export default fp(
  async (app) => {
    app.setErrorHandler((error, request, reply) => sendError(request, reply, error as Error))
    // HTTP/1.1 requires one Host header (RFC 9112, section 3.2); the server joins two with a comma,
    // which no host name holds.
    // Callback-style hooks here and in the other per-request hooks: no promise per request.
    app.addHook('onRequest', (request, _reply, done) => {
      const { host } = request.headers
      if (
        host === undefined
          ? request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor >= 1
          : host.includes(',')
      ) {
        return done(new ApiError('invalid_request', 'An HTTP/1.1 request needs one Host header'))
      }
      done()
    })
    app.setNotFoundHandler((request, reply) => sendNotFound(request, reply))
  },
  { name: 'errors' }
)
