import { sql, type Kysely } from 'kysely'
import { createCountUnitsPerAccount } from './0040_count_units_decided_per_account.js'

/**
 * count_units writes an outcome's webhook events by calling record_account_events for the outcomes
 * that have one, where one insert of every outcome's events ran in each statement: PostgreSQL readied
 * that insert, its JSON and its sort on every call, about 0.3 M instructions, though most calls have
 * no event to write. The events, their order and their data are as before. count_units keeps its
 * arguments, result and oid: the release before calls it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION record_account_events(
      now timestamptz, account_id bigint, key_id bigint, windows text[], limits integer[], remaining bigint[],
      anchors timestamptz[], used_after bigint[], crossed_windows text[], crossed_percents integer[],
      refusing_windows text[], banned_until timestamptz
    ) RETURNS integer LANGUAGE plpgsql SET "TimeZone" = 'UTC' AS $function$
    DECLARE
      v_recorded integer;
    BEGIN
      -- Of one account's outcome: the thresholds its windows crossed, its key's ban, the shadow
      -- windows that would have refused it, each window's with its bounds (an anchored month's
      -- reckoned from its anchor).
      INSERT INTO webhook_events (type, at, account_id, data)
      SELECT e.type, now, account_id, CASE WHEN e.kind = 2 THEN e.data ELSE e.data || jsonb_build_object(
          'windowStart', to_char(CASE WHEN anchors[e.at] IS NULL THEN window_start(e."window", now)
            ELSE anchored_month_start(anchors[e.at], now) END, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
          'windowEnd', to_char(CASE WHEN anchors[e.at] IS NULL THEN window_end(e."window", now)
            ELSE anchored_month_end(anchors[e.at], now) END, 'YYYY-MM-DD"T"HH24:MI:SS"Z"')) END
      FROM (
        SELECT 1 AS kind, t."window", t.percent, p.at, 'usage.threshold' AS type, jsonb_build_object(
            'account', jsonb_build_object('id', account_id::text),
            'window', t."window", 'limit', limits[p.at], 'used', used_after[p.at], 'percent', t.percent) AS data
        FROM unnest(crossed_windows, crossed_percents) AS t("window", percent)
        CROSS JOIN LATERAL (SELECT array_position(windows, t."window") AS at) AS p
        UNION ALL
        SELECT 2, NULL, NULL, NULL, 'key.banned', jsonb_build_object(
            'key', jsonb_build_object('id', key_id::text, 'accountId', account_id::text),
            'bannedUntil', to_char(banned_until, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
        WHERE banned_until IS NOT NULL
        UNION ALL
        SELECT 3, t."window", NULL, p.at, 'limit.would_refuse', jsonb_build_object(
            'account', jsonb_build_object('id', account_id::text),
            'key', jsonb_build_object('id', key_id::text),
            'window', t."window", 'limit', limits[p.at], 'used', limits[p.at] - remaining[p.at])
        FROM unnest(refusing_windows) AS t("window")
        CROSS JOIN LATERAL (SELECT array_position(windows, t."window" || ':shadow') AS at) AS p
      ) AS e
      ORDER BY e.kind, e."window", e.percent;
      GET DIAGNOSTICS v_recorded = ROW_COUNT;
      RETURN v_recorded;
    END
    $function$
  `.execute(db)
  await createCountUnitsPerAccount(
    db,
    'once locked',
    'with shadows',
    'anchored',
    'one row',
    'in turn',
    'as stored',
    'when due'
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await createCountUnitsPerAccount(db, 'once locked', 'with shadows', 'anchored', 'one row', 'in turn', 'as stored')
  await sql`DROP FUNCTION record_account_events`.execute(db)
}
