import { sql, type Kysely } from 'kysely'
import { createCountUnitsPerAccount } from './0040_count_units_decided_per_account.js'
import { createAccountWindows, createDecideAccountWithShadows } from './0042_shadow_limits.js'

/**
 * Months that follow the account's billing date. Each account has a cycle_anchor (its creation unless
 * set; null, read as created_at, for an account made before), and a plan's fixed month may be anchored on it: the account's months then start at
 * anchor + k months for every integer k (negative ones too, for an anchor ahead), in UTC, each
 * computed from the anchor so that 31 January is followed by the last day of February and then
 * 31 March. account_windows carries, for an anchored month, the anchor its window is reckoned from;
 * count_units passes it to decide_account, which takes a month's start and end from it (and so its
 * stored counter, its reset, its lease's end and its usage.threshold events' bounds).
 */
export async function up(db: Kysely<any>): Promise<void> {
  // An account made from here on starts its months where it is made (now() is the created_at of the
  // same insert); one made before holds null, read as its created_at. No row is written: filling the
  // column, or making it NOT NULL, would rewrite or scan the table under the release before.
  await sql`ALTER TABLE accounts ADD COLUMN cycle_anchor timestamptz`.execute(db)
  await sql`ALTER TABLE accounts ALTER COLUMN cycle_anchor SET DEFAULT now()`.execute(db)

  await sql`
    ALTER TABLE plan_limits ADD COLUMN anchor text NOT NULL DEFAULT 'calendar'
      CONSTRAINT plan_limits_anchor_check CHECK (anchor IN ('calendar', 'account')),
      ADD CONSTRAINT plan_limits_anchor_month_check CHECK (anchor = 'calendar' OR ("window" = 'month' AND algorithm = 'fixed'))
  `.execute(db)

  // Each an expression the planner inlines, as window_start and window_end are. Month arithmetic on a
  // timestamp (not a timestamptz) is the same whatever the session's time zone.
  await sql`
    CREATE FUNCTION anchored_month(anchor timestamptz, k integer) RETURNS timestamptz
    LANGUAGE sql IMMUTABLE AS $$
      SELECT ((anchor AT TIME ZONE 'UTC') + make_interval(months => k)) AT TIME ZONE 'UTC'
    $$
  `.execute(db)
  // The k of the period that holds at: the calendar months from the anchor's month to at's, one fewer
  // when the anchor's day and time fall after at's in its month.
  await sql`
    CREATE FUNCTION anchored_month_number(anchor timestamptz, at timestamptz) RETURNS integer
    LANGUAGE sql IMMUTABLE AS $$
      SELECT ((extract(year FROM at AT TIME ZONE 'UTC') - extract(year FROM anchor AT TIME ZONE 'UTC')) * 12
          + extract(month FROM at AT TIME ZONE 'UTC') - extract(month FROM anchor AT TIME ZONE 'UTC'))::integer
        - (anchored_month(anchor, ((extract(year FROM at AT TIME ZONE 'UTC') - extract(year FROM anchor AT TIME ZONE 'UTC'))
          * 12 + extract(month FROM at AT TIME ZONE 'UTC') - extract(month FROM anchor AT TIME ZONE 'UTC'))::integer) > at)::integer
    $$
  `.execute(db)
  await sql`
    CREATE FUNCTION anchored_month_start(anchor timestamptz, at timestamptz) RETURNS timestamptz
    LANGUAGE sql IMMUTABLE AS $$
      SELECT anchored_month(anchor, anchored_month_number(anchor, at))
    $$
  `.execute(db)
  await sql`
    CREATE FUNCTION anchored_month_end(anchor timestamptz, at timestamptz) RETURNS timestamptz
    LANGUAGE sql IMMUTABLE AS $$
      SELECT anchored_month(anchor, anchored_month_number(anchor, at) + 1)
    $$
  `.execute(db)

  // account_windows, decide_account and count_units as 0042 made them, an anchored month's bounds
  // taken from its anchor.
  await createAccountWindows(db, 'anchored')
  await createDecideAccountWithShadows(db, 'anchored')
  await createCountUnitsPerAccount(db, 'once locked', 'with shadows', 'anchored')
}

export async function down(db: Kysely<any>): Promise<void> {
  await createCountUnitsPerAccount(db, 'once locked', 'with shadows')
  await createDecideAccountWithShadows(db, 'calendar')
  await createAccountWindows(db, 'calendar')
  await sql`DROP FUNCTION anchored_month_end(timestamptz, timestamptz)`.execute(db)
  await sql`DROP FUNCTION anchored_month_start(timestamptz, timestamptz)`.execute(db)
  await sql`DROP FUNCTION anchored_month_number(timestamptz, timestamptz)`.execute(db)
  await sql`DROP FUNCTION anchored_month(timestamptz, integer)`.execute(db)
  await sql`ALTER TABLE plan_limits DROP COLUMN anchor`.execute(db)
  await sql`ALTER TABLE accounts DROP COLUMN cycle_anchor`.execute(db)
}
