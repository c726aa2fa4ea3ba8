import { sql, type Kysely } from 'kysely'
import type { Database } from '../db/schema.js'

/** One subject's request (or block of requests) to count against its windows. */
export interface QuotaRequest {
  /** `key:<id>` for an API key, `addr:<address>` for a client without a valid key. */
  subject: string
  /** The API key, whose usage the statement records; null for an address. */
  apiKeyId: bigint | null
  /** Start of the current UTC minute and UTC day, from the caller's clock. */
  minuteStart: Date
  dayStart: Date
  now: Date
  /** Units asked for: 1, or more to lease a block for admitting locally. */
  want: number
  /** Units leased earlier today that went unused, handed back to the day window. */
  returned: number
  perMinute: number
  /** null: no day window. */
  perDay: number | null
  /** Refusals past the first that lead to a ban; null: never banned. */
  banAfter: number | null
  banSeconds: number
}

export interface QuotaState {
  subject: string
  granted: number
  minuteStart: Date
  minuteUsed: number
  dayStart: Date
  dayUsed: number
  bannedUntil: Date | null
  /** This statement set the ban. */
  newlyBanned: boolean
}

/** Requests of one API key on one UTC day, decided without the database and reported later. */
export interface UsageReport {
  apiKeyId: bigint
  /** Start of the UTC day. */
  day: Date
  admitted: number
  refused: number
}

/**
 * Decides and counts the requests of many subjects against both their windows, records refusals and
 * bans, and adds each key's admitted and refused requests to its usage of the day with the `usage`
 * reports: one call of the count_requests function (migrations/0011), 1 round trip. The upsert
 * locks each subject's row, so concurrent callers on any instance queue on it and never over-admit.
 */
export async function countRequests(
  db: Kysely<Database>,
  requests: readonly QuotaRequest[],
  usage: readonly UsageReport[] = []
): Promise<QuotaState[]> {
  if (requests.length === 0 && usage.length === 0) return []
  const column = <T>(read: (request: QuotaRequest) => T) => requests.map(read)
  const reported = <T>(read: (report: UsageReport) => T) => usage.map(read)
  const { rows } = await sql<QuotaState>`
    SELECT * FROM count_requests(
      ${column((r) => r.subject)}::text[], ${column((r) => r.apiKeyId)}::bigint[],
      ${column((r) => r.minuteStart)}::timestamptz[], ${column((r) => r.dayStart)}::timestamptz[],
      ${column((r) => r.now)}::timestamptz[], ${column((r) => r.want)}::integer[],
      ${column((r) => r.returned)}::integer[], ${column((r) => r.perMinute)}::integer[],
      ${column((r) => r.perDay)}::integer[], ${column((r) => r.banAfter)}::integer[],
      ${column((r) => r.banSeconds)}::integer[],
      ${reported((u) => u.apiKeyId)}::bigint[], ${reported((u) => u.day)}::timestamptz[],
      ${reported((u) => u.admitted)}::integer[], ${reported((u) => u.refused)}::integer[]
    )
  `.execute(db)
  return rows
}

export interface CounterState {
  minuteStart: Date
  minuteUsed: number
  dayStart: Date
  dayUsed: number
  bannedUntil: Date | null
}

/** A subject's counts as stored (leases that instances hold included), without counting anything. */
export async function readCounter(db: Kysely<Database>, subject: string): Promise<CounterState | undefined> {
  return db
    .selectFrom('rate_limit_counters')
    .select([
      'minute_start as minuteStart',
      'minute_used as minuteUsed',
      'day_start as dayStart',
      'day_used as dayUsed',
      'banned_until as bannedUntil'
    ])
    .where('subject', '=', subject)
    .executeTakeFirst()
}

/** Deletes counters whose day is over and that hold no ban still running. */
export async function deleteExpiredCounters(db: Kysely<Database>, now: Date, todayStart: Date): Promise<number> {
  const result = await db
    .deleteFrom('rate_limit_counters')
    .where('day_start', '<', todayStart)
    .where((eb) => eb.or([eb('banned_until', 'is', null), eb('banned_until', '<=', now)]))
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
