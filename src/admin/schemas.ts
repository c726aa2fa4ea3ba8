import { Type, type Static } from '@sinclair/typebox'
import { ErrorBody } from '../schemas/error.js'
import { Int64, NullableInt64 } from '../schemas/int64.js'
import { STORABLE_TEXT } from '../schemas/pets.js'
import { rateLimitWindow } from '../schemas/rate-limit.js'
import { Ref } from '../schemas/ref.js'

const PLANS = ['free', 'pro', 'business', 'enterprise'] as const

const Plan = Type.Unsafe<(typeof PLANS)[number]>({
  $id: 'Plan',
  type: 'string',
  enum: [...PLANS],
  title: 'Plan',
  description: 'free: 60 a minute, 1,000 a day; pro: 300 and 10,000; business: 1,000 and 100,000; enterprise: its own'
})

const Scope = Type.Unsafe<'pets:read' | 'pets:write'>({
  $id: 'Scope',
  type: 'string',
  enum: ['pets:read', 'pets:write'],
  title: 'Scope',
  description: 'pets:read: GET /v1/pets and /v1/pets/{petId}; pets:write: POST /v1/pets'
})
const scopes = Type.Array(Ref(Scope), {
  minItems: 1,
  maxItems: 2,
  uniqueItems: true,
  description: 'What the key may do; both by default'
})

const limit = (window: string) =>
  Int64({ minimum: 1, maximum: 2_147_483_647, description: `Requests a ${window}; an enterprise account's own` })
const text = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: 255,
    pattern: STORABLE_TEXT,
    description: `${description}; no control characters or bidirectional overrides`
  })
const name = text('A label for the key')
const instant = (description: string) => Type.String({ format: 'date-time', description })
const EXTERNAL_ID = '^[A-Za-z0-9._:-]{1,255}$'
const externalId = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: EXTERNAL_ID,
  description: "The operator's own id of the customer, unique: A-Z, a-z, 0-9, '.', '_', ':' and '-'"
})
const cursor = Type.String({
  minLength: 1,
  maxLength: 512,
  description: 'Opaque position from a `Link: rel="next"` header of the same listing'
})
const pageSize = (what: string) =>
  Type.Integer({ minimum: 1, maximum: 100, default: 20, description: `${what} a page` })

/** A key as the admin API and `keys list --json` show it: never its secret. */
export const Key = Type.Object(
  {
    id: Int64({ description: 'The key' }),
    accountId: Int64({ description: 'The account whose plan and windows the key shares' }),
    prefix: Type.String({
      description: 'The readable start of the secret, shown in listings',
      examples: ['ask_3kT9aQ2x']
    }),
    name: Type.Union([name, Type.Null()]),
    scopes,
    plan: Ref(Plan),
    perMinute: Int64({ description: "Requests a minute, the account's" }),
    perDay: Int64({ description: "Requests a day, the account's" }),
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
    accountId: Type.Optional(Int64({ description: 'The account, by its id' })),
    externalId: Type.Optional({ ...externalId, description: 'The account, by its externalId' }),
    account: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        deprecated: true,
        description:
          "The account's id or externalId, refused when it is one account's id and another's externalId: send " +
          '`accountId` or `externalId`. At most one of the three; without any, the key gets an account of its ' +
          'own, with `plan`'
      })
    ),
    plan: Type.Optional(Ref(Plan)),
    name: Type.Optional(name),
    scopes: Type.Optional(scopes),
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
    scopes: Type.Optional(scopes),
    perMinute: Type.Optional(limit('minute')),
    perDay: Type.Optional(limit('day')),
    expiresAt: Type.Optional(Type.Union([instant('When the key stops working'), Type.Null()]))
  },
  { $id: 'KeyChanges', title: 'KeyChanges', additionalProperties: false, minProperties: 1 }
)

export const KeyParams = Type.Object({ id: Int64({ description: 'The key' }) })

export const KeyListQuery = Type.Object({
  limit: Type.Optional(pageSize('Keys')),
  cursor: Type.Optional(cursor)
})

/** Whom a change is made for, recorded in its audit event beside the authenticated actor. */
export const AuditActorHeaders = Type.Object({
  'x-audit-actor': Type.Optional(
    text(
      "Whom the change is made for (a sign-up system's user), kept in the audit event as `onBehalfOf`; the actor " +
        'is always the authenticated operator'
    )
  )
})

/** The customer: plan and both windows, shared by all of its keys. */
export const Account = Type.Object(
  {
    id: Int64({ description: 'The account' }),
    externalId: Type.Union([externalId, Type.Null()]),
    name: Type.Union([text('A label for the account'), Type.Null()]),
    plan: Ref(Plan),
    perMinute: Int64({ description: 'Requests a minute, for all of its keys together' }),
    perDay: Int64({ description: 'Requests a day, for all of its keys together' }),
    createdAt: instant('When the account was made'),
    closedAt: Type.Union([instant('When the account was closed and its keys revoked'), Type.Null()])
  },
  { $id: 'Account', title: 'Account', additionalProperties: false }
)

export const NewAccount = Type.Object(
  {
    externalId: Type.Optional(externalId),
    name: Type.Optional(text('A label for the account')),
    plan: Ref(Plan),
    perMinute: Type.Optional(limit('minute')),
    perDay: Type.Optional(limit('day'))
  },
  { $id: 'NewAccount', title: 'NewAccount', additionalProperties: false }
)

export const AccountChanges = Type.Object(
  {
    name: Type.Optional(Type.Union([text('A label for the account'), Type.Null()])),
    plan: Type.Optional(Ref(Plan)),
    perMinute: Type.Optional(limit('minute')),
    perDay: Type.Optional(limit('day'))
  },
  { $id: 'AccountChanges', title: 'AccountChanges', additionalProperties: false, minProperties: 1 }
)

export const AccountParams = Type.Object({ id: Int64({ description: 'The account' }) })

export const AccountListQuery = Type.Object({
  limit: Type.Optional(pageSize('Accounts')),
  cursor: Type.Optional(cursor),
  externalId: Type.Optional(externalId)
})

/** One change to an account or a key, appended in the transaction of the change; never changed after. */
export const AuditEvent = Type.Object(
  {
    id: Int64({ description: 'The event; later events have larger ids' }),
    at: instant('When the change was made'),
    actor: Type.String({
      description:
        'Who made the change, as the service authenticated it: `bootstrap` (ADMIN_TOKEN) or `operator:<name>` on ' +
        "the admin API, `key:<prefix>` for a key managing its account's keys, `cli:<OS user>` on the CLI"
    }),
    action: Type.String({
      description:
        'account.created, account.changed, account.closed, key.created, key.changed, key.revoked, key.rotated, ' +
        'operator.created or operator.revoked',
      examples: ['key.revoked']
    }),
    accountId: NullableInt64({ description: 'The account changed, or the key’s' }),
    keyId: NullableInt64({ description: 'The key changed, if a key was' }),
    changes: Type.Record(
      Type.String(),
      Type.Object({ before: Type.Unknown(), after: Type.Unknown() }, { additionalProperties: false }),
      { description: 'Each field that changed, before and after; never a secret or its hash' }
    ),
    requestId: Type.Union([Type.String(), Type.Null()], { description: 'The admin request that made it' }),
    onBehalfOf: Type.Union([Type.String(), Type.Null()], {
      description: 'Whom the actor said it acted for (X-Audit-Actor), as it said it; never who made the change'
    })
  },
  { $id: 'AuditEvent', title: 'AuditEvent', additionalProperties: false }
)

export const EventListQuery = Type.Object({
  accountId: Type.Optional(Int64({ description: 'Only events of this account' })),
  keyId: Type.Optional(Int64({ description: 'Only events of this key' })),
  since: Type.Optional(instant('Only events at or after this instant')),
  limit: Type.Optional(pageSize('Events')),
  cursor: Type.Optional(cursor)
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

/** An account's windows as they stand, the shape of `GET /v1/rate_limit`'s, and its keys' running bans. */
export const AccountWindows = Type.Object(
  {
    windows: Type.Array(
      rateLimitWindow(
        'Units counted in the window so far, all keys together; includes units an instance has leased ' +
          'ahead and not yet served, so it may run ahead of the requests served by up to a second of traffic'
      ),
      { description: "The account's limits in force, shortest window first" }
    ),
    credits: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: "The account's prepaid units left; null when it has no credits"
    }),
    bans: Type.Array(
      Type.Object(
        {
          keyId: Int64({ description: 'The banned key' }),
          prefix: Type.String({ description: "The readable start of the key's secret" }),
          bannedUntil: instant('When the ban ends')
        },
        { additionalProperties: false }
      ),
      { description: 'The keys of the account banned now for sending while refused, in ascending id order' }
    )
  },
  { $id: 'AccountWindows', title: 'AccountWindows', additionalProperties: false }
)

const Role = Type.Unsafe<'viewer' | 'operator' | 'admin'>({
  $id: 'Role',
  type: 'string',
  enum: ['viewer', 'operator', 'admin'],
  title: 'Role',
  description: 'viewer: reads only; operator: also changes accounts, keys and plans; admin: also operators'
})

/** An operator of the admin API: never its token. */
export const Operator = Type.Object(
  {
    id: Int64({ description: 'The operator' }),
    name: Type.String({ description: 'Its name; its changes are recorded as `operator:<name>`' }),
    role: Ref(Role),
    prefix: Type.String({ description: "The readable start of the operator's token" }),
    createdAt: instant('When the operator was made'),
    revokedAt: Type.Union([instant('When its token stopped working'), Type.Null()])
  },
  { $id: 'Operator', title: 'Operator', additionalProperties: false }
)

export const IssuedOperator = Type.Object(
  {
    ...Operator.properties,
    token: Type.String({ description: 'The bearer token: shown only in this answer, stored only as its hash' })
  },
  { $id: 'IssuedOperator', title: 'IssuedOperator', additionalProperties: false }
)

export const NewOperator = Type.Object(
  {
    name: Type.String({
      pattern: '^[a-z0-9][a-z0-9._-]{0,62}$',
      description: '1 to 63 characters of a-z, 0-9, ".", "_" and "-", starting with a letter or digit; unique'
    }),
    role: Ref(Role)
  },
  { $id: 'NewOperator', title: 'NewOperator', additionalProperties: false }
)

export const OperatorParams = Type.Object({ id: Int64({ description: 'The operator' }) })

/** Who the request's token is. */
export const Whoami = Type.Object(
  {
    actor: Type.String({ description: '`bootstrap` for ADMIN_TOKEN, else `operator:<name>`' }),
    name: Type.String({ description: "The operator's name, or `bootstrap`" }),
    role: Ref(Role)
  },
  { $id: 'Whoami', title: 'Whoami', additionalProperties: false }
)

export const adminComponents = [
  Plan,
  Role,
  Operator,
  IssuedOperator,
  NewOperator,
  Whoami,
  Scope,
  Key,
  IssuedKey,
  NewKey,
  KeyChanges,
  Usage,
  Account,
  AccountWindows,
  NewAccount,
  AccountChanges,
  AuditEvent,
  ErrorBody
]

export type NewKey = Static<typeof NewKey>
export type KeyChanges = Static<typeof KeyChanges>
