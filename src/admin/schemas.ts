import { Type, type Static } from '@sinclair/typebox'
import { ErrorBody } from '../schemas/error.js'
import { Int64 } from '../schemas/int64.js'
import { STORABLE_TEXT } from '../schemas/pets.js'
import { Ref } from '../schemas/ref.js'

const PLANS = ['free', 'pro', 'business', 'enterprise'] as const

const Plan = Type.Unsafe<(typeof PLANS)[number]>({
  $id: 'Plan',
  type: 'string',
  enum: [...PLANS],
  title: 'Plan',
  description: 'free: 60 a minute, 1,000 a day; pro: 300 and 10,000; business: 1,000 and 100,000; enterprise: its own'
})

const limit = (window: string) =>
  Int64({ minimum: 1, maximum: 2_147_483_647, description: `Requests a ${window}; an enterprise key's own` })
const name = Type.String({ minLength: 1, maxLength: 255, pattern: STORABLE_TEXT, description: 'A label for the key' })
const instant = (description: string) => Type.String({ format: 'date-time', description })

/** A key as the admin API and `keys list --json` show it: never its secret. */
export const Key = Type.Object(
  {
    id: Int64({ description: 'The key' }),
    prefix: Type.String({
      description: 'The readable start of the secret, shown in listings',
      examples: ['ask_3kT9aQ2x']
    }),
    name: Type.Union([name, Type.Null()]),
    plan: Ref(Plan),
    perMinute: Type.Integer({ description: 'Requests a minute' }),
    perDay: Type.Integer({ description: 'Requests a day' }),
    createdAt: instant('When the key was issued'),
    expiresAt: Type.Union([instant('When the key stops working'), Type.Null()]),
    revokedAt: Type.Union([instant('When the key was revoked'), Type.Null()])
  },
  { $id: 'Key', title: 'Key', additionalProperties: false }
)

/** A key just issued or rotated, with its secret: shown this once, stored only as a hash. */
export const IssuedKey = Type.Composite(
  [Key, Type.Object({ key: Type.String({ description: 'The secret, shown only this once' }) })],
  { $id: 'IssuedKey', title: 'IssuedKey', additionalProperties: false }
)

export const NewKey = Type.Object(
  {
    plan: Ref(Plan),
    name: Type.Optional(name),
    perMinute: Type.Optional(limit('minute')),
    perDay: Type.Optional(limit('day')),
    expiresAt: Type.Optional(instant('When the key stops working'))
  },
  { $id: 'NewKey', title: 'NewKey', additionalProperties: false }
)

export const KeyChanges = Type.Object(
  {
    plan: Type.Optional(Ref(Plan)),
    name: Type.Optional(Type.Union([name, Type.Null()])),
    perMinute: Type.Optional(limit('minute')),
    perDay: Type.Optional(limit('day')),
    expiresAt: Type.Optional(Type.Union([instant('When the key stops working'), Type.Null()]))
  },
  { $id: 'KeyChanges', title: 'KeyChanges', additionalProperties: false, minProperties: 1 }
)

export const KeyParams = Type.Object({ id: Int64({ description: 'The key' }) })

export const KeyListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Keys a page' })),
  cursor: Type.Optional(
    Type.String({ minLength: 1, maxLength: 512, description: 'Opaque position from a `Link: rel="next"` header' })
  )
})

export const UsageQuery = Type.Object({
  days: Type.Optional(Type.Integer({ minimum: 1, maximum: 400, default: 30, description: 'UTC days, today first' }))
})

export const Usage = Type.Object(
  {
    days: Type.Array(
      Type.Object(
        {
          date: Type.String({ format: 'date', description: 'The UTC day' }),
          admitted: Type.Integer({ description: 'Requests admitted' }),
          refused: Type.Integer({ description: 'Requests refused with 429' })
        },
        { additionalProperties: false }
      )
    )
  },
  { $id: 'Usage', title: 'Usage', additionalProperties: false }
)

export const adminComponents = [Plan, Key, IssuedKey, NewKey, KeyChanges, Usage, ErrorBody]

export type NewKey = Static<typeof NewKey>
export type KeyChanges = Static<typeof KeyChanges>
