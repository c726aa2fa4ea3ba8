// The tables and views of a database migrated to the head, as kysely-codegen reads them: written by
// `npm run db:schema`, checked by test/db/schema-file.test.ts. Do not edit: src/db/schema.ts refines them.
import type { ColumnType } from 'kysely'

export type ArrayType<T> = ArrayTypeImpl<T> extends (infer U)[] ? U[] : ArrayTypeImpl<T>

export type ArrayTypeImpl<T> = T extends ColumnType<infer S, infer I, infer U> ? ColumnType<S[], I[], U[]> : T[]

export type Generated<T> =
  T extends ColumnType<infer S, infer I, infer U> ? ColumnType<S, I | undefined, U> : ColumnType<T, T | undefined, T>

export type Json = JsonValue

export type JsonArray = JsonValue[]

export type JsonObject = {
  [x: string]: JsonValue | undefined
}

export type JsonPrimitive = boolean | number | string | null

export type JsonValue = JsonArray | JsonObject | JsonPrimitive

export interface AccountCounters {
  account_id: bigint
  algorithms: Generated<string[]>
  levels: Generated<number[]>
  notified: Generated<number[]>
  started_ats: Generated<ArrayType<Date>>
  used: Generated<ArrayType<bigint>>
  windows: Generated<string[]>
}

export interface AccountCredits {
  account_id: bigint
  refill_amount: bigint | null
  refill_every: string | null
  refilled_at: Generated<Date>
  remaining: bigint
  updated_at: Generated<Date>
}

export interface AccountLimitOverrides {
  account_id: bigint
  algorithm: Generated<string>
  burst: number | null
  limit: number
  until: Date | null
  window: string
}

export interface Accounts {
  closed_at: Date | null
  created_at: Generated<Date>
  cycle_anchor: Generated<Date | null>
  external_id: string | null
  id: Generated<bigint>
  metadata: Generated<Json>
  name: string | null
  plan: string
}

export interface AdminCredentials {
  registered_at: Generated<Date>
  token_hash: Buffer
}

export interface ApiKeyBans {
  api_key_id: bigint
  ban_after: number | null
  ban_seconds: number | null
  banned_until: Date | null
  refused: Generated<number>
  refused_until: Date | null
  updated_at: Date
}

export interface ApiKeyExpiryNotices {
  api_key_id: bigint
  expires_at: Date
  sent_at: Generated<Date>
}

export interface ApiKeyRouteUsage {
  admitted: Generated<bigint>
  api_key_id: bigint
  hour: Date
  refused: Generated<bigint>
  route: string
  units: Generated<bigint>
}

export interface ApiKeys {
  account_id: bigint
  allowed_addresses: string[] | null
  created_at: Generated<Date>
  expires_at: Date | null
  id: Generated<bigint>
  metadata: Generated<Json>
  name: string | null
  prefix: string
  previous_prefix: string | null
  previous_secret_expires_at: Date | null
  previous_secret_hash: Buffer | null
  revoked_at: Date | null
  scopes: Generated<string[]>
  secret_hash: Buffer
}

export interface ApiKeyUsage {
  admitted: Generated<bigint>
  api_key_id: bigint
  hour: Date
  refused: Generated<bigint>
  units: Generated<bigint>
}

export interface AuditEvents {
  account_id: bigint | null
  action: string
  actor: string
  at: Generated<Date>
  changes: Generated<Json>
  id: Generated<bigint>
  key_id: bigint | null
  on_behalf_of: string | null
  request_id: string | null
}

export interface AuditRetention {
  days: number
  only_row: Generated<boolean>
}

export interface IdempotencyKeys {
  api_key_id: bigint
  created_at: Date
  expires_at: Date
  key: string
  pet_id: bigint
  request_hash: Buffer
}

export interface LimitCounters {
  account_id: bigint | null
  algorithm: string | null
  level: number | null
  notified: number | null
  started_at: Date | null
  used: bigint | null
  window: string | null
}

export interface Operators {
  created_at: Generated<Date>
  id: Generated<bigint>
  name: string
  prefix: string
  revoked_at: Date | null
  role: string
  token_hash: Buffer
}

export interface Pets {
  category_id: bigint
  created_at: Generated<Date>
  id: Generated<bigint>
  name: string
  status: string | null
}

export interface PlanCosts {
  cost: number
  plan: string
  route: string
}

export interface PlanLimits {
  algorithm: Generated<string>
  anchor: Generated<string>
  burst: number | null
  limit: number
  plan: string
  shadow: Generated<boolean>
  window: string
}

export interface Plans {
  created_at: Generated<Date>
  name: string
  updated_at: Generated<Date>
}

export interface PlanWindows {
  account_months: boolean[]
  algorithms: string[]
  anchored: boolean
  capacities: number[]
  limits: number[]
  plan: string
  shadows: boolean[]
  windows: string[]
}

export interface ServiceClock {
  at: Date
  one: Generated<boolean>
}

export interface ServiceSecrets {
  name: string
  value: Buffer
}

export interface UsageReportedHours {
  hour: Date
  reported_at: Generated<Date>
}

export interface WebhookDeliveries {
  attempts: Generated<number>
  created_at: Generated<Date>
  endpoint_id: bigint
  event_id: bigint
  finished_at: Date | null
  last_attempt_at: Date | null
  last_response: string | null
  last_status: number | null
  next_attempt_at: Generated<Date>
  status: Generated<string>
}

export interface WebhookEndpoints {
  created_at: Generated<Date>
  description: string | null
  events: string[]
  failing_since: Date | null
  id: Generated<bigint>
  paused_at: Date | null
  previous_secret: string | null
  previous_secret_until: Date | null
  secret: string
  updated_at: Generated<Date>
  url: string
}

export interface WebhookEvents {
  account_id: bigint | null
  at: Generated<Date>
  data: Json
  id: Generated<bigint>
  traceparent: string | null
  type: string
}

export interface DB {
  account_counters: AccountCounters
  account_credits: AccountCredits
  account_limit_overrides: AccountLimitOverrides
  accounts: Accounts
  admin_credentials: AdminCredentials
  api_key_bans: ApiKeyBans
  api_key_expiry_notices: ApiKeyExpiryNotices
  api_key_route_usage: ApiKeyRouteUsage
  api_key_usage: ApiKeyUsage
  api_keys: ApiKeys
  audit_events: AuditEvents
  audit_retention: AuditRetention
  idempotency_keys: IdempotencyKeys
  limit_counters: LimitCounters
  operators: Operators
  pets: Pets
  plan_costs: PlanCosts
  plan_limits: PlanLimits
  plan_windows: PlanWindows
  plans: Plans
  service_clock: ServiceClock
  service_secrets: ServiceSecrets
  usage_reported_hours: UsageReportedHours
  webhook_deliveries: WebhookDeliveries
  webhook_endpoints: WebhookEndpoints
  webhook_events: WebhookEvents
}
