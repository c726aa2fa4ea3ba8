import { sql, type Kysely } from 'kysely'
import type { Database, LimitAlgorithm, LimitWindow } from '../db/schema.js'
import { againOnDeadlock, statement, type Queryable } from '../db/statements.js'
import type { WindowState } from '../limits/windows.js'

/** One request of a key (or a block of units leased with it) to count against its account's limits. */
export interface QuotaRequest {
  apiKeyId: bigint
  accountId: bigint
  /** The route's units on the account's plan: 0 to 1,000. */
  cost: number
  /** Units asked for, the request's own cost included; more to lease a block for admitting locally. */
  want: number
  /** Units leased earlier and not used, handed back, and the database's instant they were counted at. */
  returned: number
  returnedAt: number
  /** Refusals past the first that ban the key; null: never banned. */
  banAfter: number | null
  banSeconds: number
}

export type RefusalReason = 'rate_limited' | 'credits_exhausted' | 'key_banned'

/** What the statement decided for one request. Instants are epoch milliseconds of the database's clock. */
export interface QuotaState {
  apiKeyId: bigint
  admitted: boolean
  /** Units counted for the request, its lease included. */
  granted: number
  /** The database's clock when it decided. */
  now: number
  /** Units leased with it may be used until then (the shortest fixed window's end, at most a second). */
  leaseUntil: number
  reason: RefusalReason | null
  retryAt: number | null
  bannedUntil: number | null
  newlyBanned: boolean
  /** The enforced windows, shortest first. */
  windows: WindowState[]
  /**
   * The shadow windows, shortest first: counted, never refusing. One an admitted request took below 0
   * of remaining would have refused it.
   */
  shadows: readonly WindowState[]
  /** The account's credits left, or null when it has none. */
  credits: number | null
}

/** Requests of one API key in one UTC hour, decided without the database and reported later. */
export interface UsageReport {
  apiKeyId: bigint
  /** Start of the UTC hour (the database's clock), in epoch milliseconds. */
  hour: number
  admitted: number
  refused: number
  units: number
}

/** A row of count_units, as the driver reads it. */
export interface CountedRow {
  apiKeyId: string
  admitted: boolean
  granted: number
  now: number
  leaseUntil: number
  reason: RefusalReason | null
  retryAt: number | null
  bannedUntil: number | null
  newlyBanned: boolean
  /** The windows' names as their counters are stored: a shadow window's is `minute:shadow`. */
  windows: string[] | null
  algorithms: LimitAlgorithm[] | null
  limits: number[] | null
  remaining: string[] | null
  resets: number[] | null
  credits: string | null
}

type Columns<T> = { [K in keyof T]: T[K][] }

// Compiled once: a batch is one call, its requests and reports passed as one array per field.
const COUNT = statement<
  Columns<QuotaRequest> & Columns<{ [K in keyof UsageReport as `usage_${K}`]: UsageReport[K] }>,
  CountedRow
>(
  (_db, v) => sql<CountedRow>`
    SELECT * FROM count_units(
      ${v.apiKeyId}::bigint[], ${v.accountId}::bigint[], ${v.cost}::integer[], ${v.want}::integer[],
      ${v.returned}::integer[], ${v.returnedAt}::double precision[], ${v.banAfter}::integer[],
      ${v.banSeconds}::integer[], ${v.usage_apiKeyId}::bigint[], ${v.usage_hour}::double precision[],
      ${v.usage_admitted}::integer[], ${v.usage_refused}::integer[], ${v.usage_units}::bigint[]
    )
  `
)

/** What a shadow window's stored name ends with. */
const SHADOW = ':shadow'
/** The shadow windows of every account without one. */
export const NO_SHADOWS: readonly WindowState[] = Object.freeze([])

/** The enforced and the shadow windows of a counted row, each shortest first. */
function windowsOf(row: Pick<CountedRow, 'windows' | 'algorithms' | 'limits' | 'remaining' | 'resets'>) {
  const windows: WindowState[] = []
  let shadows: WindowState[] | undefined
  const names = row.windows ?? []
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!
    const shadow = name.endsWith(SHADOW)
    const window: WindowState = {
      name: (shadow ? name.slice(0, -SHADOW.length) : name) as LimitWindow,
      algorithm: row.algorithms![i]!,
      limit: row.limits![i]!,
      remaining: Number(row.remaining![i]!),
      resetAt: row.resets![i]!
    }
    if (shadow) (shadows ??= []).push(window)
    else windows.push(window)
  }
  return { windows, shadows: shadows ?? NO_SHADOWS }
}

/**
 * Decides and counts the requests of many keys against their accounts' limits and credits, on the
 * database's clock; records refusals, bans, threshold events and each key's usage of the hour with
 * the `usage` reports: one call of the count_units function (db/schema.sql), 1 round trip.
 */
export async function countUnits(
  db: Queryable,
  requests: readonly QuotaRequest[],
  usage: readonly UsageReport[] = []
): Promise<QuotaState[]> {
  if (requests.length === 0 && usage.length === 0) return []
  const column = <K extends keyof QuotaRequest>(field: K) => requests.map((request) => request[field])
  const reported = <K extends keyof UsageReport>(field: K) => usage.map((report) => report[field])
  const rows = await againOnDeadlock(() =>
    COUNT(db, {
      apiKeyId: column('apiKeyId'),
      accountId: column('accountId'),
      cost: column('cost'),
      want: column('want'),
      returned: column('returned'),
      returnedAt: column('returnedAt'),
      banAfter: column('banAfter'),
      banSeconds: column('banSeconds'),
      usage_apiKeyId: reported('apiKeyId'),
      usage_hour: reported('hour'),
      usage_admitted: reported('admitted'),
      usage_refused: reported('refused'),
      usage_units: reported('units')
    })
  )
  return rows.map(quotaStateOf)
}

/** Units leased and not used that an instance hands back: its account, and the database's instant they were counted at. */
export interface UnitReturn {
  accountId: bigint
  units: number
  countedAt: number
}

const HAND_BACK = statement<Columns<UnitReturn>, Record<string, never>>(
  (_db, v) => sql<Record<string, never>>`
    SELECT FROM hand_back_units(${v.accountId}::bigint[], ${v.units}::integer[], ${v.countedAt}::double precision[])
  `
)

/**
 * Hands back units leased and not used to their accounts' fixed windows that still hold the instant
 * they were counted at, as count_units does with a request's `returned`, without counting a request:
 * one call of the hand_back_units function (db/schema.sql), 1 round trip.
 */
export async function handBackUnits(db: Queryable, returns: readonly UnitReturn[]): Promise<void> {
  if (returns.length === 0) return
  await againOnDeadlock(() =>
    HAND_BACK(db, {
      accountId: returns.map((given) => given.accountId),
      units: returns.map((given) => given.units),
      countedAt: returns.map((given) => given.countedAt)
    })
  )
}

/** What a row of count_units says of its request. */
export function quotaStateOf(row: CountedRow): QuotaState {
  return {
    apiKeyId: BigInt(row.apiKeyId),
    admitted: row.admitted,
    granted: row.granted,
    now: row.now,
    leaseUntil: row.leaseUntil,
    reason: row.reason,
    retryAt: row.retryAt,
    bannedUntil: row.bannedUntil,
    newlyBanned: row.newlyBanned,
    ...windowsOf(row),
    credits: row.credits === null ? null : Number(row.credits)
  }
}

/**
 * The end of the key's ban once the synchronous standby is known to hold it; undefined when no ban
 * holds. A ban read on the primary may be there alone: when a writer's wait for the standby ends
 * without it (its connection closed, its backend ended), PostgreSQL keeps the commit and shows it to
 * every other session, and a failover then loses it. Rewriting the ban's row in a transaction that
 * commits as the session does (waiting for the synchronous standby where one is configured) returns
 * only once the standby holds that commit and every commit before it, the ban's among them; cut off
 * from its standby, the primary makes it wait until the caller's timeout. 1 round trip.
 */
export async function confirmBan(db: Queryable, apiKeyId: bigint): Promise<number | undefined> {
  const { rows } = await db.query<{ bannedUntil: number }>(
    `UPDATE api_key_bans SET updated_at = updated_at
      WHERE api_key_id = $1 AND banned_until > service_now()
      RETURNING (extract(epoch FROM banned_until) * 1000)::float8 AS "bannedUntil"`,
    [apiKeyId]
  )
  return rows[0]?.bannedUntil
}

/** The database's clock, in epoch milliseconds: 1 round trip. */
export async function readDatabaseNow(db: Kysely<Database>): Promise<number> {
  const { rows } = await sql<{ now: number }>`SELECT (extract(epoch FROM service_now()) * 1000)::float8 AS now`.execute(
    db
  )
  return rows[0]!.now
}

/** What the database holds of an account's standing at its clock's now, without counting anything. */
export interface StoredStanding {
  now: number
  windows: WindowState[]
  shadows: readonly WindowState[]
  credits: number | null
  /** The end of the key's ban, if one is running; else 0. */
  bannedUntil: number
}

/**
 * The account's limits in force with what is used of each (leases that instances hold included), its
 * credits and the key's running ban, all at the database's now: 1 round trip.
 */
export async function readStanding(
  db: Kysely<Database>,
  accountId: bigint,
  apiKeyId: bigint | null
): Promise<StoredStanding> {
  const { rows } = await sql<
    Pick<CountedRow, 'windows' | 'algorithms' | 'limits' | 'remaining' | 'resets' | 'credits' | 'now' | 'bannedUntil'>
  >`
    WITH clock AS (SELECT service_now() AS now),
    standing AS (
      SELECT a."window", a.shadow, a.algorithm, a."limit",
        CASE
          WHEN a.algorithm = 'fixed' THEN
            -- A shadow window goes below 0 by what it would have refused.
            CASE WHEN a.shadow THEN a."limit" - u.used ELSE greatest(0, a."limit" - u.used) END
          ELSE floor(least(a.capacity::double precision, CASE
            WHEN k.algorithm = 'bucket' THEN k.level + greatest(0, extract(epoch FROM clock.now - k.started_at))
              * a."limit" / window_seconds(a."window")
            ELSE a.capacity END))::bigint
        END AS remaining,
        a.capacity, a.anchor, clock.now, n.stored
      FROM clock CROSS JOIN account_windows(${accountId}, clock.now) a
      CROSS JOIN LATERAL (SELECT CASE WHEN a.shadow THEN a."window" || ':shadow' ELSE a."window" END AS stored) AS n
      LEFT JOIN limit_counters k ON k.account_id = ${accountId} AND k."window" = n.stored
      CROSS JOIN LATERAL (SELECT CASE
        WHEN k.algorithm = 'fixed' AND k.started_at = CASE WHEN a.anchor IS NULL THEN window_start(a."window", clock.now)
          ELSE anchored_month_start(a.anchor, clock.now) END THEN k.used ELSE 0 END AS used) AS u
    )
    SELECT extract(epoch FROM clock.now) * 1000 AS now,
      (SELECT array_agg(s.stored ORDER BY s.shadow, window_seconds(s."window")) FROM standing s) AS windows,
      (SELECT array_agg(s.algorithm ORDER BY s.shadow, window_seconds(s."window")) FROM standing s) AS algorithms,
      (SELECT array_agg(CASE WHEN s.algorithm = 'fixed' THEN s."limit" ELSE s.capacity END
        ORDER BY s.shadow, window_seconds(s."window")) FROM standing s) AS limits,
      (SELECT array_agg(s.remaining ORDER BY s.shadow, window_seconds(s."window")) FROM standing s) AS remaining,
      (SELECT array_agg(extract(epoch FROM CASE
          WHEN s.algorithm = 'fixed' AND s.anchor IS NULL THEN window_end(s."window", s.now)
          WHEN s.algorithm = 'fixed' THEN anchored_month_end(s.anchor, s.now)
          ELSE s.now + make_interval(secs => (s.capacity - s.remaining) * window_seconds(s."window") / s."limit")
        END) * 1000 ORDER BY s.shadow, window_seconds(s."window")) FROM standing s) AS resets,
      (SELECT c.remaining FROM account_credits c WHERE c.account_id = ${accountId}) AS credits,
      (SELECT extract(epoch FROM b.banned_until) * 1000 FROM api_key_bans b
        WHERE b.api_key_id = ${apiKeyId} AND b.banned_until > clock.now) AS "bannedUntil"
    FROM clock
  `.execute(db)
  const row = rows[0]!
  return {
    now: row.now,
    ...windowsOf(row),
    credits: row.credits === null ? null : Number(row.credits),
    bannedUntil: row.bannedUntil ?? 0
  }
}

/** The keys of an account banned at the database's now, in ascending key id order, each with the end of its ban. */
export async function readAccountKeyBans(db: Kysely<Database>, accountId: bigint) {
  return db
    .selectFrom('api_key_bans as b')
    .innerJoin('api_keys as k', 'k.id', 'b.api_key_id')
    .select(['k.id as apiKeyId', 'k.prefix', 'b.banned_until as bannedUntil'])
    .where('k.account_id', '=', accountId)
    .where('b.banned_until', '>', sql<Date>`service_now()`)
    .orderBy('k.id')
    .$narrowType<{ bannedUntil: Date }>()
    .execute()
}

/**
 * Deletes the counters of accounts none of whose windows holds anything any more at the database's
 * now: fixed windows that ended (a month that follows the account's anchor at its own end), buckets
 * full again. A row a counting statement holds is left for a later sweep: the sweep never waits for
 * one, so it cannot hold a row such a statement waits for while it waits for another (a deadlock).
 */
export async function deleteIdleCounters(db: Kysely<Database>): Promise<number> {
  const result = await sql`
    DELETE FROM account_counters
    WHERE account_id IN (SELECT c.account_id FROM account_counters c WHERE NOT EXISTS (
      SELECT FROM unnest(c.windows, c.algorithms, c.started_ats, c.levels) AS k("window", algorithm, started_at, level)
      WHERE CASE
        -- A shadow window's counter is stored as "<window>:shadow"; an anchored month's ends at its period's end.
        WHEN k.algorithm = 'fixed' AND split_part(k."window", ':', 1) = 'month' THEN
          window_end('month', k.started_at) > service_now() OR EXISTS (
            SELECT FROM account_windows(c.account_id, service_now()) a
            WHERE a."window" = 'month' AND anchored_month_end(a.anchor, k.started_at) > service_now()
          )
        WHEN k.algorithm = 'fixed' THEN window_end(split_part(k."window", ':', 1), k.started_at) > service_now()
        -- A bucket refilled to its capacity holds what a new row would: none is given more than it had.
        ELSE EXISTS (
          SELECT FROM account_windows(c.account_id, service_now()) a
          WHERE a."window" || CASE WHEN a.shadow THEN ':shadow' ELSE '' END = k."window" AND a.algorithm = 'bucket' AND k.level
            + extract(epoch FROM service_now() - k.started_at) * a."limit" / window_seconds(a."window") < a.capacity
        )
      END
    ) FOR UPDATE SKIP LOCKED)
  `.execute(db)
  return Number(result.numAffectedRows ?? 0)
}

/** Deletes keys' streaks of refusals and bans that are over at the database's now. */
export async function deleteEndedKeyBans(db: Kysely<Database>): Promise<number> {
  const result = await db
    .deleteFrom('api_key_bans')
    .where((eb) => eb.or([eb('banned_until', 'is', null), eb('banned_until', '<=', sql<Date>`service_now()`)]))
    .where((eb) => eb.or([eb('refused_until', 'is', null), eb('refused_until', '<=', sql<Date>`service_now()`)]))
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
