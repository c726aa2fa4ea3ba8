import { Type, type TSchema } from '@sinclair/typebox'
import { ErrorBody } from './error.js'
import { Ref } from './ref.js'

type Headers = Record<string, TSchema>

/** Sent on every answer the guard lets through or refuses (see rateLimitHeaders). */
const rateLimitHeaders = {
  'X-RateLimit-Limit': Type.Integer({
    description: 'The limit of the binding window: the one with the fewest requests left'
  }),
  'X-RateLimit-Remaining': Type.Integer({ minimum: 0, description: 'Requests remaining in the binding window' }),
  'X-RateLimit-Reset': Type.Integer({ description: 'Unix time, in seconds, at which the binding window resets' }),
  'RateLimit-Policy': Type.String({
    description: 'Every window in force (IETF RateLimit fields)',
    examples: ['"minute";q=60;w=60, "day";q=1000;w=86400']
  }),
  RateLimit: Type.String({
    description: 'The binding window: requests remaining and seconds until it resets',
    examples: ['"minute";r=59;t=41']
  })
} satisfies Headers

const retryAfter = {
  'Retry-After': Type.Integer({ minimum: 1, description: 'Seconds to wait before sending again' })
} satisfies Headers

export const deprecationHeaders = {
  Deprecation: Type.String({
    description: 'RFC 9745: when the operation was deprecated, as @ and Unix seconds',
    examples: ['@1795305600']
  }),
  Sunset: Type.String({
    description: 'RFC 8594: when the operation is removed; from then on it answers 410',
    examples: ['Thu, 05 Dec 2030 00:00:00 GMT']
  }),
  Link: Type.String({
    description: 'The successor operation',
    examples: ['<https://api.example.com/v1/pets>; rel="successor-version"']
  })
} satisfies Headers

/** Each of `responses` with `headers` beside its own: for an operation that sends them on every answer. */
export const withHeaders = <R extends Record<number, { headers: Headers }>>(responses: R, headers: Headers): R =>
  Object.fromEntries(
    Object.entries(responses).map(([status, response]) => [
      status,
      { ...response, headers: { ...response.headers, ...headers } }
    ])
  ) as R

export const nextPageHeaders = {
  Link: Type.String({
    description: 'Sent while more follow: the next page, with the same filter and limit',
    examples: ['<https://api.example.com/v1/pets?limit=20&status=sold&cursor=MTIz.c2ln>; rel="next"']
  })
} satisfies Headers

export const IdempotencyHeaders = Type.Object({
  'Idempotency-Key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description:
        'Makes a retry safe: for 24 hours a repeat with the same key and body replays the first 201 and creates ' +
        'nothing. Sent once: a request that repeats the header is a 400'
    })
  )
})

export const replayHeaders = {
  'Idempotent-Replayed': Type.Literal('true', {
    description: 'Sent when this 201 replays the answer to an earlier request'
  })
} satisfies Headers

/** A JSON response as both Fastify (which serializes by `content`) and @fastify/swagger read it. */
export function jsonResponse<T extends TSchema>(description: string, schema: T, headers: Headers = {}) {
  return { description, headers: { ...rateLimitHeaders, ...headers }, content: { 'application/json': { schema } } }
}

export const errorResponse = (description: string, headers: Headers = {}) =>
  jsonResponse(description, Ref(ErrorBody), headers)

export const addressNotAllowed =
  '`address_not_allowed`: the API key may not be used from the client address (its allowed addresses); ' +
  'nothing is counted against the key'

/**
 * The guard's answer to a key without the operation's scope (RFC 6750, section 3.1), after the request
 * is counted; in place of the common 403, so spread after commonErrorResponses.
 */
export const insufficientScopeResponse = (scope: string) => ({
  403: errorResponse(`\`insufficient_scope\`: the API key lacks the scope ${scope}; ${addressNotAllowed}`, {
    'WWW-Authenticate': Type.String({
      description: 'With insufficient_scope, the bearer challenge naming the scope the operation needs',
      examples: [`Bearer realm="animal-store", error="insufficient_scope", scope="${scope}"`]
    })
  })
})

/** The key's scope an operation needs, in its security requirement and its description. */
export const scoped = (scope: string) => ({ security: [{ bearerAuth: [scope] }] })

/** Answers any operation can give: from the guard, and from the error handler when the service fails. */
export const commonErrorResponses = {
  401: errorResponse('`unauthorized`: the API key is missing, malformed, unknown, revoked or expired', {
    'WWW-Authenticate': Type.String({
      description: 'The bearer challenge, with error="invalid_token" when a key was sent',
      examples: ['Bearer realm="animal-store", error="invalid_token"']
    })
  }),
  403: errorResponse(addressNotAllowed),
  429: errorResponse(
    '`rate_limited`: a window of the plan is exhausted; `key_banned`: the key kept sending while refused and is ' +
      'banned for a while. Wait Retry-After seconds before sending again',
    retryAfter
  ),
  500: errorResponse('`internal_error`: an unexpected failure'),
  503: errorResponse('`service_unavailable`: the service cannot reach its database', retryAfter)
}
