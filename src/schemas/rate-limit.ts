import { Type, type Static } from '@sinclair/typebox'
import { Int64 } from './int64.js'
import { Instant } from './instant.js'

/** One window as it stands; `used` is described where it is read, since what it includes depends on who reads it. */
export const rateLimitWindow = (used: string) =>
  Type.Object(
    {
      name: Type.Union(
        ['second', 'minute', 'hour', 'day', 'month'].map((window) => Type.Literal(window)),
        { description: 'The UTC window: second, minute, hour, day or calendar month' }
      ),
      algorithm: Type.Union([Type.Literal('fixed'), Type.Literal('bucket')], {
        description: 'fixed: the window resets at its end; bucket: units come back evenly over the window'
      }),
      shadow: Type.Boolean({
        description: 'A shadow limit: counted like the others, never refusing; `used` may pass its `limit`'
      }),
      limit: Type.Integer({ description: 'Units the window allows (a bucket: the most it holds, its burst)' }),
      used: Type.Integer({ description: used }),
      remaining: Type.Integer({ minimum: 0, description: 'Units left in the window, or in the bucket' }),
      reset: Type.Integer({
        description: 'Unix time, in seconds, at which the window resets (a bucket: is full again)'
      })
    },
    { additionalProperties: false }
  )

export const RateLimitStatus = Type.Object(
  {
    account: Type.Object(
      {
        id: Int64({ description: 'The account the key belongs to' }),
        externalId: Type.Union([Type.String(), Type.Null()], {
          description: "The operator's own id of the customer; null for an account made for a single key"
        })
      },
      { additionalProperties: false, description: 'The customer whose plan and windows the key shares' }
    ),
    plan: Type.String({ pattern: '^[a-z0-9-]{1,40}$', description: "The account's plan" }),
    windows: Type.Array(rateLimitWindow('Units counted in the window so far')),
    costs: Type.Record(Type.String(), Type.Integer({ minimum: 0, maximum: 1000 }), {
      description: 'The units each route named by the plan costs (`POST /v1/pets`); any other route costs 1'
    }),
    credits: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: "The account's prepaid units left; null when it has no credits"
    }),
    bannedUntil: Type.Union([Instant(), Type.Null()], {
      description: 'Until when the key is banned for sending while refused; null when it is not'
    })
  },
  { $id: 'RateLimitStatus', title: 'RateLimitStatus', additionalProperties: false }
)

export type RateLimitStatus = Static<typeof RateLimitStatus>
