import { Type, type Static } from '@sinclair/typebox'
import { Int64 } from './int64.js'

/** One window as it stands; `used` is described where it is read, since what it includes depends on who reads it. */
export const rateLimitWindow = (used: string) =>
  Type.Object(
    {
      name: Type.Union([Type.Literal('minute'), Type.Literal('day')], { description: 'The UTC minute or the UTC day' }),
      limit: Type.Integer({ description: 'Requests the window allows' }),
      used: Type.Integer({ description: used }),
      remaining: Type.Integer({ minimum: 0, description: 'Requests left in the window' }),
      reset: Type.Integer({ description: 'Unix time, in seconds, at which the window resets' })
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
    plan: Type.String({
      pattern: '^[a-z0-9-]{1,40}$',
      description: "The account's plan: the seed's free, pro, business or enterprise, or another the operator made"
    }),
    windows: Type.Array(rateLimitWindow('Requests counted in the window so far')),
    bannedUntil: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'Until when the key is banned for sending while refused; null when it is not'
    })
  },
  { $id: 'RateLimitStatus', title: 'RateLimitStatus', additionalProperties: false }
)

export type RateLimitStatus = Static<typeof RateLimitStatus>
