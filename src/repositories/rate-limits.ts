import { sql, type Kysely } from 'kysely'
import { builder, prepare, runPrepared, type Queryable } from '../db/prepared.js'
import type { Database } from '../db/schema.js'

export interface QuotaRequest {
  subject: string
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
  granted: number
  minuteStart: Date
  minuteUsed: number
  dayStart: Date
  dayUsed: number
  bannedUntil: Date | null
  /** This statement set the ban. */
  newlyBanned: boolean
}

// Expressions over the stored row `c` and the proposed row `excluded`. A window only moves forward,
// so an instance whose clock lags cannot reset a window another instance has already moved on.
const minuteUsed = sql`(CASE WHEN excluded.minute_start > c.minute_start THEN 0 ELSE c.minute_used END)`
const dayUsed = sql`(CASE
  WHEN excluded.day_start > c.day_start THEN 0
  WHEN excluded.day_start = c.day_start THEN GREATEST(0, c.day_used - excluded.returned)
  ELSE c.day_used END)`
const banned = sql`(c.banned_until IS NOT NULL AND c.banned_until > excluded.updated_at)`
const granted = sql`(CASE WHEN ${banned} THEN 0 ELSE GREATEST(0, LEAST(
  excluded.wanted,
  excluded.minute_limit - ${minuteUsed},
  COALESCE(excluded.day_limit - ${dayUsed}, excluded.wanted)
)) END)`
const refusing = sql`(NOT ${banned} AND ${granted} = 0)`
// Refusals so far in the window that is refusing; it resets when that window does.
const streak = sql`(CASE WHEN c.refused_until > excluded.updated_at THEN c.refused ELSE 0 END)`
const refusingWindowEnd = sql`(CASE
  WHEN excluded.day_limit IS NOT NULL AND excluded.day_limit - ${dayUsed} <= 0
    THEN GREATEST(c.day_start, excluded.day_start) + interval '1 day'
  ELSE GREATEST(c.minute_start, excluded.minute_start) + interval '1 minute' END)`
// The first refusal is the 429; more than ban_after further ones ban the subject.
const bans = sql`(${refusing} AND excluded.ban_after IS NOT NULL AND ${streak} + 1 > excluded.ban_after + 1)`

/**
 * Decides and counts one request (or a block of `want`) against both windows in one atomic
 * statement: the upsert locks the subject's row, so concurrent callers on any instance queue on it
 * and never over-admit. Also records refusals and bans. 1 round trip.
 */
export async function consumeQuota(db: Queryable, request: QuotaRequest): Promise<QuotaState> {
  const firstGrant = Math.min(request.want, request.perMinute, request.perDay ?? request.want)
  const input: Record<string, unknown> = { ...request, firstGrant }
  const [state] = await runPrepared(db, CONSUME, CONSUME.parameters.map((name) => input[name]))
  return state!
}

// Compiled once with stand-in values; `parameters` names the values in the order the text takes them.
const example = { subject: '', minuteStart: new Date(0), dayStart: new Date(0), now: new Date(0) }
const CONSUME = prepare<QuotaState>(
  'rate_limit_consume',
  consumeStatement({ ...example, want: 1, returned: 0, perMinute: 1, perDay: 1, banAfter: 1, banSeconds: 1, firstGrant: 1 }),
  [
    'subject', 'minuteStart', 'firstGrant', 'perMinute', 'dayStart', 'firstGrant', 'perDay', 'want', 'firstGrant',
    'banAfter', 'banSeconds', 'now', 'returned'
  ]
)

function consumeStatement(request: QuotaRequest & { firstGrant: number }) {
  const { firstGrant } = request
  return sql<QuotaState>`
    INSERT INTO rate_limit_counters AS c (
      subject, minute_start, minute_used, minute_limit, day_start, day_used, day_limit,
      wanted, last_grant, ban_after, ban_seconds, updated_at, returned
    ) VALUES (
      ${request.subject}, ${request.minuteStart}, ${firstGrant}, ${request.perMinute},
      ${request.dayStart}, ${firstGrant}, ${request.perDay}, ${request.want}, ${firstGrant},
      ${request.banAfter}, ${request.banSeconds}, ${request.now}, ${request.returned}
    )
    ON CONFLICT (subject) DO UPDATE SET
      minute_start = GREATEST(c.minute_start, excluded.minute_start),
      day_start = GREATEST(c.day_start, excluded.day_start),
      minute_used = ${minuteUsed} + ${granted},
      day_used = ${dayUsed} + ${granted},
      last_grant = ${granted},
      minute_limit = excluded.minute_limit,
      day_limit = excluded.day_limit,
      wanted = excluded.wanted,
      returned = excluded.returned,
      ban_after = excluded.ban_after,
      ban_seconds = excluded.ban_seconds,
      refused = CASE WHEN ${bans} THEN 0 WHEN ${refusing} THEN ${streak} + 1 WHEN ${banned} THEN c.refused ELSE 0 END,
      refused_until = CASE
        WHEN ${bans} THEN NULL
        WHEN ${refusing} THEN CASE WHEN c.refused_until > excluded.updated_at THEN c.refused_until ELSE ${refusingWindowEnd} END
        WHEN ${banned} THEN c.refused_until
        ELSE NULL END,
      banned_until = CASE
        WHEN ${bans} THEN excluded.updated_at + make_interval(secs => excluded.ban_seconds)
        ELSE c.banned_until END,
      updated_at = GREATEST(c.updated_at, excluded.updated_at)
    RETURNING
      last_grant AS granted, minute_start AS "minuteStart", minute_used AS "minuteUsed",
      day_start AS "dayStart", day_used AS "dayUsed", banned_until AS "bannedUntil",
      coalesce(banned_until = updated_at + make_interval(secs => ban_seconds), false) AS "newlyBanned"
  `.compile(builder)
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
