import { sql, type Kysely } from 'kysely'
import { COUNTERS_FOUND_THEN_MADE, createCountUnits } from './0034_counters_one_row_per_account.js'

/**
 * count_units decides each account's request in one call of decide_account, a function of the
 * account's stored counters, its limits and its credits, where it took window functions and array
 * aggregates over a row a window. It decides, writes and answers exactly as in 0034: callers see no difference.
 * Starting the executor's window aggregates was most of the work of a one-account call, and the rows
 * a window carried through six stages most of each further account's (docs/benchmark.md).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TYPE account_decision AS (
      admitted boolean, reason text, retry timestamptz, granted integer, lease_until timestamptz,
      windows text[], algorithms text[], limits integer[], remaining bigint[], resets double precision[],
      starts_after timestamptz[], used_after bigint[], levels_after double precision[],
      notified_after smallint[], crossed_windows text[], crossed_percents integer[]
    );
  `.execute(db)
  await createDecideAccount(db)
  await createCountUnitsPerAccount(db, 'on entry')
}

/** decide_account as 0040 made it: every limit enforced. */
async function createDecideAccount(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION decide_account(
      now timestamptz, cost integer, want integer, returned integer, returned_at double precision,
      banned_until timestamptz, has_credits boolean, credits bigint, refill_every text,
      stored_windows text[], stored_algorithms text[], stored_starts timestamptz[], stored_used bigint[],
      stored_levels double precision[], stored_notified smallint[],
      limit_windows text[], limit_algorithms text[], limit_limits integer[], limit_capacities integer[])
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
        n integer := coalesce(cardinality(limit_windows), 0);
        buckets boolean := 'bucket' = ANY (limit_algorithms);
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
        -- it was measured. The rows kept are those of the windows in force, shortest first.
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
          p := array_position(stored_windows, limit_windows[i]);
          ends[i] := window_end(limit_windows[i], now);
          IF fixed THEN
            starts_after[i] := window_start(limit_windows[i], now);
            IF stored_algorithms[p] = 'fixed' AND stored_starts[p] = starts_after[i] THEN
              used_after[i] := greatest(0, stored_used[p]
                - CASE WHEN returned > 0 AND returned_at >= epoch_ms(stored_starts[p]) THEN returned ELSE 0 END);
              notified_after[i] := stored_notified[p];
            END IF;
            available := limit_limits[i] - used_after[i];
            IF available < cost THEN room_at := greatest(room_at, ends[i]); END IF;
          ELSE
            levels_after[i] := CASE WHEN stored_algorithms[p] = 'bucket' THEN least(limit_capacities[i]::double precision,
                stored_levels[p] + greatest(0, extract(epoch FROM now - stored_starts[p])) * limit_limits[i]
                  / window_seconds(limit_windows[i]))
              ELSE limit_capacities[i] END;
            available := floor(levels_after[i])::bigint;
            IF available < cost THEN
              room_at := greatest(room_at, now + make_interval(secs => (least(cost, limit_capacities[i]) - levels_after[i])
                * window_seconds(limit_windows[i]) / limit_limits[i]));
            END IF;
          END IF;
          room := least(room, available);
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
        -- A lease only beside fixed windows alone: a bucket or credits are counted request by request.
        leasable := NOT coalesce(buckets, false) AND NOT has_credits;
        granted := CASE WHEN admitted AND cost > 0 THEN least(CASE WHEN leasable THEN greatest(want, cost) ELSE cost END,
          coalesce(room, want), coalesce(credits, want)) ELSE 0 END;
        -- A lease lives until the shortest window ends (calendar windows nest), and at most a second.
        lease_until := CASE WHEN leasable THEN least(now + interval '1 second', ends[1]) ELSE now END;

        -- Each window after the request: what is left of it and when it is whole again, and the
        -- usage.threshold percentages it passed (each fixed window of an hour or longer passing 80 % and
        -- 100 %, once per window).
        IF n = 0 THEN
          RETURN (admitted, reason, retry, granted, lease_until, windows, algorithms, limits, remaining, resets,
            starts_after, used_after, levels_after, notified_after, crossed_windows, crossed_percents);
        END IF;
        remaining := limits;
        resets := array_fill(0::double precision, ARRAY[n]);
        FOR i IN 1..n LOOP
          IF limit_algorithms[i] = 'fixed' THEN
            used_after[i] := used_after[i] + granted;
            remaining[i] := greatest(0, limit_limits[i] - used_after[i]);
            resets[i] := epoch_ms(ends[i]);
            IF granted > 0 AND limit_windows[i] IN ('hour', 'day', 'month') THEN
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
        END LOOP;
        RETURN (admitted, reason, retry, granted, lease_until, windows, algorithms, limits, remaining, resets,
          starts_after, used_after, levels_after, notified_after, crossed_windows, crossed_percents);
      END
    $$
  `.execute(db)
}

/**
 * When count_units reads the database's clock: on entry (0040), or once it holds its accounts'
 * counters (0041), so that a call that waited for another's locks never decides before it.
 */
export type ClockReading = 'on entry' | 'once locked'

// After every lock: a call that waited decides after the one it waited for, never in the window
// before it, which would start that window's counter afresh.
const ONCE_LOCKED = '      v_now := service_now();\n'

/**
 * Whether count_units reckons the bounds of its events' windows from each limit's anchor (0043: a
 * month that follows the account's cycle_anchor, null for any other limit) or on the calendar.
 */
export type MonthsCounted = 'calendar' | 'anchored'

// The bounds of an event's window: an anchored month's from its anchor (0043).
const WINDOW_BOUNDS = {
  calendar: {
    start: 'window_start(t."window", v_now)',
    end: 'window_end(t."window", v_now)'
  },
  anchored: {
    start:
      'CASE WHEN o.anchors[p.at] IS NULL THEN window_start(t."window", v_now) ELSE anchored_month_start(o.anchors[p.at], v_now) END',
    end: 'CASE WHEN o.anchors[p.at] IS NULL THEN window_end(t."window", v_now) ELSE anchored_month_end(o.anchors[p.at], v_now) END'
  }
}

// A shadow window that would have refused an admitted request, once a window and account (0042).
const wouldRefuse = (months: MonthsCounted) => `            UNION ALL
            SELECT o.account_id, 3, t."window", NULL, 'limit.would_refuse', jsonb_build_object(
                'account', jsonb_build_object('id', o.account_id::text),
                'key', jsonb_build_object('id', o.key_id::text),
                'window', t."window", 'limit', o.limits[p.at], 'used', o.limits[p.at] - o.remaining[p.at],
                'windowStart', to_char(${WINDOW_BOUNDS[months].start}, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                'windowEnd', to_char(${WINDOW_BOUNDS[months].end}, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
            FROM outcome o
            CROSS JOIN LATERAL unnest(o.refusing_windows) AS t("window")
            CROSS JOIN LATERAL (SELECT array_position(o.windows, t."window" || ':shadow') AS at) AS p
`

/**
 * Whether count_units reads its accounts' limits from account_windows and passes decide_account their
 * shadow flags and anchors (0042) or reads the enforced limits alone from account_limits.
 */
export type LimitsCounted = 'enforced' | 'with shadows'

/**
 * Where count_units reads the limits of an account without an override in force: account_windows, a
 * join of its plan's rows sorted and aggregated a call, or its plan's one row of plan_windows (0045).
 */
type PlansRead = 'joined' | 'one row'

/**
 * How count_units takes its accounts' counters: locking the rows it finds, then making those of
 * accounts counted for the first time and locking again (0040), or making or locking each account's
 * row in turn, in account order (0048), so that no call holds a row after one it waits to make.
 */
type RowsTaken = 'found, then made' | 'in turn'

/**
 * What count_units takes an account's credits to be: what is stored plus the units a request hands
 * back from a lease (0040), or what is stored (0049). Leases are given only to accounts without
 * credits, so units handed back never came out of credits: an account given credits while it held a
 * lease got them as credits too.
 */
type CreditsRead = 'given back' | 'as stored'

/**
 * How count_units writes its webhook events: by an insert in every statement (0040), which PostgreSQL
 * readies on each call, though most calls have no event to write, or by record_account_events for
 * each outcome that has one (0050), in account order.
 */
type EventsWritten = 'in the statement' | 'when due'

// Every outcome's webhook events, by one insert in each statement (0040 to 0049).
const EVENTS_IN_THE_STATEMENT = (shadows: boolean, months: MonthsCounted) => `        events AS (
          INSERT INTO webhook_events (type, at, account_id, data)
          SELECT e.type, v_now, e.account_id, e.data FROM (
            SELECT o.account_id, 1 AS kind, t."window", t.percent, 'usage.threshold' AS type, jsonb_build_object(
                'account', jsonb_build_object('id', o.account_id::text),
                'window', t."window", 'limit', o.limits[p.at], 'used', o.used_after[p.at], 'percent', t.percent,
                'windowStart', to_char(${WINDOW_BOUNDS[months].start}, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                'windowEnd', to_char(${WINDOW_BOUNDS[months].end}, 'YYYY-MM-DD"T"HH24:MI:SS"Z"')) AS data
            FROM outcome o
            CROSS JOIN LATERAL unnest(o.crossed_windows, o.crossed_percents) AS t("window", percent)
            CROSS JOIN LATERAL (SELECT array_position(o.windows, t."window") AS at) AS p
            UNION ALL
            SELECT o.account_id, 2, NULL, NULL, 'key.banned', jsonb_build_object(
                'key', jsonb_build_object('id', o.key_id::text, 'accountId', o.account_id::text),
                'bannedUntil', to_char(s.banned_until, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
            FROM streaks s JOIN outcome o ON o.key_id = s.api_key_id
            WHERE s.banned_until IS NOT NULL
${shadows ? wouldRefuse(months) : ''}          ) AS e
          ORDER BY e.account_id, e.kind, e."window", e.percent
        ),
`

// The outcomes that have an event, each account's written by one call (0050). Read by the final
// SELECT, so that it runs: a CTE that writes nothing itself runs only when read.
const EVENTS_WHEN_DUE = `        -- The webhook events of the outcomes that have one, account by account.
        events AS (
          SELECT record_account_events(v_now, o.account_id, o.key_id, o.windows, o.limits, o.remaining, o.anchors,
            o.used_after, o.crossed_windows, o.crossed_percents, o.refusing_windows, o.newly_banned) AS recorded
          FROM (
            SELECT o.*, s.banned_until AS newly_banned FROM outcome o
            LEFT JOIN streaks s ON s.api_key_id = o.key_id
            WHERE o.crossed_windows <> '{}' OR o.refusing_windows <> '{}' OR s.banned_until IS NOT NULL
            ORDER BY o.account_id
            OFFSET 0
          ) AS o
        ),
`

// Each row made or locked before the next account's is touched: an insert that meets an account's row
// locks it (an ON CONFLICT update locks the row even when its WHERE writes nothing), one that meets
// none makes it, and one that meets a row another call is making waits for that call alone.
const IN_TURN = `        -- its row in its turn.
        INSERT INTO account_counters (account_id) SELECT x.id FROM unnest(v_accounts) AS x(id) ORDER BY x.id
          ON CONFLICT (account_id) DO UPDATE SET account_id = excluded.account_id WHERE false;`

// The limits CTE before 0045: every account's limits joined, sorted and aggregated on each call.
const LIMITS_JOINED = (
  shadows: boolean
) => `        -- The limits in force for this round's accounts (${shadows ? 'account_windows: enforced ones first' : 'account_limits'}), shortest window first.
        limits AS (
          SELECT l.account_id, array_agg(l."window") AS windows, array_agg(l.algorithm) AS algorithms,
            array_agg(l."limit") AS limits, array_agg(l.capacity) AS capacities${shadows ? ', array_agg(l.shadow) AS shadows, array_agg(l.anchor) AS anchors' : ''}
          FROM (
            SELECT r.account_id, a.* FROM request r
            CROSS JOIN LATERAL ${shadows ? 'account_windows' : 'account_limits'}(r.account_id, v_now) AS a
            ORDER BY r.account_id, ${shadows ? 'a.shadow, ' : ''}window_seconds(a."window")
          ) AS l
          GROUP BY l.account_id
        ),`
// Each account's limits in the order decide_account takes them (0045). A plan none of whose months
// follows the account's anchor passes null anchors, not an array of nulls: each reads as null either way.
const REQUEST_LIMITS = `
            -- Its limits, enforced ones first, each shortest first: its plan's row of plan_windows, or
            -- account_windows for an account with an override in force.
            coalesce(o.windows, p.windows) AS limit_windows, coalesce(o.algorithms, p.algorithms) AS limit_algorithms,
            coalesce(o.limits, p.limits) AS limit_limits, coalesce(o.capacities, p.capacities) AS limit_capacities,
            coalesce(o.shadows, p.shadows) AS limit_shadows, coalesce(o.anchors, CASE WHEN p.anchored THEN ARRAY(
              SELECT CASE WHEN m.follows THEN coalesce(a.cycle_anchor, a.created_at) END
              FROM unnest(p.account_months) WITH ORDINALITY AS m(follows, n) ORDER BY m.n) END) AS limit_anchors,`
const REQUEST_LIMITS_JOINS = `
          JOIN accounts a ON a.id = i.account_id
          LEFT JOIN plan_windows p ON p.plan = a.plan
          LEFT JOIN LATERAL (
            SELECT * FROM account_window_arrays(i.account_id, v_now)
            -- Of the account alone, so tested before the function is called: an account without an
            -- override in force skips it.
            WHERE EXISTS (SELECT FROM account_limit_overrides x WHERE x.account_id = i.account_id
              AND (x.until IS NULL OR x.until > v_now))
            OFFSET 0
          ) AS o ON true`
const LIMIT_ARGUMENTS = `r.limit_windows, r.limit_algorithms,
              r.limit_limits, r.limit_capacities, r.limit_shadows, r.limit_anchors`

/**
 * count_units as 0040 made it, reading the clock as `clock` says, passing the limits `limits` says,
 * reckoning months as `months` says, reading plans' limits as `plans` says (one row needs shadows
 * and anchored months), taking its counters' rows as `rows` says and its accounts' credits as
 * `credits` says.
 */
export async function createCountUnitsPerAccount(
  db: Kysely<any>,
  clock: ClockReading,
  limits: LimitsCounted = 'enforced',
  months: MonthsCounted = 'calendar',
  plans: PlansRead = 'joined',
  rows: RowsTaken = 'found, then made',
  credits: CreditsRead = 'given back',
  events: EventsWritten = 'in the statement'
): Promise<void> {
  const shadows = limits === 'with shadows'
  const anchored = months === 'anchored'
  const oneRow = plans === 'one row'
  const given = credits === 'given back' ? ' + i.returned' : ''
  const whenDue = events === 'when due'
  await sql`
    CREATE OR REPLACE FUNCTION count_units(
      api_key_ids bigint[], account_ids bigint[], costs integer[], wants integer[],
      returned integer[], returned_ats double precision[], ban_afters integer[], ban_seconds integer[],
      usage_key_ids bigint[], usage_hours double precision[], usage_admitted integer[], usage_refused integer[],
      usage_units bigint[]
    ) RETURNS TABLE (
      "apiKeyId" bigint, admitted boolean, granted integer, "now" double precision, "leaseUntil" double precision,
      reason text, "retryAt" double precision, "bannedUntil" double precision, "newlyBanned" boolean,
      "windows" text[], algorithms text[], limits integer[], remaining bigint[], resets double precision[],
      credits bigint
    ) LANGUAGE plpgsql SET "TimeZone" = 'UTC' SET plan_cache_mode = 'force_generic_plan' AS $function$
    #variable_conflict use_column
    DECLARE
      v_now timestamptz${sql.raw(clock === 'on entry' ? ' := service_now()' : '')};
      v_accounts bigint[];
      v_keys bigint[];
      -- The most requests of one account in the batch: each round decides one request of each account.
      v_rounds integer;
${sql.raw(rows === 'in turn' ? '' : '      v_locked integer;\n')}      -- How the session commits; counting commits without waiting for the flush or the standby (a
      -- crash may lose the last fraction of a second of counts: docs/reliability.md), a ban as this.
      v_commit text := current_setting('synchronous_commit');
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      SELECT array_agg(DISTINCT i.account_id ORDER BY i.account_id), array_agg(DISTINCT i.key_id ORDER BY i.key_id),
        coalesce(max(i.n), 0)
      INTO v_accounts, v_keys, v_rounds
      FROM (
        SELECT u.key_id, u.account_id, count(*) OVER (PARTITION BY u.account_id) AS n
        FROM unnest(api_key_ids, account_ids) AS u(key_id, account_id)
      ) AS i;

      IF v_rounds > 0 THEN
        -- Every lock the batch needs, before any is used, in one order that every statement follows:
        -- the accounts' counters by account, then the keys' bans by key, then the accounts' credits by
        -- account. An account counted for the first time (or whose idle counters were deleted) gets
${sql.raw(rows === 'in turn' ? IN_TURN : COUNTERS_FOUND_THEN_MADE)}
        PERFORM FROM api_key_bans b WHERE b.api_key_id = ANY (v_keys) ORDER BY b.api_key_id FOR UPDATE;
        PERFORM FROM account_credits c WHERE c.account_id = ANY (v_accounts) ORDER BY c.account_id FOR UPDATE;
      END IF;
${sql.raw(clock === 'once locked' ? ONCE_LOCKED : '')}
      -- At least one round: a call with usage reports alone writes them in the first.
      FOR v_round IN 1..greatest(v_rounds, 1) LOOP
        RETURN QUERY
        -- This round's request of each account, with its key's running ban and its account's credits,
        -- raised to the refill amount once per refill window${sql.raw(credits === 'given back' ? ' and given back what a lease did not use' : '')}.
        WITH request AS (
          SELECT i.key_id, i.account_id, i.cost, i.want, i.returned, i.returned_at, i.ban_after, i.ban_seconds,
            CASE WHEN b.banned_until > v_now THEN b.banned_until END AS banned_until,
            c.account_id IS NOT NULL AS has_credits, c.refill_every, f.refills,
            w.windows AS stored_windows, w.algorithms AS stored_algorithms, w.started_ats AS stored_starts,
            w.used AS stored_used, w.levels AS stored_levels, w.notified AS stored_notified,${sql.raw(oneRow ? REQUEST_LIMITS : '')}
            CASE
              WHEN f.refills THEN greatest(c.remaining${sql.raw(given)}, c.refill_amount)
              ELSE c.remaining${sql.raw(given)} END AS credits
          FROM (
            SELECT i.*, row_number() OVER (PARTITION BY i.account_id ORDER BY i.key_id, i.n) AS round
            FROM unnest(api_key_ids, account_ids, costs, wants, count_units.returned, returned_ats, ban_afters,
              count_units.ban_seconds)
              WITH ORDINALITY AS i(key_id, account_id, cost, want, returned, returned_at, ban_after, ban_seconds, n)
          ) AS i
          JOIN account_counters w ON w.account_id = i.account_id
          LEFT JOIN api_key_bans b ON b.api_key_id = i.key_id
          LEFT JOIN account_credits c ON c.account_id = i.account_id
          CROSS JOIN LATERAL (SELECT c.refill_every IS NOT NULL AND window_start(c.refill_every, v_now) > c.refilled_at
            AS refills) AS f${sql.raw(oneRow ? REQUEST_LIMITS_JOINS : '')}
          WHERE i.round = v_round
        ),
${sql.raw(oneRow ? '' : LIMITS_JOINED(shadows) + '\n')}        -- Each account's request decided against its limits, its stored counters and its credits.
        outcome AS MATERIALIZED (
          SELECT r.key_id, r.account_id, r.cost, r.ban_after, r.ban_seconds, r.banned_until, r.has_credits,
            r.refill_every, r.refills, r.credits, ${sql.raw(anchored ? (oneRow ? 'r.limit_anchors AS anchors, ' : 'r.anchors, ') : '')}(r.d).*
          FROM (
            SELECT r.*, ${sql.raw(anchored && !oneRow ? 'l.anchors, ' : '')}decide_account(v_now, r.cost, r.want, r.returned, r.returned_at, r.banned_until,
              r.has_credits, r.credits, r.refill_every, r.stored_windows, r.stored_algorithms, r.stored_starts,
              r.stored_used, r.stored_levels, r.stored_notified, ${sql.raw(oneRow ? LIMIT_ARGUMENTS : `l.windows, l.algorithms, l.limits, l.capacities${shadows ? ', l.shadows, l.anchors' : ''}`)}) AS d
            FROM request r${sql.raw(oneRow ? '' : '\n            LEFT JOIN limits l ON l.account_id = r.account_id')}
            -- Not pulled up, so that the call is made once, not once a field.
            OFFSET 0
          ) AS r
        ),
        -- One row an account, every window of it: one heap-only update.
        counters AS (
          UPDATE account_counters k SET
            windows = coalesce(o.windows, '{}'),
            algorithms = coalesce(o.algorithms, '{}'),
            started_ats = coalesce(o.starts_after, '{}'),
            used = coalesce(o.used_after, '{}'),
            levels = coalesce(o.levels_after, '{}'),
            notified = coalesce(o.notified_after, '{}')
          FROM outcome o
          WHERE k.account_id = o.account_id
        ),
        spent AS (
          UPDATE account_credits c SET
            remaining = o.credits - o.granted,
            refilled_at = CASE WHEN o.refills THEN window_start(o.refill_every, v_now) ELSE c.refilled_at END,
            updated_at = v_now
          FROM outcome o WHERE o.has_credits AND c.account_id = o.account_id
        ),
        -- A refusal adds to its key's streak, which lasts as long as the window that refuses; more than
        -- ban_after refusals after the first 429 ban the key. Instances that hold a lease of the account
        -- are told at once, so that they refuse the key from now on, not when they next count. A ban is
        -- committed as the session commits (to the synchronous standby), so that a failover keeps it.
        streaks AS (
          INSERT INTO api_key_bans AS b (api_key_id, refused, refused_until, banned_until, ban_after, ban_seconds,
            updated_at)
          SELECT o.key_id, 1, o.retry, NULL, o.ban_after, o.ban_seconds, v_now
          FROM outcome o
          WHERE NOT o.admitted AND o.banned_until IS NULL AND o.ban_after IS NOT NULL
          ORDER BY o.key_id
          ON CONFLICT (api_key_id) DO UPDATE SET (refused, refused_until, banned_until, ban_after, ban_seconds,
            updated_at) = (
            SELECT
              CASE WHEN t.bans THEN 0 ELSE t.streak END,
              CASE
                WHEN t.bans THEN NULL
                WHEN b.refused_until > v_now THEN b.refused_until
                ELSE excluded.refused_until END,
              CASE WHEN t.bans THEN v_now + make_interval(secs => excluded.ban_seconds) ELSE b.banned_until END,
              excluded.ban_after, excluded.ban_seconds, v_now
            FROM (SELECT s.streak, s.streak > excluded.ban_after + 1 AS bans
              FROM (SELECT CASE WHEN b.refused_until > v_now THEN b.refused ELSE 0 END + 1 AS streak) AS s) AS t
          )
          RETURNING b.api_key_id, CASE WHEN b.banned_until > v_now THEN b.banned_until END AS banned_until,
            CASE WHEN b.banned_until > v_now
              THEN pg_notify('api_key_banned', b.api_key_id || ':' || (extract(epoch FROM b.banned_until) * 1000)::bigint)
            END AS announced,
            CASE WHEN b.banned_until > v_now THEN set_config('synchronous_commit', v_commit, true) END AS durable
        ),
${sql.raw(whenDue ? EVENTS_WHEN_DUE : EVENTS_IN_THE_STATEMENT(shadows, months))}        -- Usage per key and hour: this round's requests, and (in the first round) those decided from
        -- leases and reported.
        usage_counted AS (
          INSERT INTO api_key_usage AS u (api_key_id, hour, admitted, refused, units)
          SELECT x.key_id, x.hour, sum(x.admitted), sum(x.refused), sum(x.units)
          FROM (
            SELECT o.key_id, window_start('hour', v_now) AS hour, o.admitted::integer AS admitted,
              (NOT o.admitted)::integer AS refused, CASE WHEN o.admitted THEN o.cost ELSE 0 END::bigint AS units
            FROM outcome o
            UNION ALL
            SELECT p.key_id, window_start('hour', timestamptz 'epoch' + p.hour_ms * interval '1 millisecond'),
              p.admitted, p.refused, p.units
            FROM unnest(usage_key_ids, usage_hours, usage_admitted, usage_refused, usage_units)
              AS p(key_id, hour_ms, admitted, refused, units)
            WHERE v_round = 1
          ) AS x
          GROUP BY x.key_id, x.hour
          ORDER BY x.key_id, x.hour
          ON CONFLICT (api_key_id, hour) DO UPDATE SET
            admitted = u.admitted + excluded.admitted,
            refused = u.refused + excluded.refused,
            units = u.units + excluded.units
        )
        SELECT o.key_id, o.admitted, o.granted, epoch_ms(v_now), epoch_ms(o.lease_until),
          CASE WHEN s.banned_until IS NOT NULL THEN 'key_banned' ELSE o.reason END,
          epoch_ms(coalesce(s.banned_until, o.retry)),
          epoch_ms(coalesce(s.banned_until, o.banned_until)),
          s.banned_until IS NOT NULL,
          o.windows, o.algorithms, o.limits, o.remaining, o.resets,
          CASE WHEN o.has_credits THEN o.credits - o.granted END
        FROM outcome o
        LEFT JOIN streaks s ON s.api_key_id = o.key_id${sql.raw(whenDue ? '\n        CROSS JOIN (SELECT count(*) FROM events) AS recorded' : '')}
        ORDER BY o.account_id, o.key_id;
      END LOOP;
    END
    $function$
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await createCountUnits(db)
  await sql`DROP FUNCTION decide_account`.execute(db)
  await sql`DROP TYPE account_decision`.execute(db)
}
