-- A database as release 2d40fdd left it, its migration rows included: pg_dump of a database
-- migrated at that release, written by scripts/fold-release.ts, for test/db/upgrade.test.ts.

SET check_function_bodies = false;

DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'animal_store_app') THEN
    CREATE ROLE animal_store_app NOLOGIN;
  END IF;
END $$;

DO $$ BEGIN
  EXECUTE format('ALTER DATABASE %I SET client_connection_check_interval = %L', current_database(), '1s');
END $$;

-- Name: account_limits(bigint, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.account_limits(account bigint, at timestamp with time zone) RETURNS TABLE("window" text, algorithm text, "limit" integer, capacity integer)
    LANGUAGE sql STABLE
    AS $$
      SELECT DISTINCT ON (l."window") l."window", l.algorithm, l."limit", coalesce(l.burst, l."limit")
      FROM (
        SELECT o."window", o.algorithm, o."limit", o.burst, 0 AS rank FROM account_limit_overrides o
        WHERE o.account_id = account AND (o.until IS NULL OR o.until > at)
        UNION ALL
        SELECT p."window", p.algorithm, p."limit", p.burst, 1 FROM plan_limits p
        JOIN accounts a ON a.plan = p.plan WHERE a.id = account
      ) AS l
      ORDER BY l."window", l.rank
    $$;

--
-- Name: append_audit_event(text, text, bigint, bigint, jsonb, text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.append_audit_event(actor text, action text, account_id bigint, key_id bigint, changes jsonb, request_id text, on_behalf_of text) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $_$
    DECLARE
      appended bigint;
    BEGIN
      IF actor IS NULL OR actor !~ '^(bootstrap|operator:[a-z0-9][a-z0-9._-]{0,62}|key:ask_[0-9A-Za-z]{8}|cli:.{1,251})$' THEN
        RAISE EXCEPTION 'audit actor of no known shape' USING ERRCODE = '22023';
      END IF;
      IF actor LIKE 'operator:%'
        AND NOT EXISTS (SELECT 1 FROM public.operators o WHERE o.name = substr(actor, 10)) THEN
        RAISE EXCEPTION 'audit actor names no operator' USING ERRCODE = '22023';
      END IF;
      IF actor LIKE 'key:%' AND NOT EXISTS (SELECT 1 FROM public.api_keys k WHERE k.prefix = substr(actor, 5)) THEN
        RAISE EXCEPTION 'audit actor names no key' USING ERRCODE = '22023';
      END IF;
      INSERT INTO public.audit_events (at, actor, action, account_id, key_id, changes, request_id, on_behalf_of)
      VALUES (now(), actor, action, account_id, key_id, coalesce(changes, '{}'), request_id, on_behalf_of)
      RETURNING id INTO appended;
      RETURN appended;
    END
    $_$;

--
-- Name: count_requests(text[], bigint[], timestamp with time zone[], timestamp with time zone[], timestamp with time zone[], integer[], integer[], integer[], integer[], integer[], integer[], bigint[], timestamp with time zone[], integer[], integer[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.count_requests(subjects text[], api_key_ids bigint[], minute_starts timestamp with time zone[], day_starts timestamp with time zone[], request_times timestamp with time zone[], wants integer[], returns integer[], per_minutes integer[], per_days integer[], ban_afters integer[], ban_seconds integer[], usage_key_ids bigint[], usage_days timestamp with time zone[], usage_admitted integer[], usage_refused integer[]) RETURNS TABLE(subject text, granted integer, "minuteStart" timestamp with time zone, "minuteUsed" integer, "dayStart" timestamp with time zone, "dayUsed" integer, "bannedUntil" timestamp with time zone, "newlyBanned" boolean)
    LANGUAGE plpgsql
    AS $$
    #variable_conflict use_column
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      RETURN QUERY
      WITH input AS (
        SELECT * FROM unnest(subjects, api_key_ids, minute_starts, day_starts, request_times, wants, returns,
          per_minutes, per_days, ban_afters, ban_seconds)
          AS i(subject, api_key_id, minute_start, day_start, now, want, returned, per_minute, per_day, ban_after,
            ban_seconds)
      ), counted AS (
        INSERT INTO rate_limit_counters AS c (
          subject, minute_start, minute_used, minute_limit, day_start, day_used, day_limit,
          wanted, last_grant, ban_after, ban_seconds, updated_at, returned
        )
        SELECT i.subject, i.minute_start, i.first_grant, i.per_minute, i.day_start, i.first_grant, i.per_day,
          i.want, i.first_grant, i.ban_after, i.ban_seconds, i.now, i.returned
        FROM (SELECT *, LEAST(want, per_minute, COALESCE(per_day, want)) AS first_grant FROM input) AS i
        ORDER BY i.subject
        ON CONFLICT (subject) DO UPDATE SET (
          minute_start, day_start, minute_used, day_used, last_grant, minute_limit, day_limit, wanted, returned,
          ban_after, ban_seconds, refused, refused_until, banned_until, updated_at
        ) = (
          SELECT w.minute_start, w.day_start, w.minute_used + g.granted, w.day_used + g.granted, g.granted,
            excluded.minute_limit, excluded.day_limit, excluded.wanted, excluded.returned,
            excluded.ban_after, excluded.ban_seconds,
            CASE WHEN b.bans THEN 0 WHEN g.refusing THEN w.streak + 1 WHEN w.banned THEN c.refused ELSE 0 END,
            CASE
              WHEN b.bans THEN NULL
              WHEN g.refusing THEN
                CASE WHEN c.refused_until > excluded.updated_at THEN c.refused_until ELSE g.refusing_window_end END
              WHEN w.banned THEN c.refused_until
              ELSE NULL END,
            CASE WHEN b.bans THEN excluded.updated_at + make_interval(secs => excluded.ban_seconds) ELSE c.banned_until END,
            GREATEST(c.updated_at, excluded.updated_at)
          FROM
            -- Windows only move forward: an instance whose clock lags cannot reset one another moved on.
            (SELECT
              GREATEST(c.minute_start, excluded.minute_start) AS minute_start,
              GREATEST(c.day_start, excluded.day_start) AS day_start,
              CASE WHEN excluded.minute_start > c.minute_start THEN 0 ELSE c.minute_used END AS minute_used,
              -- Units leased earlier today and never used are handed back to the day.
              CASE
                WHEN excluded.day_start > c.day_start THEN 0
                WHEN excluded.day_start = c.day_start THEN GREATEST(0, c.day_used - excluded.returned)
                ELSE c.day_used END AS day_used,
              c.banned_until IS NOT NULL AND c.banned_until > excluded.updated_at AS banned,
              -- Refusals so far in the window that is refusing; it resets when that window does.
              CASE WHEN c.refused_until > excluded.updated_at THEN c.refused ELSE 0 END AS streak
            ) AS w,
            LATERAL (SELECT
              CASE WHEN w.banned THEN 0 ELSE GREATEST(0, LEAST(
                excluded.wanted,
                excluded.minute_limit - w.minute_used,
                COALESCE(excluded.day_limit - w.day_used, excluded.wanted)
              )) END AS granted
            ) AS decided,
            LATERAL (SELECT
              decided.granted,
              NOT w.banned AND decided.granted = 0 AS refusing,
              CASE
                WHEN excluded.day_limit IS NOT NULL AND excluded.day_limit - w.day_used <= 0
                  THEN w.day_start + interval '1 day'
                ELSE w.minute_start + interval '1 minute' END AS refusing_window_end
            ) AS g,
            -- The first refusal is the 429; more than ban_after further ones ban the subject.
            LATERAL (SELECT
              g.refusing AND excluded.ban_after IS NOT NULL AND w.streak + 1 > excluded.ban_after + 1 AS bans
            ) AS b
        )
        RETURNING
          c.subject, c.last_grant, c.minute_start, c.minute_used, c.day_start, c.day_used, c.banned_until,
          coalesce(c.banned_until = c.updated_at + make_interval(secs => c.ban_seconds), false)
      ), usage AS (
        INSERT INTO api_key_usage AS u (api_key_id, day, admitted, refused)
        SELECT r.api_key_id, r.day, sum(r.admitted), sum(r.refused)
        FROM (
          -- Each key's own request: admitted when it was granted a unit, else refused.
          SELECT i.api_key_id, (i.day_start AT TIME ZONE 'UTC')::date AS day,
            (c.last_grant > 0)::integer AS admitted, (c.last_grant = 0)::integer AS refused
          FROM input i JOIN counted c ON c.subject = i.subject
          WHERE i.api_key_id IS NOT NULL
          UNION ALL
          SELECT reported.api_key_id, (reported.day AT TIME ZONE 'UTC')::date, reported.admitted, reported.refused
          FROM unnest(usage_key_ids, usage_days, usage_admitted, usage_refused)
            AS reported(api_key_id, day, admitted, refused)
        ) AS r
        GROUP BY r.api_key_id, r.day
        ORDER BY r.api_key_id, r.day
        ON CONFLICT (api_key_id, day) DO UPDATE SET
          admitted = u.admitted + excluded.admitted,
          refused = u.refused + excluded.refused
      )
      SELECT * FROM counted;
    END
    $$;

--
-- Name: count_units(bigint[], bigint[], integer[], integer[], integer[], double precision[], integer[], integer[], bigint[], double precision[], integer[], integer[], bigint[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.count_units(api_key_ids bigint[], account_ids bigint[], costs integer[], wants integer[], returned integer[], returned_ats double precision[], ban_afters integer[], ban_seconds integer[], usage_key_ids bigint[], usage_hours double precision[], usage_admitted integer[], usage_refused integer[], usage_units bigint[]) RETURNS TABLE("apiKeyId" bigint, admitted boolean, granted integer, now double precision, "leaseUntil" double precision, reason text, "retryAt" double precision, "bannedUntil" double precision, "newlyBanned" boolean, windows text[], algorithms text[], limits integer[], remaining bigint[], resets double precision[], credits bigint)
    LANGUAGE plpgsql
    SET "TimeZone" TO 'UTC'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
    #variable_conflict use_column
    DECLARE
      v_now timestamptz := service_now();
      v_accounts bigint[];
      v_keys bigint[];
      -- The most requests of one account in the batch: each round decides one request of each account.
      v_rounds integer;
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
        -- the accounts' counters (made if missing) by account and window, then the keys' bans by key,
        -- then the accounts' credits by account.
        INSERT INTO limit_counters AS k (account_id, "window", algorithm, started_at, used, level)
        SELECT x.id, a."window", a.algorithm, v_now, 0, a.capacity
        FROM unnest(v_accounts) AS x(id) CROSS JOIN LATERAL account_limits(x.id, v_now) AS a
        ORDER BY x.id, a."window"
        ON CONFLICT DO NOTHING;
        PERFORM FROM limit_counters k WHERE k.account_id = ANY (v_accounts) ORDER BY k.account_id, k."window"
          FOR UPDATE;
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
            CASE
              WHEN f.refills THEN greatest(c.remaining + i.returned, c.refill_amount)
              ELSE c.remaining + i.returned END AS credits
          FROM (
            SELECT i.*, row_number() OVER (PARTITION BY i.account_id ORDER BY i.key_id, i.n) AS round
            FROM unnest(api_key_ids, account_ids, costs, wants, count_units.returned, returned_ats, ban_afters,
              count_units.ban_seconds)
              WITH ORDINALITY AS i(key_id, account_id, cost, want, returned, returned_at, ban_after, ban_seconds, n)
          ) AS i
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
          SELECT r.*, l.*
          FROM request r
          LEFT JOIN LATERAL (
            SELECT a."window", a.algorithm, a."limit", a.capacity, w.seconds, w.ends, n.used, n.level, n.notified,
              CASE WHEN a.algorithm = 'fixed' THEN a."limit" - n.used ELSE floor(n.level)::bigint END AS available
            FROM account_limits(r.account_id, v_now) AS a
            JOIN limit_counters k ON k.account_id = r.account_id AND k."window" = a."window"
            CROSS JOIN LATERAL (SELECT window_seconds(a."window") AS seconds,
              window_start(a."window", v_now) AS starts, window_end(a."window", v_now) AS ends) AS w
            CROSS JOIN LATERAL (SELECT k.algorithm = 'fixed' AND a.algorithm = 'fixed' AND k.started_at = w.starts
              AS same_window) AS s
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
              FILTER (WHERE d."window" IS NOT NULL) OVER listed AS resets
          FROM decided d
          CROSS JOIN LATERAL (SELECT
            d.used + CASE WHEN d.algorithm = 'fixed' THEN d.granted ELSE 0 END AS used_after,
            d.level - CASE WHEN d.algorithm = 'bucket' THEN d.granted ELSE 0 END AS level_after
          ) AS c
          WINDOW listed AS (PARTITION BY d.account_id ORDER BY d.seconds
            ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
        ),
        outcome AS (
          SELECT * FROM counted c WHERE c.first
        ),
        counters AS (
          UPDATE limit_counters k SET
            algorithm = c.algorithm,
            started_at = CASE WHEN c.algorithm = 'fixed' THEN window_start(c."window", v_now) ELSE v_now END,
            used = c.used_after,
            level = c.level_after,
            notified = c.notified_after
          FROM counted c
          WHERE k.account_id = c.account_id AND k."window" = c."window"
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
    $$;

--
-- Name: delete_audit_events_older_than(integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.delete_audit_events_older_than(days integer) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$
    DECLARE
      kept integer := (SELECT r.days FROM public.audit_retention r);
      deleted bigint;
    BEGIN
      IF days IS NULL OR days < kept THEN
        RAISE EXCEPTION 'audit events are kept % days; % is fewer', kept, coalesce(days::text, 'null')
          USING ERRCODE = '22023';
      END IF;
      DELETE FROM public.audit_events WHERE at < now() - make_interval(days => days);
      GET DIAGNOSTICS deleted = ROW_COUNT;
      RETURN deleted;
    END
    $$;

--
-- Name: epoch_ms(timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.epoch_ms(at timestamp with time zone) RETURNS double precision
    LANGUAGE sql IMMUTABLE
    AS $$
      SELECT (extract(epoch FROM at AT TIME ZONE 'UTC') * 1000)::double precision
    $$;

--
-- Name: fan_out_webhook_event(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.fan_out_webhook_event() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    BEGIN
      INSERT INTO webhook_deliveries (endpoint_id, event_id)
      SELECT e.id, NEW.id FROM webhook_endpoints e WHERE NEW.type = ANY (e.events);
      RETURN NULL;
    END
    $$;

--
-- Name: notify_api_key_added(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.notify_api_key_added() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    BEGIN
      PERFORM pg_notify('api_keys_added', encode(NEW.secret_hash, 'base64'));
      RETURN NULL;
    END
    $$;

--
-- Name: notify_api_keys_changed(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.notify_api_keys_changed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    BEGIN
      PERFORM pg_notify('api_keys_changed', TG_TABLE_NAME);
      RETURN NULL;
    END
    $$;

--
-- Name: refuse_audit_event_update(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.refuse_audit_event_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    BEGIN
      RAISE EXCEPTION 'audit events are append-only' USING ERRCODE = '42501';
    END
    $$;

--
-- Name: service_now(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.service_now() RETURNS timestamp with time zone
    LANGUAGE sql
    AS $$
      SELECT coalesce((SELECT at FROM service_clock), clock_timestamp())
    $$;

--
-- Name: window_end(text, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.window_end("window" text, at timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE sql IMMUTABLE
    AS $$
      SELECT (date_trunc("window", at AT TIME ZONE 'UTC') + CASE "window"
        WHEN 'second' THEN interval '1 second' WHEN 'minute' THEN interval '1 minute'
        WHEN 'hour' THEN interval '1 hour' WHEN 'day' THEN interval '1 day' ELSE interval '1 month' END)
        AT TIME ZONE 'UTC'
    $$;

--
-- Name: window_seconds(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.window_seconds("window" text) RETURNS double precision
    LANGUAGE sql IMMUTABLE
    AS $$
      SELECT CASE "window" WHEN 'second' THEN 1 WHEN 'minute' THEN 60 WHEN 'hour' THEN 3600
        WHEN 'day' THEN 86400 ELSE 2592000 END::double precision
    $$;

--
-- Name: window_start(text, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.window_start("window" text, at timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE sql IMMUTABLE
    AS $$
      SELECT date_trunc("window", at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
    $$;

--
-- Name: account_credits; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.account_credits (
    account_id bigint NOT NULL,
    remaining bigint NOT NULL,
    refill_amount bigint,
    refill_every text,
    refilled_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT account_credits_check CHECK (((refill_amount IS NULL) = (refill_every IS NULL))),
    CONSTRAINT account_credits_refill_amount_check CHECK ((refill_amount > 0)),
    CONSTRAINT account_credits_refill_every_check CHECK ((refill_every = ANY (ARRAY['hour'::text, 'day'::text, 'month'::text]))),
    CONSTRAINT account_credits_remaining_check CHECK ((remaining >= 0))
);

--
-- Name: account_limit_overrides; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.account_limit_overrides (
    account_id bigint NOT NULL,
    "window" text NOT NULL,
    algorithm text DEFAULT 'fixed'::text NOT NULL,
    "limit" integer NOT NULL,
    burst integer,
    until timestamp with time zone,
    CONSTRAINT account_limit_overrides_algorithm_check CHECK ((algorithm = ANY (ARRAY['fixed'::text, 'bucket'::text]))),
    CONSTRAINT account_limit_overrides_check CHECK (((burst IS NULL) OR (((burst >= 1) AND (burst <= 2000000000)) AND (algorithm = 'bucket'::text)))),
    CONSTRAINT account_limit_overrides_limit_check CHECK ((("limit" >= 1) AND ("limit" <= 2000000000))),
    CONSTRAINT account_limit_overrides_window_check CHECK (("window" = ANY (ARRAY['second'::text, 'minute'::text, 'hour'::text, 'day'::text, 'month'::text])))
);

--
-- Name: accounts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.accounts (
    id bigint NOT NULL,
    external_id text,
    name text,
    plan text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    closed_at timestamp with time zone,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    CONSTRAINT accounts_external_id_check CHECK ((external_id ~ '^[A-Za-z0-9._:-]{1,255}$'::text)),
    CONSTRAINT accounts_metadata_check CHECK ((jsonb_typeof(metadata) = 'object'::text))
);

--
-- Name: accounts_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.accounts ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.accounts_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: api_key_bans; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.api_key_bans (
    api_key_id bigint NOT NULL,
    refused integer DEFAULT 0 NOT NULL,
    refused_until timestamp with time zone,
    banned_until timestamp with time zone,
    ban_after integer,
    ban_seconds integer,
    updated_at timestamp with time zone NOT NULL
);

--
-- Name: api_key_usage; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.api_key_usage (
    api_key_id bigint NOT NULL,
    admitted bigint DEFAULT 0 NOT NULL,
    refused bigint DEFAULT 0 NOT NULL,
    hour timestamp with time zone NOT NULL,
    units bigint DEFAULT 0 NOT NULL,
    CONSTRAINT api_key_usage_admitted_check CHECK ((admitted >= 0)),
    CONSTRAINT api_key_usage_refused_check CHECK ((refused >= 0)),
    CONSTRAINT api_key_usage_units_check CHECK ((units >= 0))
);

--
-- Name: api_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.api_keys (
    id bigint NOT NULL,
    prefix text NOT NULL,
    secret_hash bytea NOT NULL,
    name text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone,
    revoked_at timestamp with time zone,
    account_id bigint NOT NULL,
    scopes text[] DEFAULT '{pets:read,pets:write}'::text[] NOT NULL,
    previous_prefix text,
    previous_secret_hash bytea,
    previous_secret_expires_at timestamp with time zone,
    allowed_addresses cidr[],
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    CONSTRAINT api_keys_allowed_addresses_check CHECK (((cardinality(allowed_addresses) >= 1) AND (cardinality(allowed_addresses) <= 20))),
    CONSTRAINT api_keys_metadata_check CHECK ((jsonb_typeof(metadata) = 'object'::text)),
    CONSTRAINT api_keys_previous_secret_hash_check CHECK ((octet_length(previous_secret_hash) = 32)),
    CONSTRAINT api_keys_previous_secret_whole CHECK ((((previous_secret_hash IS NULL) = (previous_prefix IS NULL)) AND ((previous_secret_hash IS NULL) = (previous_secret_expires_at IS NULL)))),
    CONSTRAINT api_keys_scopes_check CHECK (((cardinality(scopes) > 0) AND (scopes <@ '{pets:read,pets:write,keys:manage}'::text[]))),
    CONSTRAINT api_keys_secret_hash_check CHECK ((octet_length(secret_hash) = 32))
);

--
-- Name: api_keys_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.api_keys ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.api_keys_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: audit_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit_events (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    actor text NOT NULL,
    action text NOT NULL,
    account_id bigint,
    key_id bigint,
    changes jsonb DEFAULT '{}'::jsonb NOT NULL,
    request_id text,
    on_behalf_of text,
    CONSTRAINT audit_events_actor_check CHECK (((length(actor) >= 1) AND (length(actor) <= 255))),
    CONSTRAINT audit_events_on_behalf_of_check CHECK (((length(on_behalf_of) >= 1) AND (length(on_behalf_of) <= 255)))
);

--
-- Name: audit_events_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.audit_events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.audit_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: audit_retention; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit_retention (
    only_row boolean DEFAULT true NOT NULL,
    days integer NOT NULL,
    CONSTRAINT audit_retention_days_check CHECK ((days >= 1)),
    CONSTRAINT audit_retention_only_row_check CHECK (only_row)
);

--
-- Name: idempotency_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.idempotency_keys (
    api_key_id bigint NOT NULL,
    key text NOT NULL,
    request_hash bytea NOT NULL,
    pet_id bigint NOT NULL,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT idempotency_keys_key_check CHECK (((char_length(key) >= 1) AND (char_length(key) <= 255))),
    CONSTRAINT idempotency_keys_request_hash_check CHECK ((octet_length(request_hash) = 32))
);

--
-- Name: kysely_migration; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.kysely_migration (
    name character varying(255) NOT NULL,
    "timestamp" character varying(255) NOT NULL
);

--
-- Name: kysely_migration_lock; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.kysely_migration_lock (
    id character varying(255) NOT NULL,
    is_locked integer DEFAULT 0 NOT NULL
);

--
-- Name: limit_counters; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.limit_counters (
    account_id bigint NOT NULL,
    "window" text NOT NULL,
    algorithm text NOT NULL,
    started_at timestamp with time zone NOT NULL,
    used bigint DEFAULT 0 NOT NULL,
    level double precision DEFAULT 0 NOT NULL,
    notified smallint DEFAULT 0 NOT NULL
);

--
-- Name: operators; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.operators (
    id bigint NOT NULL,
    name text NOT NULL,
    role text NOT NULL,
    prefix text NOT NULL,
    token_hash bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    revoked_at timestamp with time zone,
    CONSTRAINT operators_name_check CHECK ((name ~ '^[a-z0-9][a-z0-9._-]{0,62}$'::text)),
    CONSTRAINT operators_role_check CHECK ((role = ANY (ARRAY['viewer'::text, 'operator'::text, 'admin'::text]))),
    CONSTRAINT operators_token_hash_check CHECK ((length(token_hash) = 32))
);

--
-- Name: operators_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.operators ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.operators_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: pets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.pets (
    id bigint NOT NULL,
    name text NOT NULL,
    category_id bigint NOT NULL,
    status text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT pets_name_check CHECK (((char_length(name) >= 1) AND (char_length(name) <= 255))),
    CONSTRAINT pets_status_check CHECK ((status = ANY (ARRAY['available'::text, 'pending'::text, 'sold'::text])))
);

--
-- Name: pets_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.pets ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.pets_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: plan_costs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.plan_costs (
    plan text NOT NULL,
    route text NOT NULL,
    cost integer NOT NULL,
    CONSTRAINT plan_costs_cost_check CHECK (((cost >= 0) AND (cost <= 1000))),
    CONSTRAINT plan_costs_route_check CHECK ((route ~ '^(GET|POST|PUT|PATCH|DELETE) /'::text))
);

--
-- Name: plan_limits; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.plan_limits (
    plan text NOT NULL,
    "window" text NOT NULL,
    algorithm text DEFAULT 'fixed'::text NOT NULL,
    "limit" integer NOT NULL,
    burst integer,
    CONSTRAINT plan_limits_algorithm_check CHECK ((algorithm = ANY (ARRAY['fixed'::text, 'bucket'::text]))),
    CONSTRAINT plan_limits_check CHECK (((burst IS NULL) OR (((burst >= 1) AND (burst <= 2000000000)) AND (algorithm = 'bucket'::text)))),
    CONSTRAINT plan_limits_limit_check CHECK ((("limit" >= 1) AND ("limit" <= 2000000000))),
    CONSTRAINT plan_limits_window_check CHECK (("window" = ANY (ARRAY['second'::text, 'minute'::text, 'hour'::text, 'day'::text, 'month'::text])))
);

--
-- Name: plans; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.plans (
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT plans_name_check CHECK ((name ~ '^[a-z0-9-]{1,40}$'::text))
);

--
-- Name: service_clock; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.service_clock (
    at timestamp with time zone NOT NULL,
    one boolean DEFAULT true NOT NULL,
    CONSTRAINT service_clock_one_check CHECK (one)
);

--
-- Name: service_secrets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.service_secrets (
    name text NOT NULL,
    value bytea NOT NULL
);

--
-- Name: webhook_deliveries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_deliveries (
    endpoint_id bigint NOT NULL,
    event_id bigint NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    next_attempt_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    last_attempt_at timestamp with time zone,
    last_status integer,
    last_response text,
    finished_at timestamp with time zone,
    CONSTRAINT webhook_deliveries_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'delivered'::text, 'failed'::text])))
);

--
-- Name: webhook_endpoints; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_endpoints (
    id bigint NOT NULL,
    url text NOT NULL,
    events text[] NOT NULL,
    description text,
    secret text NOT NULL,
    previous_secret text,
    previous_secret_until timestamp with time zone,
    paused_at timestamp with time zone,
    failing_since timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT webhook_endpoints_check CHECK (((previous_secret IS NULL) = (previous_secret_until IS NULL))),
    CONSTRAINT webhook_endpoints_description_check CHECK ((length(description) <= 200)),
    CONSTRAINT webhook_endpoints_events_check CHECK ((cardinality(events) > 0)),
    CONSTRAINT webhook_endpoints_url_check CHECK ((length(url) <= 2048))
);

--
-- Name: webhook_endpoints_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.webhook_endpoints ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.webhook_endpoints_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: webhook_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_events (
    id bigint NOT NULL,
    type text NOT NULL,
    at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    account_id bigint,
    data jsonb NOT NULL
);

--
-- Name: webhook_events_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.webhook_events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.webhook_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Data for Name: account_credits; Type: TABLE DATA; Schema: public; Owner: -
--

--
-- Data for Name: account_limit_overrides; Type: TABLE DATA; Schema: public; Owner: -
--

--
-- Data for Name: accounts; Type: TABLE DATA; Schema: public; Owner: -
--

--
-- Data for Name: api_key_bans; Type: TABLE DATA; Schema: public; Owner: -
--

--
-- Data for Name: api_key_usage; Type: TABLE DATA; Schema: public; Owner: -
--

--
-- Data for Name: api_keys; Type: TABLE DATA; Schema: public; Owner: -
--

--
-- Data for Name: audit_events; Type: TABLE DATA; Schema: public; Owner: -
--

--
-- Data for Name: audit_retention; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.audit_retention VALUES (true, 400);

--
-- Data for Name: idempotency_keys; Type: TABLE DATA; Schema: public; Owner: -
--

--
-- Data for Name: kysely_migration; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.kysely_migration VALUES ('0001_pets', '2026-11-29T17:11:06.965Z');
INSERT INTO public.kysely_migration VALUES ('0002_api_keys', '2026-11-29T17:11:07.045Z');
INSERT INTO public.kysely_migration VALUES ('0003_rate_limits', '2026-11-29T17:11:07.112Z');
INSERT INTO public.kysely_migration VALUES ('0004_idempotency_keys', '2026-11-29T17:11:07.129Z');
INSERT INTO public.kysely_migration VALUES ('0005_rate_limit_returns', '2026-11-29T17:11:07.140Z');
INSERT INTO public.kysely_migration VALUES ('0006_api_key_usage', '2026-11-29T17:11:07.173Z');
INSERT INTO public.kysely_migration VALUES ('0007_rate_limit_counters_logged', '2026-11-29T17:11:07.210Z');
INSERT INTO public.kysely_migration VALUES ('0008_idempotency_keys_without_claims', '2026-11-29T17:11:07.218Z');
INSERT INTO public.kysely_migration VALUES ('0009_service_role', '2026-11-29T17:11:07.248Z');
INSERT INTO public.kysely_migration VALUES ('0010_service_role_draws_pet_ids', '2026-11-29T17:11:07.249Z');
INSERT INTO public.kysely_migration VALUES ('0011_count_requests_function', '2026-11-29T17:11:07.256Z');
INSERT INTO public.kysely_migration VALUES ('0012_client_connection_check', '2026-11-29T17:11:07.262Z');
INSERT INTO public.kysely_migration VALUES ('0013_count_requests_in_milliseconds', '2026-11-29T17:11:07.265Z');
INSERT INTO public.kysely_migration VALUES ('0014_api_key_hash_notifications', '2026-11-29T17:11:07.291Z');
INSERT INTO public.kysely_migration VALUES ('0015_accounts_scopes_audit_events', '2026-11-29T17:11:07.460Z');
INSERT INTO public.kysely_migration VALUES ('0016_count_requests_per_account', '2026-11-29T17:11:07.468Z');
INSERT INTO public.kysely_migration VALUES ('0017_hourly_usage_and_outbox', '2026-11-29T17:11:07.524Z');
INSERT INTO public.kysely_migration VALUES ('0018_plans_as_data', '2026-11-29T17:11:07.647Z');
INSERT INTO public.kysely_migration VALUES ('0019_count_units_on_one_clock', '2026-11-29T17:11:07.730Z');
INSERT INTO public.kysely_migration VALUES ('0020_operators', '2026-11-29T17:11:07.765Z');
INSERT INTO public.kysely_migration VALUES ('0021_audit_trail_appended_by_function', '2026-11-29T17:11:07.811Z');
INSERT INTO public.kysely_migration VALUES ('0023_webhook_endpoints', '2026-11-29T17:11:07.843Z');
INSERT INTO public.kysely_migration VALUES ('0024_webhook_deliveries', '2026-11-29T17:11:07.901Z');
INSERT INTO public.kysely_migration VALUES ('0025_webhook_housekeeping', '2026-11-29T17:11:07.920Z');
INSERT INTO public.kysely_migration VALUES ('0026_key_rotation_grace_allowlists_metadata', '2026-11-29T17:11:07.951Z');
INSERT INTO public.kysely_migration VALUES ('0027_keys_manage_scope', '2026-11-29T17:11:07.963Z');
INSERT INTO public.kysely_migration VALUES ('0028_count_units_set_based', '2026-11-29T17:11:08.008Z');

--
-- Data for Name: kysely_migration_lock; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.kysely_migration_lock VALUES ('migration_lock', 0);

--
-- Data for Name: limit_counters; Type: TABLE DATA; Schema: public; Owner: -
--

--
-- Data for Name: operators; Type: TABLE DATA; Schema: public; Owner: -
--

--
-- Data for Name: pets; Type: TABLE DATA; Schema: public; Owner: -
--

--
-- Data for Name: plan_costs; Type: TABLE DATA; Schema: public; Owner: -
--

--
-- Data for Name: plan_limits; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.plan_limits VALUES ('free', 'minute', 'fixed', 60, NULL);
INSERT INTO public.plan_limits VALUES ('pro', 'minute', 'fixed', 300, NULL);
INSERT INTO public.plan_limits VALUES ('business', 'minute', 'fixed', 1000, NULL);
INSERT INTO public.plan_limits VALUES ('free', 'day', 'fixed', 1000, NULL);
INSERT INTO public.plan_limits VALUES ('pro', 'day', 'fixed', 10000, NULL);
INSERT INTO public.plan_limits VALUES ('business', 'day', 'fixed', 100000, NULL);
INSERT INTO public.plan_limits VALUES ('enterprise', 'minute', 'fixed', 1000, NULL);
INSERT INTO public.plan_limits VALUES ('enterprise', 'day', 'fixed', 100000, NULL);

--
-- Data for Name: plans; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.plans VALUES ('free', '2026-11-29 17:11:06.909576+00', '2026-11-29 17:11:06.909576+00');
INSERT INTO public.plans VALUES ('pro', '2026-11-29 17:11:06.909576+00', '2026-11-29 17:11:06.909576+00');
INSERT INTO public.plans VALUES ('business', '2026-11-29 17:11:06.909576+00', '2026-11-29 17:11:06.909576+00');
INSERT INTO public.plans VALUES ('enterprise', '2026-11-29 17:11:06.909576+00', '2026-11-29 17:11:06.909576+00');

--
-- Data for Name: service_clock; Type: TABLE DATA; Schema: public; Owner: -
--

--
-- Data for Name: service_secrets; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.service_secrets VALUES ('cursor', '\xb80710dd03fb09397173b7c443fedc5103d66c3c860de2a1ce6e8ad9d81233c3');

--
-- Data for Name: webhook_deliveries; Type: TABLE DATA; Schema: public; Owner: -
--

--
-- Data for Name: webhook_endpoints; Type: TABLE DATA; Schema: public; Owner: -
--

--
-- Data for Name: webhook_events; Type: TABLE DATA; Schema: public; Owner: -
--

--
-- Name: accounts_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.accounts_id_seq', 1, false);

--
-- Name: api_keys_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.api_keys_id_seq', 1, false);

--
-- Name: audit_events_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.audit_events_id_seq', 1, false);

--
-- Name: operators_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.operators_id_seq', 1, false);

--
-- Name: pets_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.pets_id_seq', 1, false);

--
-- Name: webhook_endpoints_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.webhook_endpoints_id_seq', 1, false);

--
-- Name: webhook_events_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.webhook_events_id_seq', 1, false);

--
-- Name: account_credits account_credits_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.account_credits
    ADD CONSTRAINT account_credits_pkey PRIMARY KEY (account_id);

--
-- Name: account_limit_overrides account_limit_overrides_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.account_limit_overrides
    ADD CONSTRAINT account_limit_overrides_pkey PRIMARY KEY (account_id, "window");

--
-- Name: accounts accounts_external_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.accounts
    ADD CONSTRAINT accounts_external_id_key UNIQUE (external_id);

--
-- Name: accounts accounts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.accounts
    ADD CONSTRAINT accounts_pkey PRIMARY KEY (id);

--
-- Name: api_key_bans api_key_bans_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_key_bans
    ADD CONSTRAINT api_key_bans_pkey PRIMARY KEY (api_key_id);

--
-- Name: api_key_usage api_key_usage_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_key_usage
    ADD CONSTRAINT api_key_usage_pkey PRIMARY KEY (api_key_id, hour);

--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (id);

--
-- Name: api_keys api_keys_prefix_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_prefix_key UNIQUE (prefix);

--
-- Name: api_keys api_keys_secret_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_secret_hash_key UNIQUE (secret_hash);

--
-- Name: audit_events audit_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_events
    ADD CONSTRAINT audit_events_pkey PRIMARY KEY (id);

--
-- Name: audit_retention audit_retention_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_retention
    ADD CONSTRAINT audit_retention_pkey PRIMARY KEY (only_row);

--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (api_key_id, key);

--
-- Name: kysely_migration_lock kysely_migration_lock_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.kysely_migration_lock
    ADD CONSTRAINT kysely_migration_lock_pkey PRIMARY KEY (id);

--
-- Name: kysely_migration kysely_migration_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.kysely_migration
    ADD CONSTRAINT kysely_migration_pkey PRIMARY KEY (name);

--
-- Name: limit_counters limit_counters_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.limit_counters
    ADD CONSTRAINT limit_counters_pkey PRIMARY KEY (account_id, "window");

--
-- Name: operators operators_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operators
    ADD CONSTRAINT operators_name_key UNIQUE (name);

--
-- Name: operators operators_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operators
    ADD CONSTRAINT operators_pkey PRIMARY KEY (id);

--
-- Name: operators operators_token_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operators
    ADD CONSTRAINT operators_token_hash_key UNIQUE (token_hash);

--
-- Name: pets pets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pets
    ADD CONSTRAINT pets_pkey PRIMARY KEY (id);

--
-- Name: plan_costs plan_costs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.plan_costs
    ADD CONSTRAINT plan_costs_pkey PRIMARY KEY (plan, route);

--
-- Name: plan_limits plan_limits_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.plan_limits
    ADD CONSTRAINT plan_limits_pkey PRIMARY KEY (plan, "window");

--
-- Name: plans plans_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.plans
    ADD CONSTRAINT plans_pkey PRIMARY KEY (name);

--
-- Name: service_clock service_clock_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.service_clock
    ADD CONSTRAINT service_clock_pkey PRIMARY KEY (one);

--
-- Name: service_secrets service_secrets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.service_secrets
    ADD CONSTRAINT service_secrets_pkey PRIMARY KEY (name);

--
-- Name: webhook_deliveries webhook_deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (endpoint_id, event_id);

--
-- Name: webhook_endpoints webhook_endpoints_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (id);

--
-- Name: webhook_events webhook_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_events
    ADD CONSTRAINT webhook_events_pkey PRIMARY KEY (id);

--
-- Name: api_key_usage_hour_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_key_usage_hour_idx ON public.api_key_usage USING btree (hour, api_key_id);

--
-- Name: api_keys_account_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_keys_account_id_idx ON public.api_keys USING btree (account_id);

--
-- Name: api_keys_previous_secret_hash_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX api_keys_previous_secret_hash_idx ON public.api_keys USING btree (previous_secret_hash) WHERE (previous_secret_hash IS NOT NULL);

--
-- Name: audit_events_account_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_events_account_idx ON public.audit_events USING btree (account_id, id);

--
-- Name: audit_events_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_events_at_idx ON public.audit_events USING btree (at);

--
-- Name: audit_events_key_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_events_key_idx ON public.audit_events USING btree (key_id, id);

--
-- Name: idempotency_keys_expires_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idempotency_keys_expires_at_idx ON public.idempotency_keys USING btree (expires_at);

--
-- Name: pets_status_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX pets_status_id_idx ON public.pets USING btree (status, id);

--
-- Name: webhook_deliveries_event_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_event_id_idx ON public.webhook_deliveries USING btree (event_id);

--
-- Name: webhook_deliveries_finished_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_finished_idx ON public.webhook_deliveries USING btree (finished_at) WHERE (status <> 'pending'::text);

--
-- Name: webhook_deliveries_pending_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_pending_idx ON public.webhook_deliveries USING btree (endpoint_id, event_id) WHERE (status = 'pending'::text);

--
-- Name: webhook_events_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_events_at_idx ON public.webhook_events USING btree (at);

--
-- Name: account_limit_overrides account_limit_overrides_changed; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER account_limit_overrides_changed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.account_limit_overrides FOR EACH STATEMENT EXECUTE FUNCTION public.notify_api_keys_changed();

--
-- Name: accounts accounts_changed; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER accounts_changed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.accounts FOR EACH STATEMENT EXECUTE FUNCTION public.notify_api_keys_changed();

--
-- Name: api_keys api_key_added; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER api_key_added AFTER INSERT OR UPDATE OF secret_hash ON public.api_keys FOR EACH ROW EXECUTE FUNCTION public.notify_api_key_added();

--
-- Name: api_keys api_keys_changed; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER api_keys_changed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.api_keys FOR EACH STATEMENT EXECUTE FUNCTION public.notify_api_keys_changed();

--
-- Name: audit_events audit_events_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_events_append_only BEFORE UPDATE ON public.audit_events FOR EACH ROW EXECUTE FUNCTION public.refuse_audit_event_update();

--
-- Name: plan_costs plan_costs_changed; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER plan_costs_changed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.plan_costs FOR EACH STATEMENT EXECUTE FUNCTION public.notify_api_keys_changed();

--
-- Name: plan_limits plan_limits_changed; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER plan_limits_changed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.plan_limits FOR EACH STATEMENT EXECUTE FUNCTION public.notify_api_keys_changed();

--
-- Name: plans plans_changed; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER plans_changed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.plans FOR EACH STATEMENT EXECUTE FUNCTION public.notify_api_keys_changed();

--
-- Name: webhook_events webhook_events_fan_out; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER webhook_events_fan_out AFTER INSERT ON public.webhook_events FOR EACH ROW EXECUTE FUNCTION public.fan_out_webhook_event();

--
-- Name: account_credits account_credits_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.account_credits
    ADD CONSTRAINT account_credits_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;

--
-- Name: account_limit_overrides account_limit_overrides_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.account_limit_overrides
    ADD CONSTRAINT account_limit_overrides_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;

--
-- Name: accounts accounts_plan_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.accounts
    ADD CONSTRAINT accounts_plan_fkey FOREIGN KEY (plan) REFERENCES public.plans(name);

--
-- Name: api_key_bans api_key_bans_api_key_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_key_bans
    ADD CONSTRAINT api_key_bans_api_key_id_fkey FOREIGN KEY (api_key_id) REFERENCES public.api_keys(id) ON DELETE CASCADE;

--
-- Name: api_key_usage api_key_usage_api_key_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_key_usage
    ADD CONSTRAINT api_key_usage_api_key_id_fkey FOREIGN KEY (api_key_id) REFERENCES public.api_keys(id) ON DELETE CASCADE;

--
-- Name: api_keys api_keys_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

--
-- Name: idempotency_keys idempotency_keys_api_key_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.idempotency_keys
    ADD CONSTRAINT idempotency_keys_api_key_id_fkey FOREIGN KEY (api_key_id) REFERENCES public.api_keys(id) ON DELETE CASCADE;

--
-- Name: plan_costs plan_costs_plan_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.plan_costs
    ADD CONSTRAINT plan_costs_plan_fkey FOREIGN KEY (plan) REFERENCES public.plans(name) ON UPDATE CASCADE ON DELETE CASCADE;

--
-- Name: plan_limits plan_limits_plan_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.plan_limits
    ADD CONSTRAINT plan_limits_plan_fkey FOREIGN KEY (plan) REFERENCES public.plans(name) ON UPDATE CASCADE ON DELETE CASCADE;

--
-- Name: webhook_deliveries webhook_deliveries_endpoint_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES public.webhook_endpoints(id) ON DELETE CASCADE;

--
-- Name: webhook_deliveries webhook_deliveries_event_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES public.webhook_events(id) ON DELETE CASCADE;

--
-- Name: FUNCTION append_audit_event(actor text, action text, account_id bigint, key_id bigint, changes jsonb, request_id text, on_behalf_of text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.append_audit_event(actor text, action text, account_id bigint, key_id bigint, changes jsonb, request_id text, on_behalf_of text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.append_audit_event(actor text, action text, account_id bigint, key_id bigint, changes jsonb, request_id text, on_behalf_of text) TO animal_store_app;

--
-- Name: FUNCTION delete_audit_events_older_than(days integer); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.delete_audit_events_older_than(days integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.delete_audit_events_older_than(days integer) TO animal_store_app;

--
-- Name: TABLE account_credits; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.account_credits TO animal_store_app;

--
-- Name: TABLE account_limit_overrides; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.account_limit_overrides TO animal_store_app;

--
-- Name: TABLE accounts; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT,UPDATE ON TABLE public.accounts TO animal_store_app;

--
-- Name: TABLE api_key_bans; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.api_key_bans TO animal_store_app;

--
-- Name: TABLE api_key_usage; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.api_key_usage TO animal_store_app;

--
-- Name: TABLE api_keys; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT,UPDATE ON TABLE public.api_keys TO animal_store_app;

--
-- Name: TABLE audit_events; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.audit_events TO animal_store_app;

--
-- Name: TABLE audit_retention; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.audit_retention TO animal_store_app;

--
-- Name: TABLE idempotency_keys; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.idempotency_keys TO animal_store_app;

--
-- Name: TABLE kysely_migration; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.kysely_migration TO animal_store_app;

--
-- Name: TABLE limit_counters; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.limit_counters TO animal_store_app;

--
-- Name: TABLE operators; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT,UPDATE ON TABLE public.operators TO animal_store_app;

--
-- Name: TABLE pets; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT ON TABLE public.pets TO animal_store_app;

--
-- Name: SEQUENCE pets_id_seq; Type: ACL; Schema: public; Owner: -
--

GRANT USAGE ON SEQUENCE public.pets_id_seq TO animal_store_app;

--
-- Name: TABLE plan_costs; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.plan_costs TO animal_store_app;

--
-- Name: TABLE plan_limits; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.plan_limits TO animal_store_app;

--
-- Name: TABLE plans; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT,UPDATE ON TABLE public.plans TO animal_store_app;

--
-- Name: TABLE service_clock; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.service_clock TO animal_store_app;

--
-- Name: TABLE service_secrets; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.service_secrets TO animal_store_app;

--
-- Name: TABLE webhook_deliveries; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.webhook_deliveries TO animal_store_app;

--
-- Name: TABLE webhook_endpoints; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.webhook_endpoints TO animal_store_app;

--
-- Name: TABLE webhook_events; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT,DELETE ON TABLE public.webhook_events TO animal_store_app;
