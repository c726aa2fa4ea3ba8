import { sql, type Kysely } from 'kysely'
import { createCountUnitsPerAccount } from './0040_count_units_decided_per_account.js'

/**
 * Months that follow the account's billing date. Each account has a cycle_anchor (its creation unless
 * set), and a plan's fixed month may be anchored on it: the account's months then start at
 * anchor + k months for every integer k (negative ones too, for an anchor ahead), in UTC, each
 * computed from the anchor so that 31 January is followed by the last day of February and then
 * 31 March. account_limits carries, for an anchored month, the anchor its window is reckoned from;
 * count_units passes it to decide_account, which takes a month's start and end from it (and so its
 * stored counter, its reset, its lease's end and its usage.threshold events' bounds).
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Existing accounts start their months where they were made. Filled with the row trigger off: the
  // anchor changes no key that an instance holds, so no instance needs telling.
  await sql`ALTER TABLE accounts ADD COLUMN cycle_anchor timestamptz`.execute(db)
  await sql`ALTER TABLE accounts DISABLE TRIGGER accounts_updated`.execute(db)
  await sql`UPDATE accounts SET cycle_anchor = created_at`.execute(db)
  await sql`ALTER TABLE accounts ENABLE TRIGGER accounts_updated`.execute(db)
  // now() is the created_at of the same insert.
  await sql`ALTER TABLE accounts ALTER COLUMN cycle_anchor SET DEFAULT now(), ALTER COLUMN cycle_anchor SET NOT NULL`.execute(
    db
  )

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

  // A new column, so a new function: its anchor is the account's for a plan's anchored month, null for
  // every other limit (an override's month is the calendar's).
  await sql`DROP FUNCTION account_limits(bigint, timestamptz)`.execute(db)
  await sql`
    CREATE FUNCTION account_limits(account bigint, at timestamptz)
    RETURNS TABLE("window" text, algorithm text, "limit" integer, capacity integer, shadow boolean,
      anchor timestamptz)
    LANGUAGE sql STABLE AS $function$
      SELECT DISTINCT ON (l."window", l.shadow) l."window", l.algorithm, l."limit", coalesce(l.burst, l."limit"),
        l.shadow, l.anchor
      FROM (
        SELECT o."window", o.algorithm, o."limit", o.burst, false AS shadow, NULL::timestamptz AS anchor, 0 AS rank
        FROM account_limit_overrides o
        WHERE o.account_id = account AND (o.until IS NULL OR o.until > at)
        UNION ALL
        SELECT p."window", p.algorithm, p."limit", p.burst, p.shadow,
          CASE WHEN p.anchor = 'account' THEN a.cycle_anchor END, 1
        FROM plan_limits p
        JOIN accounts a ON a.plan = p.plan WHERE a.id = account
      ) AS l
      ORDER BY l."window", l.shadow, l.rank
    $function$
  `.execute(db)

  // decide_account as 0042 made it and count_units as 0040's generator makes it, each limit's anchor
  // a new last argument.
  await sql`DROP FUNCTION decide_account`.execute(db)
  await createDecideAccount(db, 'anchored')
  await createCountUnitsPerAccount(db, 'once locked', 'with shadows', 'anchored')
}

// A window's bounds in decide_account: an anchored month's from its anchor.
const DECIDED_BOUNDS = {
  calendar: { start: 'window_start(limit_windows[i], now)', end: 'window_end(limit_windows[i], now)' },
  anchored: {
    start: `CASE WHEN limit_anchors[i] IS NULL THEN window_start(limit_windows[i], now)
              ELSE anchored_month_start(limit_anchors[i], now) END`,
    end: `CASE WHEN limit_anchors[i] IS NULL THEN window_end(limit_windows[i], now)
            ELSE anchored_month_end(limit_anchors[i], now) END`
  }
}

/** decide_account as 0042 made it, reckoning months as `months` says (calendar: 0042's own). */
async function createDecideAccount(db: Kysely<any>, months: 'calendar' | 'anchored'): Promise<void> {
  const anchored = months === 'anchored'
  await sql`
    CREATE FUNCTION decide_account(
      now timestamptz, cost integer, want integer, returned integer, returned_at double precision,
      banned_until timestamptz, has_credits boolean, credits bigint, refill_every text,
      stored_windows text[], stored_algorithms text[], stored_starts timestamptz[], stored_used bigint[],
      stored_levels double precision[], stored_notified smallint[],
      limit_windows text[], limit_algorithms text[], limit_limits integer[], limit_capacities integer[],
      limit_shadows boolean[]${sql.raw(anchored ? ',\n      limit_anchors timestamptz[]' : '')})
    RETURNS account_decision
    LANGUAGE plpgsql IMMUTABLE
    AS $$
      DECLARE
        admitted boolean;
        reason text;
        retry timestamptz;
        granted integer;
        lease_until timestamptz;
        windows text[];
        algorithms text[];
        limits integer[];
        remaining bigint[];
        resets double precision[];
        starts_after timestamptz[];
        used_after bigint[];
        levels_after double precision[];
        notified_after smallint[];
        crossed_windows text[];
        crossed_percents integer[];
        refusing_windows text[];
        n integer := coalesce(cardinality(limit_windows), 0);
        buckets boolean := 'bucket' = ANY (limit_algorithms);
        shadows boolean := true = ANY (limit_shadows);
        shadow boolean;
        fixed boolean;
        p integer;
        available bigint;
        room bigint;
        room_at timestamptz;
        leasable boolean;
        ends timestamptz[];
        notified smallint;
      BEGIN
        -- Each limit in force, its counter brought to now: a fixed window that ended starts again at 0
        -- (units leased in it and handed back are taken off first); a bucket refills for the time since
        -- it was measured. The rows kept are those of the windows in force, enforced ones first, each
        -- shortest first; a shadow window's row is named "<window>:shadow".
        windows := limit_windows;
        algorithms := limit_algorithms;
        -- A fixed window's capacity is its limit.
        limits := limit_capacities;
        used_after := array_fill(0::bigint, ARRAY[n]);
        levels_after := array_fill(0::double precision, ARRAY[n]);
        notified_after := array_fill(0::smallint, ARRAY[n]);
        starts_after := array_fill(now, ARRAY[n]);
        ends := starts_after;
        FOR i IN 1..n LOOP
          fixed := limit_algorithms[i] = 'fixed';
          shadow := limit_shadows[i];
          IF shadow THEN windows[i] := limit_windows[i] || ':shadow'; END IF;
          p := array_position(stored_windows, windows[i]);
          ends[i] := ${sql.raw(DECIDED_BOUNDS[months].end)};
          IF fixed THEN
            starts_after[i] := ${sql.raw(DECIDED_BOUNDS[months].start)};
            IF stored_algorithms[p] = 'fixed' AND stored_starts[p] = starts_after[i] THEN
              used_after[i] := greatest(0, stored_used[p]
                - CASE WHEN returned > 0 AND returned_at >= epoch_ms(stored_starts[p]) THEN returned ELSE 0 END);
              notified_after[i] := stored_notified[p];
            END IF;
            available := limit_limits[i] - used_after[i];
            IF available < cost AND NOT shadow THEN room_at := greatest(room_at, ends[i]); END IF;
          ELSE
            levels_after[i] := CASE WHEN stored_algorithms[p] = 'bucket' THEN least(limit_capacities[i]::double precision,
                stored_levels[p] + greatest(0, extract(epoch FROM now - stored_starts[p])) * limit_limits[i]
                  / window_seconds(limit_windows[i]))
              ELSE limit_capacities[i] END;
            -- A shadow bucket's marker lasts the clock-aligned window its name says.
            IF shadow AND stored_algorithms[p] = 'bucket'
              AND window_start(limit_windows[i], stored_starts[p]) = window_start(limit_windows[i], now) THEN
              notified_after[i] := stored_notified[p];
            END IF;
            available := floor(levels_after[i])::bigint;
            IF available < cost AND NOT shadow THEN
              room_at := greatest(room_at, now + make_interval(secs => (least(cost, limit_capacities[i]) - levels_after[i])
                * window_seconds(limit_windows[i]) / limit_limits[i]));
            END IF;
          END IF;
          -- A shadow limit never refuses.
          IF NOT shadow THEN room := least(room, available); END IF;
        END LOOP;

        admitted := CASE
          WHEN banned_until IS NOT NULL THEN false
          WHEN cost = 0 THEN true
          ELSE coalesce(room, want) >= cost AND (NOT has_credits OR credits >= cost) END;
        reason := CASE
          WHEN admitted THEN NULL
          WHEN banned_until IS NOT NULL THEN 'key_banned'
          WHEN coalesce(room, cost) >= cost THEN 'credits_exhausted'
          ELSE 'rate_limited' END;
        retry := CASE reason
          WHEN 'key_banned' THEN banned_until
          -- Only the credits are short: a retry succeeds at their next refill, if they have one.
          WHEN 'credits_exhausted' THEN window_end(refill_every, now)
          WHEN 'rate_limited' THEN room_at END;
        -- A lease only beside fixed windows alone: a bucket, credits or a shadow limit are counted
        -- request by request.
        leasable := NOT coalesce(buckets, false) AND NOT has_credits AND NOT coalesce(shadows, false);
        granted := CASE WHEN admitted AND cost > 0 THEN least(CASE WHEN leasable THEN greatest(want, cost) ELSE cost END,
          coalesce(room, want), coalesce(credits, want)) ELSE 0 END;
        -- A lease lives until the shortest window ends (calendar windows nest), and at most a second${sql.raw(
          anchored
            ? "; a\n        -- month that follows the account's anchor, the last enforced window, may end before the shortest."
            : '.'
        )}
        lease_until := CASE WHEN leasable THEN least(now + interval '1 second', ends[1]${sql.raw(anchored ? ', ends[n]' : '')}) ELSE now END;

        -- Each window after the request: what is left of it and when it is whole again, and the
        -- usage.threshold percentages it passed (each fixed window of an hour or longer passing 80 % and
        -- 100 %, once per window). A shadow window counts what was granted, going below 0 by what it
        -- would have refused, and names itself in refusing_windows the first time in its window.
        IF n = 0 THEN
          RETURN (admitted, reason, retry, granted, lease_until, windows, algorithms, limits, remaining, resets,
            starts_after, used_after, levels_after, notified_after, crossed_windows, crossed_percents, refusing_windows);
        END IF;
        remaining := limits;
        resets := array_fill(0::double precision, ARRAY[n]);
        FOR i IN 1..n LOOP
          shadow := limit_shadows[i];
          IF limit_algorithms[i] = 'fixed' THEN
            used_after[i] := used_after[i] + granted;
            remaining[i] := CASE WHEN shadow THEN limit_limits[i] - used_after[i]
              ELSE greatest(0, limit_limits[i] - used_after[i]) END;
            resets[i] := epoch_ms(ends[i]);
            IF granted > 0 AND NOT shadow AND limit_windows[i] IN ('hour', 'day', 'month') THEN
              notified := notified_after[i];
              notified_after[i] := greatest(notified, CASE
                WHEN used_after[i] * 100 >= limit_limits[i]::bigint * 100 THEN 100
                WHEN used_after[i] * 100 >= limit_limits[i]::bigint * 80 THEN 80
                ELSE 0 END);
              IF notified < 80 AND notified_after[i] >= 80 THEN
                crossed_windows := crossed_windows || limit_windows[i];
                crossed_percents := crossed_percents || 80;
              END IF;
              IF notified < 100 AND notified_after[i] >= 100 THEN
                crossed_windows := crossed_windows || limit_windows[i];
                crossed_percents := crossed_percents || 100;
              END IF;
            END IF;
          ELSE
            levels_after[i] := levels_after[i] - granted;
            remaining[i] := floor(levels_after[i])::bigint;
            resets[i] := epoch_ms(now + make_interval(secs => (limit_capacities[i] - levels_after[i])
              * window_seconds(limit_windows[i]) / limit_limits[i]));
          END IF;
          IF shadow AND granted > 0 AND remaining[i] < 0 AND notified_after[i] = 0 THEN
            notified_after[i] := 1;
            refusing_windows := refusing_windows || limit_windows[i];
          END IF;
        END LOOP;
        RETURN (admitted, reason, retry, granted, lease_until, windows, algorithms, limits, remaining, resets,
          starts_after, used_after, levels_after, notified_after, crossed_windows, crossed_percents, refusing_windows);
      END
    $$
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION decide_account`.execute(db)
  await createDecideAccount(db, 'calendar')
  await createCountUnitsPerAccount(db, 'once locked', 'with shadows')
  await sql`DROP FUNCTION account_limits(bigint, timestamptz)`.execute(db)
  await sql`
    CREATE FUNCTION account_limits(account bigint, at timestamptz)
    RETURNS TABLE ("window" text, algorithm text, "limit" integer, capacity integer, shadow boolean)
    LANGUAGE sql STABLE AS $function$
      SELECT DISTINCT ON (l."window", l.shadow) l."window", l.algorithm, l."limit", coalesce(l.burst, l."limit"), l.shadow
      FROM (
        SELECT o."window", o.algorithm, o."limit", o.burst, false AS shadow, 0 AS rank FROM account_limit_overrides o
        WHERE o.account_id = account AND (o.until IS NULL OR o.until > at)
        UNION ALL
        SELECT p."window", p.algorithm, p."limit", p.burst, p.shadow, 1 FROM plan_limits p
        JOIN accounts a ON a.plan = p.plan WHERE a.id = account
      ) AS l
      ORDER BY l."window", l.shadow, l.rank
    $function$
  `.execute(db)
  await sql`DROP FUNCTION anchored_month_end(timestamptz, timestamptz)`.execute(db)
  await sql`DROP FUNCTION anchored_month_start(timestamptz, timestamptz)`.execute(db)
  await sql`DROP FUNCTION anchored_month_number(timestamptz, timestamptz)`.execute(db)
  await sql`DROP FUNCTION anchored_month(timestamptz, integer)`.execute(db)
  await sql`ALTER TABLE plan_limits DROP COLUMN anchor`.execute(db)
  await sql`ALTER TABLE accounts DROP COLUMN cycle_anchor`.execute(db)
}
