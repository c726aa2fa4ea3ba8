import { Type } from '@sinclair/typebox'
import { MAX_COST } from '../services/plans.js'
import { Int64 } from './int64.js'
import { scopes } from './keys.js'

// What other services ask of a customer's key (POST /v1/decisions) and what they are told.

export const DecisionRequest = Type.Object(
  {
    key: Type.String({
      minLength: 1,
      maxLength: 200,
      description: "The customer's API key, as the customer sent it to the calling service",
      examples: ['ask_3kT9aQ2x_0123456789abcdefghijklmnopqrstuv_1a2b3c']
    }),
    method: Type.String({
      pattern: '^[A-Z]{1,16}$',
      description: "The method of the customer's request",
      examples: ['GET']
    }),
    path: Type.String({
      minLength: 1,
      maxLength: 2048,
      pattern: '^/',
      description:
        "The path of the customer's request; a query is ignored. Its cost is what the plan's costs name for " +
        'this method and path, or for a template that matches it (`GET /v1/orders/{id}`), else 1',
      examples: ['/v1/orders']
    }),
    cost: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_COST,
        description: "Units to charge instead of the plan's cost for the route"
      })
    ),
    address: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: "The customer's client address: a key with allowed addresses is admitted only with one of them",
        examples: ['203.0.113.7']
      })
    )
  },
  { $id: 'DecisionRequest', title: 'DecisionRequest', additionalProperties: false }
)

const headerValue = (description: string, example: string) =>
  Type.Union([Type.String({ description, examples: [example] }), Type.Null()])

export const Decision = Type.Object(
  {
    admitted: Type.Boolean({ description: 'Whether the request may go on; it has been charged when it may' }),
    code: Type.Union(
      [
        Type.Literal('invalid_key'),
        Type.Literal('rate_limited'),
        Type.Literal('credits_exhausted'),
        Type.Literal('key_banned'),
        Type.Literal('address_not_allowed'),
        Type.Null()
      ],
      {
        description:
          'null when admitted; otherwise why not: `invalid_key` (unknown, revoked or expired: nothing else is ' +
          'told), `rate_limited`, `credits_exhausted`, `key_banned` (as the pets API answers 429), ' +
          '`address_not_allowed` (nothing charged)'
      }
    ),
    accountId: Type.Optional(Int64({ description: "The key's account" })),
    keyId: Type.Optional(Int64({ description: 'The key' })),
    scopes: Type.Optional(scopes),
    metadata: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: "The operators' metadata on the key" })
    ),
    headers: Type.Optional(
      Type.Object(
        {
          'ratelimit-policy': headerValue('Every limit of the account', '"minute";q=60;w=60, "day";q=1000;w=86400'),
          ratelimit: headerValue('The binding window', '"minute";r=59;t=41'),
          'retry-after': headerValue('Seconds to wait, when refused and waiting helps', '41')
        },
        {
          additionalProperties: false,
          description: 'The rate-limit headers the pets API would send the customer for this request'
        }
      )
    )
  },
  { $id: 'Decision', title: 'Decision', additionalProperties: false }
)

export const Authorization = Type.Object(
  {
    accountId: Int64({ description: "The key's account, also in X-Account-Id" }),
    keyId: Int64({ description: 'The key, also in X-Key-Id' }),
    scopes
  },
  { $id: 'Authorization', title: 'Authorization', additionalProperties: false }
)
