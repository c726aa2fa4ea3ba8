import { sql, type Kysely } from 'kysely'
import { createCountUnitsPerAccount, type MonthsCounted } from './0040_count_units_decided_per_account.js'

/**
 * A plan's limit may be a shadow: counted like the others, never refusing. A plan holds at most one
 * enforced and one shadow limit a window, so the key takes `shadow`. A shadow window's counter is
 * stored beside the enforced one's under its window's name and `:shadow` ("minute:shadow"). An
 * admitted request that a shadow window has no room for takes it below 0 and, the first time in its
 * window, writes a limit.would_refuse event (its `notified` marker). An account with a shadow limit
 * in force gets no lease.
 *
 * The release before runs beside this one while it migrates, and its statements hold the functions
 * and types they call by oid: those are given new bodies, never dropped and made again (a statement
 * under way would fail with "cache lookup failed for function"). account_limits keeps its columns and
 * answers the enforced limits alone; account_windows is every limit, with its shadow flag and its
 * month's anchor (0043 fills it); decide_account gets an overload taking both, with a result type of
 * its own.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE plan_limits ADD COLUMN shadow boolean NOT NULL DEFAULT false,
      DROP CONSTRAINT plan_limits_pkey,
      ADD CONSTRAINT plan_limits_pkey PRIMARY KEY (plan, "window", shadow)
  `.execute(db)
  await createAccountLimits(db, 'enforced')
  await createAccountWindows(db, 'calendar')
  await sql`
    CREATE TYPE account_decision_with_shadows AS (
      admitted boolean, reason text, retry timestamptz, granted integer, lease_until timestamptz,
      windows text[], algorithms text[], limits integer[], remaining bigint[], resets double precision[],
      starts_after timestamptz[], used_after bigint[], levels_after double precision[],
      notified_after smallint[], crossed_windows text[], crossed_percents integer[], refusing_windows text[]
    )
  `.execute(db)
  await createDecideAccountWithShadows(db, 'calendar')
  await createCountUnitsPerAccount(db, 'once locked', 'with shadows')
}

/**
 * account_limits, the limits an account is held to at `at`: its overrides in force, else its plan's.
 * Its columns are the release before's; from 0042 a plan's shadow limits are not among them.
 */
async function createAccountLimits(db: Kysely<any>, limits: 'all' | 'enforced'): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION account_limits(account bigint, at timestamptz)
    RETURNS TABLE ("window" text, algorithm text, "limit" integer, capacity integer)
    LANGUAGE sql STABLE
    AS $$
      SELECT DISTINCT ON (l."window") l."window", l.algorithm, l."limit", coalesce(l.burst, l."limit")
      FROM (
        SELECT o."window", o.algorithm, o."limit", o.burst, 0 AS rank FROM account_limit_overrides o
        WHERE o.account_id = account AND (o.until IS NULL OR o.until > at)
        UNION ALL
        SELECT p."window", p.algorithm, p."limit", p.burst, 1 FROM plan_limits p
        JOIN accounts a ON a.plan = p.plan WHERE a.id = account${sql.raw(limits === 'enforced' ? ' AND NOT p.shadow' : '')}
      ) AS l
      ORDER BY l."window", l.rank
    $$
  `.execute(db)
}

/**
 * account_windows, every limit an account is counted against at `at`, enforced and shadow, each with
 * the anchor its month is reckoned from: the account's cycle_anchor for a plan's month that follows
 * it (0043), null for any other limit (an override's month is the calendar's).
 */
export async function createAccountWindows(db: Kysely<any>, months: MonthsCounted): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION account_windows(account bigint, at timestamptz)
    RETURNS TABLE ("window" text, algorithm text, "limit" integer, capacity integer, shadow boolean, anchor timestamptz)
    LANGUAGE sql STABLE
    AS $$
      SELECT DISTINCT ON (l."window", l.shadow) l."window", l.algorithm, l."limit", coalesce(l.burst, l."limit"),
        l.shadow, l.anchor
      FROM (
        SELECT o."window", o.algorithm, o."limit", o.burst, false AS shadow, NULL::timestamptz AS anchor, 0 AS rank
        FROM account_limit_overrides o
        WHERE o.account_id = account AND (o.until IS NULL OR o.until > at)
        UNION ALL
        SELECT p."window", p.algorithm, p."limit", p.burst, p.shadow,
          ${sql.raw(months === 'anchored' ? "CASE WHEN p.anchor = 'account' THEN coalesce(a.cycle_anchor, a.created_at) END" : 'NULL::timestamptz')}, 1
        FROM plan_limits p
        JOIN accounts a ON a.plan = p.plan WHERE a.id = account
      ) AS l
      ORDER BY l."window", l.shadow, l.rank
    $$
  `.execute(db)
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

/**
 * decide_account with shadow limits, an overload of 0040's with two more arguments: each limit's shadow
 * flag and its anchor (null but for a month that follows the account's, 0043). It reckons months as
 * `months` says: on the calendar (0042), or from an anchored month's anchor (0043).
 */
export async function createDecideAccountWithShadows(db: Kysely<any>, months: MonthsCounted): Promise<void> {
  const anchored = months === 'anchored'
  await sql`
    CREATE OR REPLACE FUNCTION decide_account(
      now timestamptz, cost integer, want integer, returned integer, returned_at double precision,
      banned_until timestamptz, has_credits boolean, credits bigint, refill_every text,
      stored_windows text[], stored_algorithms text[], stored_starts timestamptz[], stored_used bigint[],
      stored_levels double precision[], stored_notified smallint[],
      limit_windows text[], limit_algorithms text[], limit_limits integer[], limit_capacities integer[],
      limit_shadows boolean[], limit_anchors timestamptz[])
    RETURNS account_decision_with_shadows
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
  await createCountUnitsPerAccount(db, 'once locked')
  await sql`DROP FUNCTION decide_account(timestamptz, integer, integer, integer, double precision, timestamptz, boolean,
    bigint, text, text[], text[], timestamptz[], bigint[], double precision[], smallint[], text[], text[], integer[],
    integer[], boolean[], timestamptz[])`.execute(db)
  await sql`DROP TYPE account_decision_with_shadows`.execute(db)
  await sql`DROP FUNCTION account_windows(bigint, timestamptz)`.execute(db)
  await sql`DELETE FROM plan_limits WHERE shadow`.execute(db)
  await sql`
    UPDATE account_counters k SET (windows, algorithms, started_ats, used, levels, notified) = (
      SELECT coalesce(array_agg(c."window"), '{}'), coalesce(array_agg(c.algorithm), '{}'),
        coalesce(array_agg(c.started_at), '{}'), coalesce(array_agg(c.used), '{}'),
        coalesce(array_agg(c.level), '{}'), coalesce(array_agg(c.notified), '{}')
      FROM unnest(k.windows, k.algorithms, k.started_ats, k.used, k.levels, k.notified)
        AS c("window", algorithm, started_at, used, level, notified)
      WHERE c."window" NOT LIKE '%:shadow')
    WHERE EXISTS (SELECT FROM unnest(k.windows) AS w(name) WHERE w.name LIKE '%:shadow')
  `.execute(db)
  await createAccountLimits(db, 'all')
  await sql`
    ALTER TABLE plan_limits DROP CONSTRAINT plan_limits_pkey,
      ADD CONSTRAINT plan_limits_pkey PRIMARY KEY (plan, "window"),
      DROP COLUMN shadow
  `.execute(db)
}
