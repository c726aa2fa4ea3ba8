import { Type, type Static } from '@sinclair/typebox'
import type { Scope as ScopeName } from '../db/schema.js'
import { SCOPES } from '../repositories/api-keys.js'
import { LONGEST_GRACE_SECONDS } from '../services/rules.js'
import { Int64 } from './int64.js'
import { STORABLE_TEXT } from './pets.js'
import { Ref } from './ref.js'
import { Instant } from './instant.js'

// A key's scopes and the shapes of keys as their holders see them (GET, POST /v1/keys); the admin
// API's document shares Scope, scopes, the name and KeyRotation.

export const Scope = Type.Unsafe<ScopeName>({
  $id: 'Scope',
  type: 'string',
  enum: [...SCOPES],
  title: 'Scope',
  description:
    "pets:read: GET /v1/pets and /v1/pets/{petId}; pets:write: POST /v1/pets; keys:manage: the key's own " +
    "account's keys through /v1/keys; usage:read: the key's own account's usage through GET /v1/usage"
})

export const scopes = Type.Array(Ref(Scope), {
  minItems: 1,
  maxItems: SCOPES.length,
  uniqueItems: true,
  description: 'What the key may do'
})

export const keyName = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: STORABLE_TEXT,
  description: 'A label for the key; no control characters or bidirectional overrides'
})

/** A key of the caller's account as its holders see it: never its secret or its hash. */
export const ApiKey = Type.Object(
  {
    id: Int64({ description: 'The key' }),
    prefix: Type.String({
      description: 'The readable start of the secret, the same in the audit trail',
      examples: ['ask_3kT9aQ2x']
    }),
    name: Type.Union([keyName, Type.Null()]),
    scopes,
    createdAt: Instant('When the key was issued'),
    expiresAt: Type.Union([Instant('When the key stops working'), Type.Null()]),
    revokedAt: Type.Union([Instant('When the key was revoked'), Type.Null()]),
    previousPrefix: Type.Union([
      Type.String({ description: 'The prefix of the secret still in its grace' }),
      Type.Null()
    ]),
    previousSecretExpiresAt: Type.Union([
      Instant('When the secret replaced by the last rotation stops working; null: it has'),
      Type.Null()
    ])
  },
  { $id: 'ApiKey', title: 'ApiKey', additionalProperties: false }
)

export const ApiKeys = Type.Array(Ref(ApiKey), { $id: 'ApiKeys', title: 'ApiKeys' })

/** A key just issued or rotated, with its secret: shown this once, stored only as a hash. */
export const IssuedApiKey = Type.Composite(
  [ApiKey, Type.Object({ key: Type.String({ description: 'The secret, shown only this once' }) })],
  { $id: 'IssuedApiKey', title: 'IssuedApiKey', additionalProperties: false }
)

export const NewApiKey = Type.Object(
  {
    name: Type.Optional(keyName),
    scopes: {
      ...scopes,
      description: 'What the key may do: only scopes the calling key has itself'
    },
    expiresAt: Type.Optional(
      Instant(
        'When the key stops working: no later than the calling key does. Without it, the new key expires with the ' +
          'calling key (never, when that one never does)'
      )
    )
  },
  { $id: 'NewApiKey', title: 'NewApiKey', additionalProperties: false }
)

export const ListApiKeysQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Maximum number of keys to return' })
  ),
  cursor: Type.Optional(
    Type.String({ minLength: 1, maxLength: 512, description: 'Opaque position from a `Link: rel="next"` header' })
  )
})

export const ApiKeyParams = Type.Object({ id: Int64({ description: 'The key' }) })

/** How a rotation treats the secret it replaces: the admin API's and the key holders' alike. */
export const KeyRotation = Type.Object(
  {
    graceSeconds: Type.Optional(
      Int64({
        minimum: 0,
        maximum: LONGEST_GRACE_SECONDS,
        description:
          'How long the secret replaced keeps working beside the new one, by the database clock, on the same ' +
          'account and windows: 0 (the default) stops it at once, 604800 is a week. A secret still in an earlier ' +
          "rotation's grace stops at once either way"
      })
    )
  },
  { $id: 'KeyRotation', title: 'KeyRotation', additionalProperties: false }
)

export type NewApiKey = Static<typeof NewApiKey>
