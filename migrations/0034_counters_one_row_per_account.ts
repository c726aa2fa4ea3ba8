import { sql, type Kysely } from 'kysely'
import { remakeFunctionFromBaseline } from './0028_baseline.js'

const SERVICE_ROLE = 'animal_store_app'

/**
 * An account's counters in one row, every window of it in arrays (shortest window first): a counting
 * statement locks and updates one row an account, a heap-only update, where limit_counters took a
 * row, an index lookup and an update a window, and made missing rows by reading the account's limits
 * once more on every call. count_units decides exactly as in 0028; a window no longer in force is
 * dropped from the row at the account's next count. `limit_counters` is now a view of the same rows,
 * one per account and window, that the release before this one reads and writes while it still runs:
 * a call of its count_units that waits on this migration's lock when it commits goes on with the body
 * it started with, which inserts and updates limit_counters; INSTEAD OF triggers write those rows into
 * account_counters, which that body has locked through the view, so its counts are kept and exact.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Before the rows are copied: a count committed after the copy and before the DROP would be lost.
  await sql`LOCK TABLE limit_counters IN ACCESS EXCLUSIVE MODE`.execute(db)
  await sql`
    CREATE TABLE account_counters (
      account_id bigint PRIMARY KEY,
      -- The windows counted at the last count, shortest first, and for each:
      windows text[] NOT NULL DEFAULT '{}',
      algorithms text[] NOT NULL DEFAULT '{}',
      -- fixed: the window's start; bucket: the instant its level was measured.
      started_ats timestamptz[] NOT NULL DEFAULT '{}',
      -- fixed: units counted in the window, leases included.
      used bigint[] NOT NULL DEFAULT '{}',
      -- bucket: units it held at its started_at.
      levels double precision[] NOT NULL DEFAULT '{}',
      -- fixed: the highest usage.threshold percentage announced in the window (0, 80 or 100).
      notified smallint[] NOT NULL DEFAULT '{}'
    ) WITH (fillfactor = 50)
  `.execute(db)
  await sql`
    INSERT INTO account_counters (account_id, windows, algorithms, started_ats, used, levels, notified)
    SELECT account_id, array_agg("window" ORDER BY window_seconds("window")),
      array_agg(algorithm ORDER BY window_seconds("window")), array_agg(started_at ORDER BY window_seconds("window")),
      array_agg(used ORDER BY window_seconds("window")), array_agg(level ORDER BY window_seconds("window")),
      array_agg(notified ORDER BY window_seconds("window"))
    FROM limit_counters GROUP BY account_id
  `.execute(db)
  await sql`DROP TABLE limit_counters`.execute(db)
  await sql`
    -- The rows as the table held them, so that the release before this one reads them while it runs.
    CREATE VIEW limit_counters AS
    SELECT c.account_id, k."window", k.algorithm, k.started_at, k.used, k.level, k.notified
    FROM account_counters c
    CROSS JOIN LATERAL unnest(c.windows, c.algorithms, c.started_ats, c.used, c.levels, c.notified)
      AS k("window", algorithm, started_at, used, level, notified)
  `.execute(db)
  // What the release before this one writes through the view: its count_units makes a window's row
  // when it is missing (INSERT … ON CONFLICT DO NOTHING) and updates each window's counter.
  await sql`
    CREATE FUNCTION limit_counters_written() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO account_counters (account_id) VALUES (NEW.account_id) ON CONFLICT DO NOTHING;
        UPDATE account_counters k SET
          windows = k.windows || NEW."window",
          algorithms = k.algorithms || NEW.algorithm,
          started_ats = k.started_ats || NEW.started_at,
          used = k.used || coalesce(NEW.used, 0),
          levels = k.levels || coalesce(NEW.level, 0),
          notified = k.notified || coalesce(NEW.notified, 0::smallint)
        WHERE k.account_id = NEW.account_id AND NOT NEW."window" = ANY (k.windows);
        RETURN NEW;
      END IF;
      UPDATE account_counters k SET
        algorithms[array_position(k.windows, OLD."window")] = NEW.algorithm,
        started_ats[array_position(k.windows, OLD."window")] = NEW.started_at,
        used[array_position(k.windows, OLD."window")] = NEW.used,
        levels[array_position(k.windows, OLD."window")] = NEW.level,
        notified[array_position(k.windows, OLD."window")] = NEW.notified
      WHERE k.account_id = OLD.account_id AND OLD."window" = ANY (k.windows);
      RETURN NEW;
    END
    $$
  `.execute(db)
  await sql`
    CREATE TRIGGER limit_counters_written INSTEAD OF INSERT OR UPDATE ON limit_counters
    FOR EACH ROW EXECUTE FUNCTION limit_counters_written()
  `.execute(db)
  // Its ten-minute clean-up deletes idle counters through the view: nothing is deleted, since a window
  // taken out of a row that count_units has just written would lose its counts (the new release deletes
  // idle rows of account_counters itself), and the clean-ups after it in the same run still run.
  await sql`
    CREATE FUNCTION limit_counters_kept() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RETURN NULL;
    END
    $$
  `.execute(db)
  await sql`
    CREATE TRIGGER limit_counters_kept INSTEAD OF DELETE ON limit_counters
    FOR EACH ROW EXECUTE FUNCTION limit_counters_kept()
  `.execute(db)
  await sql`GRANT SELECT, INSERT, UPDATE, DELETE ON account_counters TO ${sql.id(SERVICE_ROLE)}`.execute(db)
  await sql`GRANT SELECT, INSERT, UPDATE, DELETE ON limit_counters TO ${sql.id(SERVICE_ROLE)}`.execute(db)

  await createCountUnits(db)
}

// The counters' lock pass of 0034 to 0047: it locks the rows it finds, then makes the missing ones. A
// row made after those found may come before one of them in account order, and another call making
// it while waiting for a row this one holds deadlocks with it (0048 takes each row in turn).
export const COUNTERS_FOUND_THEN_MADE = `        -- its row first, the rows made in account order too.
        PERFORM FROM account_counters k WHERE k.account_id = ANY (v_accounts) ORDER BY k.account_id FOR UPDATE;
        GET DIAGNOSTICS v_locked = ROW_COUNT;
        IF v_locked < cardinality(v_accounts) THEN
          INSERT INTO account_counters (account_id) SELECT x.id FROM unnest(v_accounts) AS x(id) ORDER BY x.id
            ON CONFLICT DO NOTHING;
          PERFORM FROM account_counters k WHERE k.account_id = ANY (v_accounts) ORDER BY k.account_id FOR UPDATE;
        END IF;`

/** count_units as this migration makes it; undoing 0040 makes it again. */
export async function createCountUnits(db: Kysely<any>): Promise<void> {
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
      v_now timestamptz := service_now();
      v_accounts bigint[];
      v_keys bigint[];
      -- The most requests of one account in the batch: each round decides one request of each account.
      v_rounds integer;
      v_locked integer;
      -- How the session commits; counting commits without waiting for the flush or the standby (a
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
${sql.raw(COUNTERS_FOUND_THEN_MADE)}
        PERFORM FROM api_key_bans b WHERE b.api_key_id = ANY (v_keys) ORDER BY b.api_key_id FOR UPDATE;
        PERFORM FROM account_credits c WHERE c.account_id = ANY (v_accounts) ORDER BY c.account_id FOR UPDATE;
      END IF;

      -- At least one round: a call with usage reports alone writes them in the first.
      FOR v_round IN 1..greatest(v_rounds, 1) LOOP
        RETURN QUERY
        -- This round's request of each account, with its key's running ban and its account's credits,
        -- raised to the refill amount once per refill window and given back what a lease did not use.
        WITH request AS (
          SELECT i.key_id, i.account_id, i.cost, i.want, i.returned, i.returned_at, i.ban_after, i.ban_seconds,
            CASE WHEN b.banned_until > v_now THEN b.banned_until END AS banned_until,
            c.account_id IS NOT NULL AS has_credits, c.refill_every, f.refills,
            w.windows AS stored_windows, w.algorithms AS stored_algorithms, w.started_ats AS stored_starts,
            w.used AS stored_used, w.levels AS stored_levels, w.notified AS stored_notified,
            CASE
              WHEN f.refills THEN greatest(c.remaining + i.returned, c.refill_amount)
              ELSE c.remaining + i.returned END AS credits
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
            AS refills) AS f
          WHERE i.round = v_round
        ),
        -- Each limit in force, its counter brought to now: a fixed window that ended starts again at 0
        -- (units leased in it and handed back are taken off first); a bucket refills for the time since
        -- it was measured. An account without limits has one row, with no window.
        limited AS (
          SELECT r.key_id, r.account_id, r.cost, r.want, r.returned, r.returned_at, r.ban_after, r.ban_seconds,
            r.banned_until, r.has_credits, r.refill_every, r.refills, r.credits, l.*
          FROM request r
          LEFT JOIN LATERAL (
            SELECT a."window", a.algorithm, a."limit", a.capacity, w.seconds, w.starts, w.ends, n.used, n.level, n.notified,
              CASE WHEN a.algorithm = 'fixed' THEN a."limit" - n.used ELSE floor(n.level)::bigint END AS available
            FROM account_limits(r.account_id, v_now) AS a
            -- The window's counter as last stored; none yet: a fixed window at 0, a full bucket.
            CROSS JOIN LATERAL (SELECT array_position(r.stored_windows, a."window") AS at) AS p
            CROSS JOIN LATERAL (SELECT r.stored_algorithms[p.at] AS algorithm, r.stored_starts[p.at] AS started_at,
              r.stored_used[p.at] AS used, r.stored_levels[p.at] AS level, r.stored_notified[p.at] AS notified) AS k
            CROSS JOIN LATERAL (SELECT window_seconds(a."window") AS seconds,
              window_start(a."window", v_now) AS starts, window_end(a."window", v_now) AS ends) AS w
            CROSS JOIN LATERAL (SELECT coalesce(k.algorithm = 'fixed' AND a.algorithm = 'fixed' AND k.started_at = w.starts,
              false) AS same_window) AS s
            CROSS JOIN LATERAL (SELECT
              CASE WHEN s.same_window THEN greatest(0, k.used
                - CASE WHEN r.returned_at >= epoch_ms(k.started_at) THEN r.returned ELSE 0 END) ELSE 0 END AS used,
              CASE
                WHEN a.algorithm = 'bucket' AND k.algorithm = 'bucket' THEN least(a.capacity::double precision,
                  k.level + greatest(0, extract(epoch FROM v_now - k.started_at)) * a."limit" / w.seconds)
                WHEN a.algorithm = 'bucket' THEN a.capacity
                ELSE 0 END AS level,
              CASE WHEN s.same_window THEN k.notified ELSE 0 END AS notified
            ) AS n
          ) AS l ON true
        ),
        -- The account's standing, on each of its rows: the room its limits leave, and when the limits
        -- short of the cost have room for it again.
        standing AS (
          SELECT l.*,
            min(l.available) OVER account AS room,
            coalesce(bool_or(l.algorithm = 'bucket') OVER account, false) AS buckets,
            min(l.ends) OVER account AS shortest_end,
            max(CASE
              WHEN l.available >= l.cost THEN NULL
              WHEN l.algorithm = 'fixed' THEN l.ends
              ELSE v_now + make_interval(secs => (least(l.cost, l.capacity) - l.level) * l.seconds / l."limit")
              END) OVER account AS room_at,
            row_number() OVER account = 1 AS first
          FROM limited l
          WINDOW account AS (PARTITION BY l.account_id)
        ),
        decided AS (
          SELECT s.*, d.admitted, e.reason,
            CASE e.reason
              WHEN 'key_banned' THEN s.banned_until
              -- Only the credits are short: a retry succeeds at their next refill, if they have one.
              WHEN 'credits_exhausted' THEN window_end(s.refill_every, v_now)
              WHEN 'rate_limited' THEN s.room_at
            END AS retry,
            CASE WHEN d.admitted AND s.cost > 0 THEN least(CASE WHEN g.leasable THEN greatest(s.want, s.cost) ELSE s.cost END,
              coalesce(s.room, s.want), coalesce(s.credits, s.want)) ELSE 0 END::integer AS granted,
            -- A lease lives until the shortest fixed window ends, and at most a second.
            CASE WHEN g.leasable THEN least(v_now + interval '1 second', s.shortest_end) ELSE v_now END AS lease_until
          FROM standing s
          CROSS JOIN LATERAL (SELECT CASE
            WHEN s.banned_until IS NOT NULL THEN false
            WHEN s.cost = 0 THEN true
            ELSE coalesce(s.room, s.want) >= s.cost AND (NOT s.has_credits OR s.credits >= s.cost)
            END AS admitted) AS d
          CROSS JOIN LATERAL (SELECT CASE
            WHEN d.admitted THEN NULL
            WHEN s.banned_until IS NOT NULL THEN 'key_banned'
            WHEN coalesce(s.room, s.cost) >= s.cost THEN 'credits_exhausted'
            ELSE 'rate_limited' END AS reason) AS e
          -- A lease only beside fixed windows alone: a bucket or credits are counted request by request.
          CROSS JOIN LATERAL (SELECT NOT s.buckets AND NOT s.has_credits AS leasable) AS g
        ),
        -- Each window after the request: what it used, and the usage.threshold percentage it reached
        -- (each fixed window of an hour or longer passing 80 % and 100 %, once per window); and on each
        -- row, the account's windows as the answer lists them, shortest first.
        counted AS (
          SELECT d.*, c.used_after, c.level_after,
            CASE WHEN d.granted > 0 AND d.algorithm = 'fixed' AND d."window" IN ('hour', 'day', 'month')
              THEN greatest(d.notified, CASE
                WHEN c.used_after * 100 >= d."limit"::bigint * 100 THEN 100
                WHEN c.used_after * 100 >= d."limit"::bigint * 80 THEN 80
                ELSE 0 END)
              ELSE d.notified END AS notified_after,
            array_agg(d."window") FILTER (WHERE d."window" IS NOT NULL) OVER listed AS names,
            array_agg(d.algorithm) FILTER (WHERE d."window" IS NOT NULL) OVER listed AS algorithms,
            array_agg(CASE WHEN d.algorithm = 'fixed' THEN d."limit" ELSE d.capacity END)
              FILTER (WHERE d."window" IS NOT NULL) OVER listed AS limits,
            array_agg(CASE
                WHEN d.algorithm = 'fixed' THEN greatest(0, d."limit" - c.used_after)
                ELSE floor(c.level_after)::bigint END)
              FILTER (WHERE d."window" IS NOT NULL) OVER listed AS remaining,
            array_agg(epoch_ms(CASE
                WHEN d.algorithm = 'fixed' THEN d.ends
                ELSE v_now + make_interval(secs => (d.capacity - c.level_after) * d.seconds / d."limit")
                END))
              FILTER (WHERE d."window" IS NOT NULL) OVER listed AS resets,
            -- What the account's row keeps of each window: a fixed window's start and use, a bucket's
            -- level and when it was measured.
            array_agg(CASE WHEN d.algorithm = 'fixed' THEN d.starts ELSE v_now END)
              FILTER (WHERE d."window" IS NOT NULL) OVER listed AS starts_after,
            array_agg(c.used_after) FILTER (WHERE d."window" IS NOT NULL) OVER listed AS used_after_all,
            array_agg(c.level_after) FILTER (WHERE d."window" IS NOT NULL) OVER listed AS levels_after
          FROM decided d
          CROSS JOIN LATERAL (SELECT
            d.used + CASE WHEN d.algorithm = 'fixed' THEN d.granted ELSE 0 END AS used_after,
            d.level - CASE WHEN d.algorithm = 'bucket' THEN d.granted ELSE 0 END AS level_after
          ) AS c
          WINDOW listed AS (PARTITION BY d.account_id ORDER BY d.seconds
            ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
        ),
        outcome AS (
          SELECT * FROM (
            SELECT c.*, array_agg(c.notified_after) FILTER (WHERE c."window" IS NOT NULL) OVER (
              PARTITION BY c.account_id ORDER BY c.seconds ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING
            ) AS notified_after_all
            FROM counted c
          ) AS c
          WHERE c.first
        ),
        -- One row an account, every window of it: one heap-only update.
        counters AS (
          UPDATE account_counters k SET
            windows = coalesce(o.names, '{}'),
            algorithms = coalesce(o.algorithms, '{}'),
            started_ats = coalesce(o.starts_after, '{}'),
            used = coalesce(o.used_after_all, '{}'),
            levels = coalesce(o.levels_after, '{}'),
            notified = coalesce(o.notified_after_all, '{}')
          FROM outcome o
          WHERE k.account_id = o.account_id
        ),
        spent AS (
          UPDATE account_credits c SET
            remaining = o.credits - o.granted,
            refilled_at = CASE WHEN o.refills THEN window_start(o.refill_every, v_now) ELSE c.refilled_at END,
            updated_at = v_now
          FROM outcome o WHERE c.account_id = o.account_id
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
        events AS (
          INSERT INTO webhook_events (type, at, account_id, data)
          SELECT e.type, v_now, e.account_id, e.data FROM (
            SELECT c.account_id, 1 AS kind, c."window", t.percent, 'usage.threshold' AS type, jsonb_build_object(
                'account', jsonb_build_object('id', c.account_id::text),
                'window', c."window", 'limit', c."limit", 'used', c.used_after, 'percent', t.percent,
                'windowStart', to_char(window_start(c."window", v_now), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                'windowEnd', to_char(c.ends, 'YYYY-MM-DD"T"HH24:MI:SS"Z"')) AS data
            FROM counted c CROSS JOIN (VALUES (80), (100)) AS t(percent)
            WHERE c.notified < t.percent AND c.notified_after >= t.percent
            UNION ALL
            SELECT o.account_id, 2, NULL, NULL, 'key.banned', jsonb_build_object(
                'key', jsonb_build_object('id', o.key_id::text, 'accountId', o.account_id::text),
                'bannedUntil', to_char(s.banned_until, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
            FROM streaks s JOIN outcome o ON o.key_id = s.api_key_id
            WHERE s.banned_until IS NOT NULL
          ) AS e
          ORDER BY e.account_id, e.kind, e."window", e.percent
        ),
        -- Usage per key and hour: this round's requests, and (in the first round) those decided from
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
          o.names, o.algorithms, o.limits, o.remaining, o.resets,
          CASE WHEN o.has_credits THEN o.credits - o.granted END
        FROM outcome o
        LEFT JOIN streaks s ON s.api_key_id = o.key_id
        ORDER BY o.account_id, o.key_id;
      END LOOP;
    END
    $function$
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`CREATE TEMPORARY TABLE account_counter_rows AS SELECT * FROM limit_counters`.execute(db)
  await sql`DROP VIEW limit_counters`.execute(db)
  await sql`
    CREATE TABLE limit_counters (
      account_id bigint NOT NULL,
      "window" text NOT NULL,
      algorithm text NOT NULL,
      started_at timestamptz NOT NULL,
      used bigint NOT NULL DEFAULT 0,
      level double precision NOT NULL DEFAULT 0,
      notified smallint NOT NULL DEFAULT 0,
      PRIMARY KEY (account_id, "window")
    ) WITH (fillfactor = 50)
  `.execute(db)
  await sql`INSERT INTO limit_counters SELECT * FROM account_counter_rows`.execute(db)
  await sql`DROP TABLE account_counter_rows, account_counters`.execute(db)
  await sql`DROP FUNCTION limit_counters_written(), limit_counters_kept()`.execute(db)
  await sql`GRANT SELECT, INSERT, UPDATE, DELETE ON limit_counters TO ${sql.id(SERVICE_ROLE)}`.execute(db)
  await remakeFunctionFromBaseline(db, 'count_units')
}
