import { Type, type Static } from '@sinclair/typebox'
import { ErrorBody } from '../schemas/error.js'
import { Int64, NullableInt64 } from '../schemas/int64.js'
import { KeyRotation, keyName, Scope, scopes } from '../schemas/keys.js'
import { STORABLE_TEXT } from '../schemas/pets.js'
import { rateLimitWindow } from '../schemas/rate-limit.js'
import { Ref } from '../schemas/ref.js'
import { Instant } from '../schemas/instant.js'
import { ROUTE_NAME } from '../limits/route-costs.js'
import { MAX_LIMIT } from '../services/plans.js'
import type { OperatorRole } from '../db/schema.js'
import { OPERATOR_ROLES } from '../repositories/operators.js'

const PlanName = Type.String({
  $id: 'PlanName',
  pattern: '^[a-z0-9-]{1,40}$',
  title: 'PlanName',
  description:
    'The name of a plan of GET /admin/v1/plans: 1 to 40 lowercase letters, digits and hyphens. The seed has free, pro, ' +
    'business and enterprise',
  examples: ['pro']
})

const WINDOW_NAMES = ['second', 'minute', 'hour', 'day', 'month'] as const
const LimitWindow = Type.Unsafe<(typeof WINDOW_NAMES)[number]>({
  type: 'string',
  enum: [...WINDOW_NAMES],
  description:
    "second, minute, hour, day or month: the UTC second, minute, hour, day or calendar month (a plan's month may " +
    "follow the account's cycleAnchor instead: `anchor`)"
})
const wholeLimit = (description: string) => Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description })
const algorithm = Type.Union([Type.Literal('fixed'), Type.Literal('bucket')], {
  description:
    'fixed: at most `limit` units in each window; bucket: a token bucket refilled by `limit` units a window, ' +
    'evenly, holding at most `burst`'
})

const limitFields = {
  window: LimitWindow,
  algorithm,
  limit: Type.Integer({ description: 'Units a window' }),
  burst: Type.Union([Type.Integer(), Type.Null()], { description: "A bucket's capacity; null: its limit" })
}
const ANCHORS = ['calendar', 'account'] as const
const anchorDescription =
  "Where the month starts: calendar, the first of each UTC calendar month; account, the account's cycleAnchor, " +
  'each period starting at the anchor plus a whole number of months (the last day of a shorter month for a ' +
  'later day: 31 January, 28 or 29 February, 31 March). account only on a fixed month'

/** One limit of a plan as the API shows it. */
const Limit = Type.Object(
  {
    ...limitFields,
    anchor: Type.Optional(
      Type.Unsafe<'account'>({
        type: 'string',
        enum: ['account'],
        description: `${anchorDescription}. Absent: calendar`
      })
    )
  },
  { $id: 'Limit', title: 'Limit', additionalProperties: false }
)

/** One limit of a plan as the API shows it: enforced, or a shadow. */
const PlanLimit = Type.Object(
  {
    ...Limit.properties,
    shadow: Type.Boolean({
      description: 'A shadow limit: counted and reported like the others, never refusing (docs/rate-limits.md)'
    })
  },
  { $id: 'PlanLimit', title: 'PlanLimit', additionalProperties: false }
)

const limitInputFields = {
  window: LimitWindow,
  algorithm: Type.Optional({ ...algorithm, description: `${algorithm.description as string}; fixed when absent` }),
  limit: wholeLimit('Units a window'),
  burst: Type.Optional(wholeLimit("A bucket's capacity; its limit when absent"))
}

/** One limit of a plan as a request gives it. */
const LimitInput = Type.Object(
  {
    ...limitInputFields,
    shadow: Type.Optional(
      Type.Boolean({
        description: 'true: a shadow limit, counted and reported, never refusing; false when absent'
      })
    ),
    anchor: Type.Optional(
      Type.Unsafe<(typeof ANCHORS)[number]>({
        type: 'string',
        enum: [...ANCHORS],
        description: `${anchorDescription}; calendar when absent`
      })
    )
  },
  { $id: 'LimitInput', title: 'LimitInput', additionalProperties: false }
)

const costsDescription =
  'Units a request of the route spends in every limit, by route as the public OpenAPI document names it ' +
  '(`POST /v1/pets`, `GET /v1/pets/{petId}`), or a route of another service that asks through POST /v1/decisions ' +
  'or GET /v1/authorize (`GET /v1/orders`, `GET /v1/orders/{id}`: `{name}` stands for one path segment); ' +
  'a route not named costs 1'
const ROUTE = ROUTE_NAME.source

/** A plan: its limits and its costs per route. */
export const Plan = Type.Object(
  {
    name: Ref(PlanName),
    limits: Type.Array(Ref(PlanLimit), {
      description: 'At most one enforced and one shadow limit per window, shortest window first, enforced first'
    }),
    costs: Type.Record(Type.String(), Type.Integer(), { description: costsDescription }),
    createdAt: Instant('When the plan was made'),
    updatedAt: Instant('When its limits or costs last changed')
  },
  { $id: 'Plan', title: 'Plan', additionalProperties: false }
)

export const PlanDefinition = Type.Object(
  {
    limits: Type.Array(Ref(LimitInput), {
      minItems: 1,
      maxItems: 10,
      description: '1 to 10 limits, at most one enforced and one shadow limit per window'
    }),
    costs: Type.Optional(
      Type.Record(Type.String({ pattern: ROUTE }), Type.Integer({ minimum: 0, maximum: 1000 }), {
        description: costsDescription
      })
    )
  },
  { $id: 'PlanDefinition', title: 'PlanDefinition', additionalProperties: false }
)

export const PlanParams = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, description: 'The plan' })
})

/** An account's own limit in place of its plan's for one window, for good or until an instant. */
const Override = Type.Object(
  {
    ...limitFields,
    until: Type.Union([Instant(), Type.Null()], {
      description: 'When the override ends, by the database clock; null: for good'
    })
  },
  { $id: 'Override', title: 'Override', additionalProperties: false }
)

const OverrideInput = Type.Object(
  {
    ...limitInputFields,
    until: Type.Optional(
      Type.Union([Instant(), Type.Null()], {
        description: 'When the override ends, by the database clock: an instant to come; null or absent: for good'
      })
    )
  },
  { $id: 'OverrideInput', title: 'OverrideInput', additionalProperties: false }
)
const overrides = Type.Array(Ref(OverrideInput), {
  maxItems: 5,
  description: "Limits that replace the plan's for their windows, one per window; [] removes them all"
})

const CREDIT_WINDOWS = ['day', 'month'] as const
const Refill = Type.Object(
  {
    amount: Type.Integer({ minimum: 1, maximum: 1_000_000_000_000, description: 'Units the balance rises to' }),
    every: Type.Unsafe<(typeof CREDIT_WINDOWS)[number]>({
      type: 'string',
      enum: [...CREDIT_WINDOWS],
      description: 'At the start of each UTC day or calendar month'
    })
  },
  {
    additionalProperties: false,
    description: 'At the start of each window the balance rises to `amount` (never falls to it)'
  }
)

/** An account's prepaid balance: each admitted request spends its cost; at zero, 429 `credits_exhausted`. */
export const Credits = Type.Object(
  {
    remaining: Type.Integer({ minimum: 0, description: 'Units left' }),
    refill: Type.Union(
      [
        Type.Object(
          {
            amount: Type.Integer({ description: 'Units the balance rises to' }),
            every: Refill.properties.every
          },
          { additionalProperties: false }
        ),
        Type.Null()
      ],
      { description: 'At the start of each UTC day or calendar month the balance rises to `amount`; null: none' }
    ),
    refilledAt: Instant('When the balance was last refilled, or started')
  },
  { $id: 'Credits', title: 'Credits', additionalProperties: false }
)

export const CreditChange = Type.Object(
  {
    add: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000_000_000,
        description: 'Units added to the balance, starting one at 0'
      })
    ),
    set: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 1_000_000_000_000, description: 'The balance, whatever it was' })
    ),
    refill: Type.Optional(Type.Union([Refill, Type.Null()], { description: 'null: no refill' }))
  },
  {
    $id: 'CreditChange',
    title: 'CreditChange',
    additionalProperties: false,
    minProperties: 1,
    description: '`add` or `set` (not both), and or a `refill`'
  }
)

const limit = (window: string) =>
  Int64({
    minimum: 1,
    maximum: MAX_LIMIT,
    description: `Requests a ${window}: the account's own ${window} limit, for good (an override of the ${window})`
  })
const text = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: 255,
    pattern: STORABLE_TEXT,
    description: `${description}; no control characters or bidirectional overrides`
  })
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

/** The operator's own data on a key or an account, kept and returned as given; never sent to key holders. */
const Metadata = Type.Record(Type.String(), Type.Unknown(), {
  $id: 'Metadata',
  title: 'Metadata',
  description:
    'A JSON object of at most 2,048 bytes as compact JSON, for your own systems (a customer id, a note); ' +
    'integers beyond ±9007199254740991 are refused (send them as strings); key order may change'
})

const cidr = Type.String({ minLength: 1, maxLength: 64, examples: ['203.0.113.0/24'] })
const allowedAddresses = (description: string) =>
  Type.Union(
    [
      Type.Array(cidr, {
        maxItems: 20,
        description:
          'Up to 20 IPv4 or IPv6 CIDR ranges; a bare address is one address (/32 or /128), and ' +
          '`::ffff:a.b.c.d` ranges are the IPv4 ranges they map'
      }),
      Type.Null()
    ],
    { description }
  )

/** A key as the admin API and `keys list --json` show it: never its secret. */
export const Key = Type.Object(
  {
    id: Int64({ description: 'The key' }),
    accountId: Int64({ description: 'The account whose plan and windows the key shares' }),
    prefix: Type.String({
      description: 'The readable start of the secret, shown in listings',
      examples: ['ask_3kT9aQ2x']
    }),
    name: Type.Union([keyName, Type.Null()]),
    scopes,
    plan: Ref(PlanName),
    perMinute: NullableInt64({
      description: "Units a minute in force for the key's account: its override's, else its plan's; null: none"
    }),
    perDay: NullableInt64({
      description: "Units a day in force for the key's account: its override's, else its plan's; null: none"
    }),
    createdAt: Instant('When the key was issued'),
    expiresAt: Type.Union([Instant('When the key stops working'), Type.Null()]),
    revokedAt: Type.Union([Instant('When the key was revoked'), Type.Null()]),
    previousPrefix: Type.Union([Type.String(), Type.Null()], {
      description: 'The prefix of the secret the last rotation replaced, while it still works; else null'
    }),
    previousSecretExpiresAt: Type.Union([Instant(), Type.Null()], {
      description:
        "When the secret the last rotation replaced stops working (the end of the rotation's grace period, by " +
        "the database's clock, or the key's expiry when that comes first); null when no previous secret works: " +
        'none in its grace, or the key revoked, expired or its account closed'
    }),
    allowedAddresses: allowedAddresses(
      'The client addresses the key may be used from, in canonical form; from elsewhere it gets 403 ' +
        '`address_not_allowed` and spends nothing. null: any address'
    ),
    metadata: Ref(Metadata)
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
        pattern: EXTERNAL_ID,
        deprecated: true,
        description:
          "The account's id or externalId, refused when it is one account's id and another's externalId: send " +
          '`accountId` or `externalId`. At most one of the three; without any, the key gets an account of its ' +
          'own, with `plan`'
      })
    ),
    plan: Type.Optional(Ref(PlanName)),
    name: Type.Optional(keyName),
    scopes: Type.Optional({ ...scopes, description: 'What the key may do; pets:read and pets:write by default' }),
    perMinute: Type.Optional(limit('minute')),
    perDay: Type.Optional(limit('day')),
    expiresAt: Type.Optional(Instant('When the key stops working')),
    allowedAddresses: Type.Optional(
      allowedAddresses('The client addresses the key may be used from; null, [] or absent: any address')
    ),
    metadata: Type.Optional(Ref(Metadata))
  },
  { $id: 'NewKey', title: 'NewKey', additionalProperties: false }
)

export const KeyChanges = Type.Object(
  {
    plan: Type.Optional(Ref(PlanName)),
    name: Type.Optional(Type.Union([keyName, Type.Null()])),
    scopes: Type.Optional(scopes),
    perMinute: Type.Optional(limit('minute')),
    perDay: Type.Optional(limit('day')),
    expiresAt: Type.Optional(Type.Union([Instant('When the key stops working'), Type.Null()])),
    allowedAddresses: Type.Optional(
      allowedAddresses('Replaces the client addresses the key may be used from; null or []: any address')
    ),
    metadata: Type.Optional(Ref(Metadata, { description: "Replaces the key's metadata whole; {} removes it" }))
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

const cycleAnchor = (description: string) =>
  Instant(
    `${description}. An RFC 3339 instant, past or ahead: the periods are the anchor plus k months for every ` +
      'integer k, in UTC'
  )

/** The customer: its plan, overrides and credits, shared by all of its keys. */
export const Account = Type.Object(
  {
    id: Int64({ description: 'The account' }),
    externalId: Type.Union([externalId, Type.Null()]),
    name: Type.Union([text('A label for the account'), Type.Null()]),
    plan: Ref(PlanName),
    perMinute: NullableInt64({
      description: "Units a minute in force, for all of its keys together: its override's, else its plan's; null: none"
    }),
    perDay: NullableInt64({
      description: "Units a day in force, for all of its keys together: its override's, else its plan's; null: none"
    }),
    overrides: Type.Array(Ref(Override), {
      description:
        "Its own limits in place of its plan's, shortest window first; one past its `until` no longer applies"
    }),
    credits: Type.Union([Ref(Credits), Type.Null()], { description: 'Its prepaid balance; null: none to spend down' }),
    metadata: Ref(Metadata),
    cycleAnchor: cycleAnchor("Where its months start, for a plan whose month follows it (a limit's `anchor`)"),
    createdAt: Instant('When the account was made'),
    closedAt: Type.Union([Instant('When the account was closed and its keys revoked'), Type.Null()])
  },
  { $id: 'Account', title: 'Account', additionalProperties: false }
)

export const NewAccount = Type.Object(
  {
    externalId: Type.Optional(externalId),
    name: Type.Optional(text('A label for the account')),
    plan: Ref(PlanName),
    perMinute: Type.Optional(limit('minute')),
    perDay: Type.Optional(limit('day')),
    overrides: Type.Optional(overrides),
    metadata: Type.Optional(Ref(Metadata)),
    cycleAnchor: Type.Optional(
      cycleAnchor("Where its months start, for a plan whose month follows it; the account's creation when absent")
    )
  },
  { $id: 'NewAccount', title: 'NewAccount', additionalProperties: false }
)

export const AccountChanges = Type.Object(
  {
    name: Type.Optional(Type.Union([text('A label for the account'), Type.Null()])),
    plan: Type.Optional(Ref(PlanName)),
    perMinute: Type.Optional(limit('minute')),
    perDay: Type.Optional(limit('day')),
    overrides: Type.Optional(overrides),
    metadata: Type.Optional(Ref(Metadata, { description: "Replaces the account's metadata whole; {} removes it" })),
    cycleAnchor: Type.Optional(
      cycleAnchor(
        'Where its months start from now on; the month under way is then the period of the new anchor that ' +
          'holds now, counted afresh'
      )
    )
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
    at: Instant('When the change was made'),
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
  since: Type.Optional(Instant('Only events at or after this instant')),
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
          bannedUntil: Instant('When the ban ends')
        },
        { additionalProperties: false }
      ),
      { description: 'The keys of the account banned now for sending while refused, in ascending id order' }
    )
  },
  { $id: 'AccountWindows', title: 'AccountWindows', additionalProperties: false }
)

const Role = Type.Unsafe<OperatorRole>({
  $id: 'Role',
  type: 'string',
  enum: [...OPERATOR_ROLES],
  title: 'Role',
  description:
    'viewer: reads only; operator: also changes accounts, keys and plans; admin: also operators; ' +
    'service: calls POST /v1/decisions on the public API, and nothing on this one'
})

/** An operator of the admin API: never its token. */
export const Operator = Type.Object(
  {
    id: Int64({ description: 'The operator' }),
    name: Type.String({ description: 'Its name; its changes are recorded as `operator:<name>`' }),
    role: Ref(Role),
    prefix: Type.String({ description: "The readable start of the operator's token" }),
    createdAt: Instant('When the operator was made'),
    revokedAt: Type.Union([Instant('When its token stopped working'), Type.Null()])
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
  PlanName,
  Limit,
  PlanLimit,
  LimitInput,
  Plan,
  PlanDefinition,
  Override,
  OverrideInput,
  Credits,
  CreditChange,
  Role,
  Operator,
  IssuedOperator,
  NewOperator,
  Whoami,
  Scope,
  Metadata,
  Key,
  IssuedKey,
  NewKey,
  KeyChanges,
  KeyRotation,
  Usage,
  Account,
  AccountWindows,
  NewAccount,
  AccountChanges,
  AuditEvent,
  ErrorBody
]

export type NewKey = Static<typeof NewKey>
export type PlanDefinition = Static<typeof PlanDefinition>
export type CreditChange = Static<typeof CreditChange>
export type KeyChanges = Static<typeof KeyChanges>
