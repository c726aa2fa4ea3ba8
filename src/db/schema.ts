import type { ColumnType, Generated, Insertable, Selectable } from 'kysely'
import type * as Tables from './tables.generated.js'

/**
 * A generated table with some of its columns given the domain's types, which the catalog cannot
 * know (a text column's allowed values, what a jsonb holds, what an insert may pass). Naming a column
 * the table does not have fails to compile, so a column dropped by a migration is dropped here too.
 */
type Refine<Table, Domain extends { [K in keyof Domain]: K extends keyof Table ? unknown : never }> = {
  [K in keyof Table]: K extends keyof Domain ? Domain[K] : Table[K]
}

/** Every table and view, as tables.generated.ts reads them from a migrated database, refined below. */
export interface Database {
  account_counters: AccountCountersTable
  account_credits: AccountCreditsTable
  account_limit_overrides: AccountLimitOverridesTable
  accounts: AccountsTable
  admin_credentials: Tables.AdminCredentials
  api_key_bans: Tables.ApiKeyBans
  api_key_expiry_notices: Tables.ApiKeyExpiryNotices
  api_key_route_usage: ApiKeyRouteUsageTable
  api_key_usage: ApiKeyUsageTable
  api_keys: ApiKeysTable
  audit_events: AuditEventsTable
  audit_retention: Tables.AuditRetention
  idempotency_keys: Tables.IdempotencyKeys
  limit_counters: LimitCountersView
  operators: OperatorsTable
  pets: PetsTable
  plan_costs: Tables.PlanCosts
  plan_limits: PlanLimitsTable
  plans: Tables.Plans
  service_clock: Tables.ServiceClock
  service_secrets: Tables.ServiceSecrets
  usage_reported_hours: Tables.UsageReportedHours
  webhook_deliveries: WebhookDeliveriesTable
  webhook_endpoints: Tables.WebhookEndpoints
  webhook_events: WebhookEventsTable
}

export type PetStatus = 'available' | 'pending' | 'sold'

export type PetsTable = Refine<
  Tables.Pets,
  {
    category_id: bigint | string
    status: PetStatus | null
    created_at: ColumnType<Date, never, never>
  }
>

export type PetRow = Selectable<PetsTable>
export type NewPetRow = Insertable<PetsTable>

/** A plan's name: 1 to 40 lowercase letters, digits and hyphens (plans_name_check in db/schema.sql). */
export type PlanName = string

export type LimitWindow = 'second' | 'minute' | 'hour' | 'day' | 'month'
export type LimitAlgorithm = 'fixed' | 'bucket'

/** One of a plan's limits: one per window; burst is a bucket's capacity, null: its limit. */
export type PlanLimitsTable = Refine<
  Tables.PlanLimits,
  {
    window: LimitWindow
    algorithm: Generated<LimitAlgorithm>
    anchor: Generated<'calendar' | 'account'>
  }
>

/** An account's own limit in place of its plan's for one window, for good or until an instant. */
export type AccountLimitOverridesTable = Refine<
  Tables.AccountLimitOverrides,
  {
    window: LimitWindow
    algorithm: Generated<LimitAlgorithm>
  }
>

/** Prepaid units that each admitted request spends, raised to refill_amount at the start of each refill window. */
export type AccountCreditsTable = Refine<
  Tables.AccountCredits,
  {
    remaining: bigint | string
    refill_amount: bigint | string | null
    refill_every: 'hour' | 'day' | 'month' | null
  }
>

/**
 * A key; after a rotation with a grace period, previous_* hold the secret replaced, which works until
 * previous_secret_expires_at. allowed_addresses: CIDR ranges in canonical form; null: any address.
 */
export type ApiKeysTable = Refine<
  Tables.ApiKeys,
  {
    scopes: ColumnType<Scope[], Scope[] | undefined, Scope[]>
    metadata: ColumnType<Metadata, string | undefined, string>
  }
>

/** The operator's own data on a key or an account: a JSON object of at most 2 KB, never read by the service. */
export type Metadata = Record<string, unknown>

export type Scope = 'pets:read' | 'pets:write' | 'keys:manage' | 'usage:read'

/** The customer: its plan's limits, its overrides and its credits are shared by all of its keys. */
export type AccountsTable = Refine<
  Tables.Accounts,
  {
    plan: PlanName
    metadata: ColumnType<Metadata, string | undefined, string>
  }
>

/** Append-only: the service's role reads, and appends only through append_audit_event. */
export type AuditEventsTable = Refine<
  Tables.AuditEvents,
  {
    changes: ColumnType<Record<string, unknown>, string, never>
  }
>

export type OperatorRole = 'viewer' | 'operator' | 'admin' | 'service'

export type OperatorsTable = Refine<Tables.Operators, { role: OperatorRole }>

/**
 * An account's counters, every window of it in one row, shortest window first. pg parses an int8[]
 * into text elements (src/db/connect.ts parses only int8 itself), so `used` holds strings when read.
 */
export type AccountCountersTable = Refine<
  Tables.AccountCounters,
  {
    windows: Generated<LimitWindow[]>
    algorithms: Generated<LimitAlgorithm[]>
    used: Generated<(bigint | string)[]>
  }
>

/** account_counters read as one row per account and window: a view's columns are never null here. */
export type LimitCountersView = Refine<
  Tables.LimitCounters,
  {
    account_id: bigint
    window: LimitWindow
    algorithm: LimitAlgorithm
    started_at: Date
    used: bigint | string
    level: number
    notified: number
  }
>

/** Requests of a key in one UTC hour: those admitted, those refused, and the units the admitted spent. */
export type ApiKeyUsageTable = Refine<
  Tables.ApiKeyUsage,
  {
    admitted: ColumnType<bigint, bigint | number, bigint | number>
    refused: ColumnType<bigint, bigint | number, bigint | number>
    units: ColumnType<bigint, bigint | number, bigint | number>
  }
>

/** Requests of a key in one UTC hour on one route, as each instance adds them every few seconds. */
export type ApiKeyRouteUsageTable = Refine<
  Tables.ApiKeyRouteUsage,
  {
    admitted: ColumnType<bigint, bigint | number, bigint | number>
    refused: ColumnType<bigint, bigint | number, bigint | number>
    units: ColumnType<bigint, bigint | number, bigint | number>
  }
>

/** The outbox: each event appended in the transaction of the change it reports, delivered later. */
export type WebhookEventsTable = Refine<
  Tables.WebhookEvents,
  {
    data: ColumnType<Record<string, unknown>, string, never>
  }
>

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed'

/** One event to one endpoint: made by the outbox's trigger, sent by the worker, kept with its last answer. */
export type WebhookDeliveriesTable = Refine<Tables.WebhookDeliveries, { status: Generated<WebhookDeliveryStatus> }>
