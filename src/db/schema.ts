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
  rate_limit_counters: RateLimitCountersTable
  idempotency_keys: IdempotencyKeysTable
  api_key_usage: ApiKeyUsageTable
}

export type PetRow = Selectable<PetsTable>
export type NewPetRow = Insertable<PetsTable>

export type PlanName = 'free' | 'pro' | 'business' | 'enterprise'

export interface PlansTable {
  name: PlanName
  per_minute: number | null
  per_day: number | null
}

export interface ApiKeysTable {
  id: Generated<bigint>
  prefix: string
  secret_hash: Buffer
  name: string | null
  plan: PlanName
  per_minute: number | null
  per_day: number | null
  created_at: Generated<Date>
  expires_at: Date | null
  revoked_at: Date | null
}

export interface RateLimitCountersTable {
  subject: string
  minute_start: Date
  minute_used: number
  minute_limit: number
  day_start: Date
  day_used: number
  day_limit: number | null
  wanted: number
  last_grant: number
  refused: number
  refused_until: Date | null
  ban_after: number | null
  ban_seconds: number | null
  banned_until: Date | null
  updated_at: Date
  returned: Generated<number>
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

export interface ApiKeyUsageTable {
  api_key_id: bigint
  /** The UTC day, as Postgres returns a date: YYYY-MM-DD. */
  day: ColumnType<string, string, string>
  admitted: ColumnType<bigint, bigint | number, bigint | number>
  refused: ColumnType<bigint, bigint | number, bigint | number>
}
