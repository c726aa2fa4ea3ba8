import type { ColumnType, Generated, Insertable, Selectable } from 'kysely'

export type PetStatus = 'available' | 'pending' | 'sold'

export interface PetsTable {
  id: Generated<bigint>
  name: string
  category_id: bigint | string
  status: PetStatus | null
  created_at: ColumnType<Date, never, never>
}

export interface ServiceSecretsTable {
  name: string
  value: Buffer
}

export interface Database {
  pets: PetsTable
  service_secrets: ServiceSecretsTable
  plans: PlansTable
  api_keys: ApiKeysTable
  account_counters: AccountCountersTable
  limit_counters: LimitCountersView
  service_clock: ServiceClockTable
  idempotency_keys: IdempotencyKeysTable
  api_key_usage: ApiKeyUsageTable
  accounts: AccountsTable
  api_key_bans: ApiKeyBansTable
  audit_events: AuditEventsTable
  webhook_events: WebhookEventsTable
  api_key_expiry_notices: ApiKeyExpiryNoticesTable
  plan_limits: PlanLimitsTable
  plan_costs: PlanCostsTable
  account_limit_overrides: AccountLimitOverridesTable
  account_credits: AccountCreditsTable
  operators: OperatorsTable
  admin_credentials: AdminCredentialsTable
  webhook_endpoints: WebhookEndpointsTable
  webhook_deliveries: WebhookDeliveriesTable
}

export type PetRow = Selectable<PetsTable>
export type NewPetRow = Insertable<PetsTable>

/** A plan's name: 1 to 40 lowercase letters, digits and hyphens (plans are data, migrations/0018). */
export type PlanName = string

export interface PlansTable {
  name: PlanName
  created_at: Generated<Date>
  updated_at: Generated<Date>
}

export type LimitWindow = 'second' | 'minute' | 'hour' | 'day' | 'month'
export type LimitAlgorithm = 'fixed' | 'bucket'

/** One of a plan's limits: one per window. */
export interface PlanLimitsTable {
  plan: string
  window: LimitWindow
  algorithm: Generated<LimitAlgorithm>
  limit: number
  /** A bucket's capacity; null: its limit. */
  burst: number | null
}

/** What a route costs on a plan, in units; a route not named costs 1. */
export interface PlanCostsTable {
  plan: string
  /** Method and path template as in the OpenAPI document: `POST /v1/pets`. */
  route: string
  cost: number
}

/** An account's own limit in place of its plan's for one window, for good or until an instant. */
export interface AccountLimitOverridesTable {
  account_id: bigint
  window: LimitWindow
  algorithm: Generated<LimitAlgorithm>
  limit: number
  burst: number | null
  until: Date | null
}

/** Prepaid units that each admitted request spends, raised to refill_amount at the start of each refill window. */
export interface AccountCreditsTable {
  account_id: bigint
  remaining: bigint | string
  refill_amount: bigint | string | null
  refill_every: 'hour' | 'day' | 'month' | null
  refilled_at: Generated<Date>
  updated_at: Generated<Date>
}

export interface ApiKeysTable {
  id: Generated<bigint>
  prefix: string
  secret_hash: Buffer
  name: string | null
  account_id: bigint
  scopes: ColumnType<Scope[], Scope[] | undefined, Scope[]>
  created_at: Generated<Date>
  expires_at: Date | null
  revoked_at: Date | null
  /** After a rotation with a grace period, the secret replaced: it works until previous_secret_expires_at. */
  previous_prefix: string | null
  previous_secret_hash: Buffer | null
  previous_secret_expires_at: Date | null
  /** CIDR ranges the key may be used from, in canonical form; null: any address. */
  allowed_addresses: string[] | null
  metadata: ColumnType<Metadata, string | undefined, string>
}

/** The operator's own data on a key or an account: a JSON object of at most 2 KB, never read by the service. */
export type Metadata = Record<string, unknown>

export type Scope = 'pets:read' | 'pets:write' | 'keys:manage' | 'usage:read'

/** The customer: its plan's limits, its overrides and its credits are shared by all of its keys. */
export interface AccountsTable {
  id: Generated<bigint>
  external_id: string | null
  name: string | null
  plan: PlanName
  created_at: Generated<Date>
  closed_at: Date | null
  metadata: ColumnType<Metadata, string | undefined, string>
}

/** A key's refusals in a row and its ban: the windows are its account's, the ban is the key's own. */
export interface ApiKeyBansTable {
  api_key_id: bigint
  refused: number
  refused_until: Date | null
  banned_until: Date | null
  ban_after: number | null
  ban_seconds: number | null
  updated_at: Date
}

/** Append-only: the service's role may insert and read, never update or delete. */
export interface AuditEventsTable {
  id: Generated<bigint>
  at: Generated<Date>
  actor: string
  action: string
  account_id: bigint | null
  key_id: bigint | null
  changes: ColumnType<Record<string, unknown>, string, never>
  request_id: string | null
  on_behalf_of: string | null
}

export type OperatorRole = 'viewer' | 'operator' | 'admin' | 'service'

/** The SHA-256 of each ADMIN_TOKEN, written only by the schema's owner (migrations/0029). */
export interface AdminCredentialsTable {
  token_hash: Buffer
  registered_at: Generated<Date>
}

export interface OperatorsTable {
  id: Generated<bigint>
  name: string
  role: OperatorRole
  prefix: string
  token_hash: Buffer
  created_at: Generated<Date>
  revoked_at: Date | null
}

/** An account's counters, every window of it in one row, shortest window first (migrations/0034). */
export interface AccountCountersTable {
  account_id: bigint
  windows: LimitWindow[]
  algorithms: LimitAlgorithm[]
  started_ats: Date[]
  used: (bigint | string)[]
  levels: number[]
  notified: number[]
}

/** account_counters read as one row per account and window. */
export interface LimitCountersView {
  account_id: bigint
  window: LimitWindow
  algorithm: LimitAlgorithm
  started_at: Date
  used: bigint | string
  level: number
  notified: number
}

/** Empty in service: a test or a drill fixes the database's clock at this instant. */
export interface ServiceClockTable {
  at: Date
  one: Generated<boolean>
}

export interface IdempotencyKeysTable {
  api_key_id: bigint
  key: string
  /** SHA-256 of the canonical validated request body. */
  request_hash: Buffer
  /** The pet the first request created, in the same transaction as this row: what repeats replay. */
  pet_id: bigint
  created_at: Date
  expires_at: Date
}

/** Requests of a key in one UTC hour: those admitted, those refused, and the units the admitted spent. */
export interface ApiKeyUsageTable {
  api_key_id: bigint
  /** The start of the UTC hour. */
  hour: Date
  admitted: ColumnType<bigint, bigint | number, bigint | number>
  refused: ColumnType<bigint, bigint | number, bigint | number>
  units: ColumnType<bigint, bigint | number, bigint | number>
}

/** The `key.expiring` events written: one per key and expiry (migrations/0036). */
export interface ApiKeyExpiryNoticesTable {
  api_key_id: bigint
  expires_at: Date
  sent_at: Generated<Date>
}

/** The outbox: each event appended in the transaction of the change it reports, delivered later. */
export interface WebhookEventsTable {
  id: Generated<bigint>
  type: string
  at: Generated<Date>
  account_id: bigint | null
  data: ColumnType<Record<string, unknown>, string, never>
}

/** Where events go: the URL, the event types it takes, the secret that signs (two during a rotation's grace). */
export interface WebhookEndpointsTable {
  id: Generated<bigint>
  url: string
  events: string[]
  description: string | null
  secret: string
  previous_secret: string | null
  previous_secret_until: Date | null
  paused_at: Date | null
  failing_since: Date | null
  created_at: Generated<Date>
  updated_at: Generated<Date>
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed'

/** One event to one endpoint: made by the outbox's trigger, sent by the worker, kept with its last answer. */
export interface WebhookDeliveriesTable {
  endpoint_id: bigint
  event_id: bigint
  status: Generated<WebhookDeliveryStatus>
  attempts: Generated<number>
  created_at: Generated<Date>
  next_attempt_at: Generated<Date>
  last_attempt_at: Date | null
  last_status: number | null
  last_response: string | null
  finished_at: Date | null
}
