import { sql, type Kysely } from 'kysely'
import type { Database } from '../db/schema.js'
import { statement, type Queryable } from '../db/statements.js'
import type { StoredCounts } from '../limits/windows.js'

/** One subject's request (or block of requests) to count against its windows. Instants are Unix milliseconds. */
export interface QuotaRequest {
  /** `account:<id>`: the windows that every key of the account shares. */
  subject: string
  /** The API key, whose usage the statement records and which alone a ban applies to; null for an address. */
  apiKeyId: bigint | null
  /** Start of the current UTC minute and UTC day, from the caller's clock. */
  minuteStart: number
  dayStart: number
  now: number
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

/** A subject's windows after its request was counted. Instants are Unix milliseconds. */
export interface QuotaState {
  subject: string
  granted: number
  minuteStart: number
  minuteUsed: number
  dayStart: number
  dayUsed: number
  bannedUntil: number | null
  /** This statement set the ban. */
  newlyBanned: boolean
}

/** The limiter's subject of an account: the windows that all of its keys share. */
export const accountSubject = (accountId: bigint) => `account:${accountId}`

/** Requests of one API key in one UTC hour, decided without the database and reported later. */
export interface UsageReport {
  apiKeyId: bigint
  /** Start of the UTC hour, in Unix milliseconds. */
  hour: number
  admitted: number
  refused: number
}

type Columns<T> = { [K in keyof T]: T[K][] }

// Compiled once: a batch is one call, its requests and reports passed as one array per field.
const COUNT = statement<
  Columns<QuotaRequest> & Columns<{ [K in keyof UsageReport as `usage_${K}`]: UsageReport[K] }>,
  QuotaState
>(
  (_db, v) => sql<QuotaState>`
    SELECT * FROM count_requests(
      ${v.subject}::text[], ${v.apiKeyId}::bigint[], ${v.minuteStart}::bigint[], ${v.dayStart}::bigint[],
      ${v.now}::bigint[], ${v.want}::integer[], ${v.returned}::integer[], ${v.perMinute}::integer[],
      ${v.perDay}::integer[], ${v.banAfter}::integer[], ${v.banSeconds}::integer[],
      ${v.usage_apiKeyId}::bigint[], ${v.usage_hour}::bigint[], ${v.usage_admitted}::integer[],
      ${v.usage_refused}::integer[]
    )
  `
)

/**
 * Decides and counts the requests of many subjects against both their windows, records refusals and
 * bans, and adds each key's admitted and refused requests to its usage of the hour with the `usage`
 * reports: one call of the count_requests function (migrations/0016, 0017), 1 round trip. The upsert
 * locks each subject's row, so concurrent callers on any instance queue on it and never over-admit.
 */
export async function countRequests(
  db: Queryable,
  requests: readonly QuotaRequest[],
  usage: readonly UsageReport[] = []
): Promise<QuotaState[]> {
  if (requests.length === 0 && usage.length === 0) return []
  const column = <K extends keyof QuotaRequest>(field: K) => requests.map((request) => request[field])
  const reported = <K extends keyof UsageReport>(field: K) => usage.map((report) => report[field])
  return COUNT(db, {
    subject: column('subject'),
    apiKeyId: column('apiKeyId'),
    minuteStart: column('minuteStart'),
    dayStart: column('dayStart'),
    now: column('now'),
    want: column('want'),
    returned: column('returned'),
    perMinute: column('perMinute'),
    perDay: column('perDay'),
    banAfter: column('banAfter'),
    banSeconds: column('banSeconds'),
    usage_apiKeyId: reported('apiKeyId'),
    usage_hour: reported('hour'),
    usage_admitted: reported('admitted'),
    usage_refused: reported('refused')
  })
}

/** What the database holds of a key's standing. Instants are Unix milliseconds. */
export interface StoredStanding {
  /** Its account's windows as counted (leases that instances hold included); undefined: never counted. */
  counter: StoredCounts | undefined
  /** The end of the key's ban, if one is running at the instant asked about; else 0. */
  bannedUntil: number
}

/**
 * The account's counter row and the key's running ban, without counting anything: 1 round trip. Both
 * are joined to a single constant row, since either may exist without the other.
 */
export async function readStanding(
  db: Kysely<Database>,
  subject: string,
  apiKeyId: bigint,
  now: number
): Promise<StoredStanding> {
  const row = await db
    .selectFrom(db.selectNoFrom(sql<number>`1`.as('one')).as('one'))
    .leftJoin('rate_limit_counters as counter', (join) => join.on('counter.subject', '=', subject))
    .leftJoin('api_key_bans as ban', (join) =>
      join.on('ban.api_key_id', '=', apiKeyId).on('ban.banned_until', '>', new Date(now))
    )
    .select([
      'counter.minute_start as minuteStart',
      'counter.minute_used as minuteUsed',
      'counter.day_start as dayStart',
      'counter.day_used as dayUsed',
      'ban.banned_until as bannedUntil'
    ])
    .executeTakeFirstOrThrow()
  const { minuteStart, minuteUsed, dayStart, dayUsed, bannedUntil } = row
  return {
    counter:
      minuteStart && dayStart && minuteUsed !== null && dayUsed !== null
        ? { minuteStart: minuteStart.getTime(), minuteUsed, dayStart: dayStart.getTime(), dayUsed }
        : undefined,
    bannedUntil: bannedUntil?.getTime() ?? 0
  }
}

/** A subject's counts as stored (leases that instances hold included), without counting anything. */
export async function readCounter(db: Kysely<Database>, subject: string): Promise<StoredCounts | undefined> {
  const row = await db
    .selectFrom('rate_limit_counters')
    .select([
      'minute_start as minuteStart',
      'minute_used as minuteUsed',
      'day_start as dayStart',
      'day_used as dayUsed'
    ])
    .where('subject', '=', subject)
    .executeTakeFirst()
  return row && { ...row, minuteStart: row.minuteStart.getTime(), dayStart: row.dayStart.getTime() }
}

/** The keys of an account banned at `now`, in ascending key id order, each with the end of its ban. */
export async function readAccountKeyBans(db: Kysely<Database>, accountId: bigint, now: Date) {
  return db
    .selectFrom('api_key_bans as b')
    .innerJoin('api_keys as k', 'k.id', 'b.api_key_id')
    .select(['k.id as apiKeyId', 'k.prefix', 'b.banned_until as bannedUntil'])
    .where('k.account_id', '=', accountId)
    .where('b.banned_until', '>', now)
    .orderBy('k.id')
    .$narrowType<{ bannedUntil: Date }>()
    .execute()
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

/** Deletes keys' streaks of refusals and bans that are over at `now`. */
export async function deleteEndedKeyBans(db: Kysely<Database>, now: Date): Promise<number> {
  const result = await db
    .deleteFrom('api_key_bans')
    .where((eb) => eb.or([eb('banned_until', 'is', null), eb('banned_until', '<=', now)]))
    .where((eb) => eb.or([eb('refused_until', 'is', null), eb('refused_until', '<=', now)]))
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
