import { sql, type Kysely } from 'kysely'
import { createDecideAccountWithShadows } from './0042_shadow_limits.js'

/**
 * count_units decides each account as before for fewer instructions (docs/benchmark.md): decide_account,
 * the overload with shadows and anchors, copies no array it does not change, reckons each window's
 * bounds once and passes the thresholds of a window below 80 % by. Every answer is the same, and it
 * keeps its arguments, result and oid: the release before calls it through the same count_units.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await createLeanerDecideAccount(db)
}

/** decide_account with shadows and anchors, deciding as 0043 made it decide. */
async function createLeanerDecideAccount(db: Kysely<any>): Promise<void> {
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
        buckets boolean;
        shadows boolean;
        p integer;
        available bigint;
        room bigint;
        room_at timestamptz;
        leasable boolean;
        ends timestamptz[];
        notified smallint;
        w text;
        e timestamptz;
      BEGIN
        -- Each limit in force, its counter brought to now, as 0043 brings it. A window's end and its
        -- reset are reckoned once; its name, limits and algorithms are passed on as given, copied only
        -- for a shadow's name.
        used_after := array_fill(0::bigint, ARRAY[n]);
        levels_after := array_fill(0::double precision, ARRAY[n]);
        notified_after := array_fill(0::smallint, ARRAY[n]);
        starts_after := array_fill(now, ARRAY[n]);
        resets := array_fill(0::double precision, ARRAY[n]);
        FOR i IN 1..n LOOP
          w := limit_windows[i];
          IF limit_shadows[i] THEN
            IF shadows IS NULL THEN windows := limit_windows; shadows := true; END IF;
            windows[i] := w || ':shadow';
            p := array_position(stored_windows, windows[i]);
          ELSE
            p := array_position(stored_windows, w);
          END IF;
          IF limit_algorithms[i] = 'fixed' THEN
            IF limit_anchors[i] IS NULL THEN
              e := window_end(w, now);
              starts_after[i] := window_start(w, now);
            ELSE
              e := anchored_month_end(limit_anchors[i], now);
              starts_after[i] := anchored_month_start(limit_anchors[i], now);
            END IF;
            ends[i] := e;
            resets[i] := epoch_ms(e);
            IF stored_algorithms[p] = 'fixed' AND stored_starts[p] = starts_after[i] THEN
              used_after[i] := greatest(0, stored_used[p]
                - CASE WHEN returned > 0 AND returned_at >= epoch_ms(stored_starts[p]) THEN returned ELSE 0 END);
              notified_after[i] := stored_notified[p];
            END IF;
            available := limit_limits[i] - used_after[i];
            IF NOT limit_shadows[i] THEN
              room := least(room, available);
              IF available < cost THEN room_at := greatest(room_at, e); END IF;
            END IF;
          ELSE
            -- Buckets and shadows named as found: either keeps a request from a lease.
            IF limit_algorithms[i] = 'bucket' THEN buckets := true; END IF;
            ends[i] := CASE WHEN limit_anchors[i] IS NULL THEN window_end(w, now)
              ELSE anchored_month_end(limit_anchors[i], now) END;
            levels_after[i] := CASE WHEN stored_algorithms[p] = 'bucket' THEN least(limit_capacities[i]::double precision,
                stored_levels[p] + greatest(0, extract(epoch FROM now - stored_starts[p])) * limit_limits[i]
                  / window_seconds(limit_windows[i]))
              ELSE limit_capacities[i] END;
            IF limit_shadows[i] AND stored_algorithms[p] = 'bucket'
              AND window_start(w, stored_starts[p]) = window_start(w, now) THEN
              notified_after[i] := stored_notified[p];
            END IF;
            available := floor(levels_after[i])::bigint;
            IF NOT limit_shadows[i] THEN
              room := least(room, available);
              IF available < cost THEN
                room_at := greatest(room_at, now + make_interval(secs => (least(cost, limit_capacities[i]) - levels_after[i])
                  * window_seconds(limit_windows[i]) / limit_limits[i]));
              END IF;
            END IF;
          END IF;
        END LOOP;

        admitted := CASE
          WHEN banned_until IS NOT NULL THEN false
          WHEN cost = 0 THEN true
          ELSE coalesce(room, want) >= cost AND (NOT has_credits OR credits >= cost) END;
        -- Only the credits are short: a retry succeeds at their next refill, if they have one. A lease only
        -- beside fixed windows alone, until the shortest window ends, and at most a second.
        IF admitted THEN
          leasable := buckets IS NULL AND NOT has_credits AND shadows IS NULL;
          granted := CASE WHEN cost > 0 THEN least(CASE WHEN leasable THEN greatest(want, cost) ELSE cost END,
            coalesce(room, want), coalesce(credits, want)) ELSE 0 END;
        ELSE
          reason := CASE
            WHEN banned_until IS NOT NULL THEN 'key_banned'
            WHEN coalesce(room, cost) >= cost THEN 'credits_exhausted'
            ELSE 'rate_limited' END;
          retry := CASE reason
            WHEN 'key_banned' THEN banned_until
            WHEN 'credits_exhausted' THEN window_end(refill_every, now)
            WHEN 'rate_limited' THEN room_at END;
          leasable := buckets IS NULL AND NOT has_credits AND shadows IS NULL;
          granted := 0;
        END IF;
        lease_until := CASE WHEN leasable THEN least(now + interval '1 second', ends[1], ends[n]) ELSE now END;

        IF n = 0 THEN
          RETURN (admitted, reason, retry, granted, lease_until, limit_windows, limit_algorithms, limit_capacities,
            remaining, NULL::double precision[], starts_after, used_after, levels_after, notified_after, crossed_windows, crossed_percents,
            refusing_windows);
        END IF;
        FOR i IN 1..n LOOP
          IF limit_algorithms[i] = 'fixed' THEN
            used_after[i] := used_after[i] + granted;
            remaining[i] := CASE WHEN limit_shadows[i] THEN limit_limits[i] - used_after[i]
              ELSE greatest(0, limit_limits[i] - used_after[i]) END;
            -- Below 80 % a window passes no threshold: its marker stays as it was.
            IF granted > 0 AND NOT limit_shadows[i] AND limit_windows[i] IN ('hour', 'day', 'month')
              AND (used_after[i] * 100 >= limit_limits[i]::bigint * 80 OR notified_after[i] IS NULL) THEN
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
          IF limit_shadows[i] AND granted > 0 AND remaining[i] < 0 AND notified_after[i] = 0 THEN
            notified_after[i] := 1;
            refusing_windows := refusing_windows || limit_windows[i];
          END IF;
        END LOOP;
        RETURN (admitted, reason, retry, granted, lease_until, CASE WHEN shadows THEN windows ELSE limit_windows END,
          limit_algorithms, limit_capacities, remaining, resets, starts_after, used_after, levels_after, notified_after,
          crossed_windows, crossed_percents, refusing_windows);
      END
    $$
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await createDecideAccountWithShadows(db, 'anchored')
}
